// One timed JSON POST for the benchmarks that seed the model over HTTP and time their queries:
// the time is to the full body at the client, and an answer other than 200/201 stops the bench.
import { stringifyJson } from '../src/json/json.js';

export async function timedPost(url: string, body: unknown): Promise<{ ms: number; json: unknown }> {
  const t0 = process.hrtime.bigint();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stringifyJson(body) });
  const text = await res.text();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (res.status !== 200 && res.status !== 201) throw new Error(`${url}: ${res.status} ${text.slice(0, 300)}`);
  return { ms, json: JSON.parse(text) };
}
