// A SeriesStore in a fresh temporary directory, removed at teardown.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { SeriesStore, type SeriesStoreOptions, type PointBatch } from '../../src/storage/series-store.js';

export async function tempStore(t: { teardown(fn: () => unknown): void }, options: SeriesStoreOptions = {}): Promise<{ store: SeriesStore; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'series-store-'));
  const store = SeriesStore.open(join(dir, 'series'), options);
  t.teardown(async () => { await store.close(); await rm(dir, { recursive: true, force: true }); });
  return { store, dir };
}

export const newId = (): string => randomUUID();
export const WHO = { principal: 'test-principal' };

/** A float64 batch from parallel plain arrays. */
export function f64Batch(series: string, times: bigint[], values: number[], quality?: number[]): PointBatch {
  return { series, times: BigInt64Array.from(times), values: Float64Array.from(values), quality: Uint32Array.from(quality ?? times.map(() => 192)) };
}

export const T0 = 1_700_000_000_000_000_000n;
export const SEC = 1_000_000_000n;
