// The series env's page size: a new store is created with 16 KiB pages and seals chunks that
// fill one overflow page each; a store created with 4 KiB pages (before 2026-11-27) keeps
// them, and its budget with them, and a repacked copy keeps the source's pages.
import t from 'tap';
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERIES_PAGE_SIZE, largestInlineValue, openSeriesEnv, overflowCapacity, overflowPagesOf } from '../../src/storage/series-env.js';
import { CHUNK_BYTE_BUDGET } from '../../src/storage/encoding/chunk.js';
import { sealBudgetFor } from '../../src/storage/seal.js';
import { SeriesStore, listChunks, readRaw } from '../../src/storage/series-store.js';
import { repackCopy } from '../../src/storage/repack-copy.js';
import { newId, WHO, T0, SEC } from '../helpers/series-store.js';

const range = { startNs: T0 - SEC, endNs: T0 + 1_000_000n * SEC };

/** n points at 1 s with ms jitter, a 0.01-resolution wander: ~1 B a point sealed. */
function wander(id: string, n: number): { series: string; times: BigInt64Array; values: Float64Array; quality: Uint32Array } {
  const times = new BigInt64Array(n), values = new Float64Array(n), quality = new Uint32Array(n).fill(192);
  for (let j = 0; j < n; j++) {
    times[j] = T0 + BigInt(j) * SEC + BigInt((j * 7) % 8) * 1_000_000n;
    values[j] = Math.round((50 + 10 * Math.sin(j / 50) + ((j * 13) % 17) / 100) * 100) / 100;
  }
  return { series: id, times, values, quality };
}

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'page-size-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes `n` points to a new series, seals every head and checks they read back exactly. */
async function loadOne(t: Test, store: SeriesStore, n: number): Promise<string> {
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const all = wander(id, n);
  for (let a = 0; a < n; a += 5_000) {
    await store.write([{ series: id, times: all.times.subarray(a, a + 5_000), values: all.values.subarray(a, a + 5_000), quality: all.quality.subarray(a, a + 5_000) }], WHO);
  }
  await store.sealHeads(0);
  const page = store.read((v) => readRaw(v, id, { ...range, limit: 1_000_000 }));
  t.equal(page.count, n, 'every point reads back');
  t.same([...page.ts], [...all.times], 'times exact');
  t.same([...page.f64!.subarray(0, n)], [...all.values], 'values exact');
  return id;
}

/** Sealed chunks but the last: each must fill one overflow page of `pageSize`. */
function checkFullChunks(t: Test, store: SeriesStore, id: string, pageSize: number): void {
  const sealed = store.read((v) => listChunks(v, id, range)).filter((c) => c.sealed);
  const full = sealed.slice(0, -1);
  t.ok(full.length >= 2, `${full.length} full chunks`);
  const budget = overflowCapacity(pageSize);
  t.ok(full.every((c) => c.bytes <= budget && c.bytes >= 0.95 * budget), `each fills its ${pageSize}-byte page (${full.map((c) => c.bytes).join(', ')})`);
  // the last chunk of a lone series is stored plain (nothing to share a pack with): in the
  // leaf page when small enough, else in overflow pages of its own
  const overflow = (store.env.chunks.getStats() as { overflowPages: number }).overflowPages;
  const last = sealed[sealed.length - 1].bytes;
  const lastPages = last > largestInlineValue(pageSize) ? overflowPagesOf(last, pageSize) : 0;
  t.equal(overflow, full.length + lastPages, `one overflow page a full chunk (${overflow} pages)`);
}

t.test('a new store has 16 KiB pages and seals chunks that fill one page each', async (t) => {
  const dir = await tempDir(t);
  const store = SeriesStore.open(join(dir, 'series'));
  t.teardown(() => store.close());
  t.equal(store.env.pageSize, 16384, 'the env file has 16 KiB pages');
  // the codec's default budget (encodeChunkPrefix, bench:codec) is what a new store seals to
  t.equal(sealBudgetFor(SERIES_PAGE_SIZE).chunkBytes, CHUNK_BYTE_BUDGET, 'the codec budget is one page of a new env');
  const id = await loadOne(t, store, 60_000);
  checkFullChunks(t, store, id, SERIES_PAGE_SIZE);
});

t.test('a store created with 4 KiB pages keeps them and its 4 KiB chunks; a repacked copy too', async (t) => {
  const dir = await tempDir(t);
  const seriesDir = join(dir, 'series');
  // an env file as stores created before 2026-11-27 have it
  const old = openSeriesEnv(seriesDir, { pageSize: 4096 });
  t.equal(old.pageSize, 4096);
  await old.close();
  const store = SeriesStore.open(seriesDir);
  t.teardown(() => store.close());
  t.equal(store.env.pageSize, 4096, 'opening with the new default keeps the file\'s pages');
  const id = await loadOne(t, store, 20_000);
  checkFullChunks(t, store, id, 4096);
  const copyDir = join(dir, 'copy');
  await repackCopy(store.env, copyDir);
  const copy = openSeriesEnv(copyDir, { readOnly: true });
  t.teardown(() => copy.close());
  t.equal(copy.pageSize, 4096, 'the packed copy keeps 4 KiB pages');
  t.equal((copy.chunks.getStats() as { overflowPages: number }).overflowPages, (store.env.chunks.getStats() as { overflowPages: number }).overflowPages, 'and its chunks their pages');
});
