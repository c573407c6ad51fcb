// Sealing on the seal thread (seal-offload.ts, seal-thread.ts): full heads are encoded off the
// writer's thread and their chunks stored by a later transaction. Every point stays readable and
// exact throughout, chunks fill their page as when the writer seals, and a reply for a head whose
// front changed meanwhile is dropped, never stored over the change.
import t from 'tap';
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listChunks, readRaw } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, T0, SEC } from '../helpers/series-store.js';
import { sealBudgetFor } from '../../src/storage/seal.js';
import { SeriesStore, type PointBatch } from '../../src/storage/series-store.js';

const range = { startNs: T0 - SEC, endNs: T0 + 1_000_000n * SEC };

/** A 4 KiB store's budget (4,072 B): several chunks a series from runs a test can afford. */
const budget = sealBudgetFor(4096);

/** Points [from, to) of series k: 1 s cadence with ms jitter, a 0.01-resolution wander (never -0). */
function batch(id: string, k: number, from: number, to: number): PointBatch {
  const n = to - from;
  const times = new BigInt64Array(n), values = new Float64Array(n), quality = new Uint32Array(n).fill(192);
  for (let i = 0; i < n; i++) {
    const j = from + i;
    times[i] = T0 + BigInt(j) * SEC + BigInt((j * 7) % 8) * 1_000_000n;
    values[i] = Math.round((k * 100 + 50 + 10 * Math.sin(j / 50) + ((j * 13) % 17) / 100) * 100) / 100;
  }
  return { series: id, times, values, quality };
}

const chunksOf = (store: SeriesStore, id: string) => store.read((v) => listChunks(v, id, range));

function checkExact(t: Test, store: SeriesStore, id: string, k: number, count: number, what: string): void {
  const page = store.read((v) => readRaw(v, id, { ...range, limit: 1_000_000 }));
  const want = batch(id, k, 0, count);
  t.equal(page.count, count, `${what}: every point readable`);
  t.same([...page.ts], [...want.times], `${what}: times exact and in order`);
  t.same([...page.f64!.subarray(0, count)], [...(want.values as Float64Array)], `${what}: values exact`);
}

t.test('full heads seal on the thread; points stay exact; chunks fill their budget', async (t) => {
  const { store } = await tempStore(t, { sealThread: true, groupWindowMs: 0, seal: budget });
  const ids = Array.from({ length: 20 }, () => newId());
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const per = 500, rounds = 40;
  for (let r = 0; r < rounds; r++) {
    await store.write(ids.map((id, k) => batch(id, k, r * per, (r + 1) * per)), WHO);
    // readable at every moment, whether the chunks are back yet or not
    if (r % 13 === 5) checkExact(t, store, ids[0], 0, (r + 1) * per, `after round ${r}`);
  }
  await store.settleSeals();
  const stats = store.sealThreadStats()!;
  t.equal(stats.pending, 0, 'nothing left on the thread');
  t.equal(stats.failures, 0, 'the thread refused nothing');
  t.ok(stats.installedChunks >= ids.length * 2, `chunks came back from the thread: ${stats.installedChunks}`);
  for (const [k, id] of ids.entries()) {
    const chunks = chunksOf(store, id);
    const sealed = chunks.filter((c) => c.sealed);
    t.ok(sealed.length >= 2, `series ${k}: ${sealed.length} sealed chunks`);
    t.ok(sealed.every((c) => c.bytes >= budget.chunkBytes * 0.95 && c.bytes <= budget.chunkBytes), `series ${k}: sealed chunks fill their budget (${sealed.map((c) => c.bytes).join(', ')})`);
    const open = chunks.filter((c) => !c.sealed).reduce((a, c) => a + c.count, 0);
    t.ok(open < sealed[0].count * 1.05, `series ${k}: only about a chunk's worth left open (${open})`);
    if (k < 3) checkExact(t, store, id, k, rounds * per, `series ${k}`);
  }
});

