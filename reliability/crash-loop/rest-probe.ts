// Reads one point back through the public REST contract (GET /v1/series/{uuid}/raw), the way
// an operator would see it after a restart.
import { parseJson } from '../../src/json/json.js';

export interface ReadPoint { value: number | bigint | boolean | string; quality: number }

/**
 * A service just restarted on a loaded box may be slow to answer its first reads: a read that
 * times out is tried again (up to `attempts`), and only an answer is judged.
 */
export async function readPointRest(url: string, series: string, t: bigint, asInt64 = false, attempts = 4): Promise<ReadPoint | null> {
  for (let i = 1; ; i++) {
    try {
      return await readOnce(url, series, t, asInt64);
    } catch (e) {
      if (i >= attempts || (e as Error).name !== 'TimeoutError') throw e;
    }
  }
}

async function readOnce(url: string, series: string, t: bigint, asInt64: boolean): Promise<ReadPoint | null> {
  const res = await fetch(`${url}/v1/series/${series}/raw?start_ns=${t}&end_ns=${t + 1n}&layout=columns`, { signal: AbortSignal.timeout(30_000) });
  if (res.status !== 200) throw new Error(`GET raw of ${series}: ${res.status} ${await res.text()}`);
  const body = parseJson(new Uint8Array(await res.arrayBuffer())) as { count: number; points: { value: unknown[]; quality: number[] } };
  if (body.count === 0) return null;
  let value = body.points.value[0] as number | bigint | boolean | string;
  if (asInt64 && typeof value === 'number') value = BigInt(value);
  return { value, quality: body.points.quality[0] };
}
