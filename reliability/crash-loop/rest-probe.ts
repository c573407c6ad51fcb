// Reads one point back through the public REST contract (GET /v1/series/{uuid}/raw), the way
// an operator would see it after a restart.
import { parseJson } from '../../src/json/json.js';

export interface ReadPoint { value: number | bigint | boolean | string; quality: number }

export async function readPointRest(url: string, series: string, t: bigint, asInt64 = false): Promise<ReadPoint | null> {
  const res = await fetch(`${url}/v1/series/${series}/raw?start_ns=${t}&end_ns=${t + 1n}&layout=columns`, { signal: AbortSignal.timeout(10_000) });
  if (res.status !== 200) throw new Error(`GET raw of ${series}: ${res.status} ${await res.text()}`);
  const body = parseJson(new Uint8Array(await res.arrayBuffer())) as { count: number; points: { value: unknown[]; quality: number[] } };
  if (body.count === 0) return null;
  let value = body.points.value[0] as number | bigint | boolean | string;
  if (asInt64 && typeof value === 'number') value = BigInt(value);
  return { value, quality: body.points.quality[0] };
}