t.test('more full heads than copies in flight: the rest wait for their next append, none is lost', async (t) => {
  const { store } = await tempStore(t, { sealThread: true, groupWindowMs: 0, seal: budget });
  const ids = Array.from({ length: 300 }, () => newId()); // MAX_SEALS_IN_FLIGHT is 256
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const per = 1_000, rounds = 6;
  for (let r = 0; r < rounds; r++) await store.write(ids.map((id, k) => batch(id, k, r * per, (r + 1) * per)), WHO);
  await store.settleSeals();
  // Heads that found every copy slot taken wait for their next append. Whether the last round
  // was that append depends on how fast the thread answered, so one more round (the copies
  // are all back now) makes the outcome the same on a quiet box and a loaded one.
  await store.write(ids.map((id, k) => batch(id, k, rounds * per, rounds * per + 10)), WHO);
  await store.settleSeals();
  const sealedPerSeries = ids.map((id) => chunksOf(store, id).filter((c) => c.sealed).length);
  t.ok(sealedPerSeries.every((n) => n >= 1), `every series sealed at least one chunk (min ${Math.min(...sealedPerSeries)})`);
  for (const k of [0, 150, 299]) checkExact(t, store, ids[k], k, rounds * per + 10, `series ${k}`);
});

t.test('a reply for a head changed since its copy is dropped, and the head seals again', async (t) => {
  const { store } = await tempStore(t, { sealThread: true, groupWindowMs: 0, seal: budget });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  // a first write measures the series' bytes per point (until then no head counts as full)
  await store.write([batch(id, 1, 0, 1_000)], WHO);
  await store.settleSeals();
  t.equal(store.sealThreadStats()!.installedChunks, 0, 'a part-filled head stays open');
  // One transaction: the first batch fills the head (its copy goes to the thread), the second
  // rewrites a point inside the head, so the head's front is no longer what was copied.
  const full = batch(id, 1, 1_000, 12_000);
  const change: PointBatch = { series: id, times: full.times.slice(100, 101), values: Float64Array.of(-5.25), quality: Uint32Array.of(192) };
  await store.write([full, change], WHO);
  await store.settleSeals();
  const s1 = store.sealThreadStats()!;
  t.ok(s1.staleReplies >= 1, `the stale reply was dropped (${s1.staleReplies})`);
  // the next append copies the head again and its chunks are stored
  await store.write([batch(id, 1, 12_000, 12_100)], WHO);
  await store.settleSeals();
  const s2 = store.sealThreadStats()!;
  t.ok(s2.installedChunks > s1.installedChunks, 'the head sealed after the change');
  const page = store.read((v) => readRaw(v, id, { ...range, limit: 1_000_000 }));
  const want = batch(id, 1, 0, 12_100);
  (want.values as Float64Array)[1_100] = -5.25;
  t.equal(page.count, 12_100, 'every point readable once');
  t.same([...page.ts], [...want.times], 'times exact and in order');
  t.same([...page.f64!.subarray(0, page.count)], [...(want.values as Float64Array)], 'values exact, the rewrite included');
});

t.test('closing the store with chunks on the thread loses no point', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'seal-thread-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = SeriesStore.open(join(dir, 'series'), { sealThread: true, groupWindowMs: 0 });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.write([batch(id, 2, 0, 20_000)], WHO);
  await store.close();
  const again = SeriesStore.open(join(dir, 'series'));
  try {
    checkExact(t, again, id, 2, 20_000, 'after reopening');
  } finally {
    await again.close();
  }
});

t.test('qualities come back exact from the thread: one quality for every point (sent as none), a different one, and mixed', async (t) => {
  const { store } = await tempStore(t, { sealThread: true, groupWindowMs: 0, seal: budget });
  const ids = [newId(), newId(), newId()];
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const qualityOf = (k: number, j: number): number => (k === 0 ? 192 : k === 1 ? 64 : j % 7 === 3 ? 0 : 192);
  const per = 500, rounds = 24;
  for (let r = 0; r < rounds; r++) {
    await store.write(ids.map((id, k) => {
      const b = batch(id, k, r * per, (r + 1) * per);
      b.quality = Uint32Array.from({ length: per }, (_, i) => qualityOf(k, r * per + i));
      return b;
    }), WHO);
  }
  // full heads went to the thread as they filled; a quiet seal sends it the rest (whole heads)
  await store.settleSeals();
  await store.sealQuiet();
  await store.settleSeals();
  const stats = store.sealThreadStats()!;
  t.equal(stats.failures, 0, 'the thread refused nothing');
  t.ok(stats.installedChunks >= 6, `chunks came back from the thread: ${stats.installedChunks}`);
  for (const [k, id] of ids.entries()) {
    t.equal(store.headPoints(id), 0, `series ${k}: every point sealed`);
    const page = store.read((v) => readRaw(v, id, { ...range, limit: 1_000_000 }));
    t.equal(page.count, rounds * per, `series ${k}: every point readable`);
    const want = Array.from({ length: rounds * per }, (_, j) => qualityOf(k, j));
    t.same([...page.quality.subarray(0, page.count)], want, `series ${k}: qualities exact`);
  }
});
