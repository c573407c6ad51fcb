import t from 'tap';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SeriesStore, readRaw, readRawAudit, listChunks } from '../../src/storage/series-store.js';
import { encodeChunk } from '../../src/storage/encoding/chunk.js';
import { seriesKey } from '../../src/storage/keys.js';
import { readHeadRecord, segmentKey } from '../../src/storage/head-record.js';
import { allocColumns } from '../../src/storage/point-runs.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const range = { startNs: T0 - 1000n * SEC, endNs: T0 + 1_000_000n * SEC };
const secs = (from: number, n: number) => Array.from({ length: n }, (_, i) => T0 + BigInt(from + i) * SEC);

function segmentsOf(store: SeriesStore, id: string): number {
  const s = seriesKey(id);
  return store.read((v) => [...v.env.segments.getKeys({ start: Buffer.concat([s, Buffer.alloc(8)]), end: Buffer.concat([s, Buffer.alloc(8, 0xff)]), transaction: v.txn })].length);
}

function allValues(store: SeriesStore, id: string): { ts: bigint[]; v: number[] } {
  const p = store.read((v) => readRaw(v, id, { ...range, limit: 1_000_000 }));
  return { ts: [...p.ts], v: [...p.f64!.subarray(0, p.count)] };
}

t.test('a commit stores its new points as one head segment and sealing deletes the segments it emptied', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 1000 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let k = 0; k < 3; k++) await store.write([f64Batch(id, secs(k * 600, 600), secs(k * 600, 600).map((_, i) => k * 600 + i))], WHO);
  // 1,800 points: one chunk of 1,000 sealed, 800 open in the head
  t.equal(store.headPoints(id), 800);
  t.equal(store.read((v) => listChunks(v, id, range)).filter((c) => c.sealed).length, 1);
  t.ok(segmentsOf(store, id) <= 2, 'the emptied segment was deleted, at most one partly sealed segment and the newest remain');
  t.same(allValues(store, id).v, Array.from({ length: 1800 }, (_, i) => i), 'chunks then head read back in order, no point twice');
  const sealed = await store.sealHeads();
  t.same(sealed, { series: 1, points: 800 });
  t.equal(segmentsOf(store, id), 0, 'no head segment is left once the head is sealed');
  t.equal(store.headPoints(id), 0);
  t.same(allValues(store, id).v, Array.from({ length: 1800 }, (_, i) => i));
});

t.test('tiny commits keep the head in a few segments and re-encode each point only a few times', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let i = 0; i < 300; i++) await store.write([f64Batch(id, [T0 + BigInt(i) * SEC], [i])], WHO);
  const n = segmentsOf(store, id);
  t.ok(n >= 1 && n <= 10, `300 one-point commits left ${n} segments`);
  t.equal(store.headPoints(id), 300);
  t.same(allValues(store, id).v, Array.from({ length: 300 }, (_, i) => i));
  // a merged segment is stored over the newest one it absorbs: commits that merge take no new
  // sequence number, and the newest segment stays the record's last one given (head-tail.ts reads it first)
  const rec = store.read((v) => readHeadRecord(v, seriesKey(id)))!;
  t.ok(rec.nextSeq < 300, `300 one-point commits took ${rec.nextSeq} sequence numbers`);
  t.ok(store.read((v) => v.env.segments.get(segmentKey(seriesKey(id), rec.nextSeq - 1), { transaction: v.txn })) !== undefined, 'the newest segment is at the last sequence number given');
});

t.test('a head written by one-point commits reads back whole through a fresh store on the same files', async (t) => {
  const { store, dir } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let i = 0; i < 100; i++) await store.write([f64Batch(id, [T0 + BigInt(i) * SEC], [i])], WHO);
  // a second store on the same files has an empty head cache: it loads the head from the segments
  const again = SeriesStore.open(join(dir, 'series'));
  t.equal(again.headPoints(id), 100);
  t.same(allValues(again, id).v, Array.from({ length: 100 }, (_, i) => i));
  await again.write([f64Batch(id, [T0 + 100n * SEC], [100])], WHO);
  t.same(allValues(again, id).v, Array.from({ length: 101 }, (_, i) => i), 'the reloaded head takes the next point after its segments');
  await again.close();
});

t.test('a second writer on the same environment is seen: neither writer overwrites the other with a stale cached head', async (t) => {
  const { store: a, dir } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const b = SeriesStore.open(`${dir}/series`, { seal: { chunkPoints: 100 } });
  t.teardown(() => b.close());
  const id = newId();
  await a.createSeries({ id, type: 'float64', writableClass: 'collector' });
  let next = 0;
  for (let round = 0; round < 6; round++) {
    for (const w of [a, b, b, a]) {
      const n = 17 + round * 5;
      const r = await w.write([f64Batch(id, secs(next, n), secs(next, n).map((_, i) => next + i))], WHO);
      t.equal(r.accepted, n);
      next += n;
    }
  }
  t.same(allValues(a, id).v, Array.from({ length: next }, (_, i) => i), 'every point of both writers, in order');
  t.ok(a.headCacheStats().loads > 1, 'the first writer reloaded the head the second one moved');
});

t.test('a group retried without a failing request leaves no half-applied head in the cache', async (t) => {
  const { store } = await tempStore(t, { groupWindowMs: 20 });
  const id = newId(), other = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.createSeries({ id: other, type: 'float64', writableClass: 'collector' });
  await store.write([f64Batch(id, secs(0, 10), secs(0, 10).map((_, i) => i))], WHO);
  // same group: a write to `id` (applied, then undone when the group aborts) and a conflicting creation
  const [w, c] = await Promise.allSettled([
    store.write([f64Batch(id, secs(10, 10), secs(10, 10).map((_, i) => 10 + i))], WHO),
    store.createSeries({ id: other, type: 'int64', writableClass: 'collector' }),
  ]);
  t.equal(c.status, 'rejected');
  t.equal(w.status === 'fulfilled' && w.value.accepted, 10, 'the retried write counts its points as new, not as already present');
  t.same(allValues(store, id).v, Array.from({ length: 20 }, (_, i) => i));
  t.equal(store.read((v) => readRawAudit(v, id, { ...range, limit: 10 })).length, 0, 'no audit entry from the undone attempt');
});

t.test('with a head cache too small to hold anything, every write reloads its head from the segments and nothing is lost', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 64 }, headCachePoints: 1 });
  const ids = [newId(), newId(), newId()];
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let k = 0; k < 20; k++) {
    await store.write(ids.map((id, j) => f64Batch(id, secs(k * 13, 13), secs(k * 13, 13).map((_, i) => j * 1e6 + k * 13 + i))), WHO);
  }
  // and a late point inside the head, after others were evicted
  await store.write([f64Batch(ids[0], [T0 + 255n * SEC + 500_000_000n], [-1])], WHO);
  for (const [j, id] of ids.entries()) {
    const want = Array.from({ length: 260 }, (_, i) => j * 1e6 + i);
    if (j === 0) want.splice(256, 0, -1);
    t.same(allValues(store, id).v, want, `series ${j}`);
  }
  t.ok(store.headCacheStats().loads >= 60, 'heads were reloaded');
});

t.test('a version-1 head record (the whole head as one chunk) is read, then rewritten as segments by the next write', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 1000 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const cols = allocColumns('float64', 50, T0);
  for (let i = 0; i < 50; i++) { cols.tsOffset[i] = i * 1e9; cols.f64![i] = i; cols.quality[i] = 192; }
  cols.count = 50;
  const body = encodeChunk(cols);
  const rec = Buffer.alloc(18 + body.length);
  rec[0] = 1; rec[1] = 0; rec.writeDoubleLE(Date.now(), 10); rec.set(body, 18);
  await store.env.heads.put(seriesKey(id), rec);
  t.same(allValues(store, id).v, Array.from({ length: 50 }, (_, i) => i), 'readers see the version-1 head');
  await store.write([f64Batch(id, secs(50, 10), secs(50, 10).map((_, i) => 50 + i))], WHO);
  t.equal(store.env.heads.get(seriesKey(id))![0], 2, 'the record is version 2 now');
  t.equal(store.headPoints(id), 60);
  t.same(allValues(store, id).v, Array.from({ length: 60 }, (_, i) => i));
});

t.test('disk usage reports the file, its live pages and a compacted copy no larger than the live pages', async (t) => {
  const { store, dir } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let k = 0; k < 20; k++) await store.write([f64Batch(id, secs(k * 1000, 1000), secs(k * 1000, 1000).map((_, i) => Math.round(Math.sin(k * 1000 + i) * 100) / 10))], WHO);
  await store.sealHeads();
  const d = await store.diskUsage();
  t.ok(d.liveBytes > 0 && d.liveBytes <= d.usedToHighWaterBytes && d.usedToHighWaterBytes <= d.fileBytes, JSON.stringify(d));
  t.ok(d.tables.chunks > 0 && d.tables['head-segments'] <= d.pageSize, 'chunks hold the data; no head segment pages once sealed');
  const { size } = await stat(await store.compactCopy(`${dir}/compact`));
  t.ok(size <= d.liveBytes, `compacted copy ${size} B <= live ${d.liveBytes} B`);
});

t.test('the head cache keeps its capacity bound as heads grow after they were cached', async (t) => {
  // new heads start with 256 points of capacity: three fit in 1,000, a fourth does not
  const { store } = await tempStore(t, { headCachePoints: 1000 });
  const ids = Array.from({ length: 10 }, () => newId());
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (const id of ids) await store.write([f64Batch(id, secs(0, 100), secs(0, 100).map((_, i) => i))], WHO);
  t.equal(store.headCacheStats().heads, 3, 'the three most recent heads stay');
  // the most recent head grows past the whole bound: the others go first, then it
  await store.write([f64Batch(ids[9], secs(100, 2000), secs(100, 2000).map((_, i) => 100 + i))], WHO);
  t.equal(store.headCacheStats().heads, 0);
  await store.write([f64Batch(ids[0], secs(100, 10), secs(100, 10).map((_, i) => 100 + i))], WHO);
  t.equal(store.headCacheStats().heads, 1, 'a head loaded again is counted again');
  t.same(allValues(store, ids[9]).v, Array.from({ length: 2100 }, (_, i) => i));
  t.same(allValues(store, ids[0]).v, Array.from({ length: 110 }, (_, i) => i));
});

t.test('a head written again since it was cached outlasts an older head that was not (second chance)', async (t) => {
  // three new heads of 256 points fit in 800, a fourth does not
  const { store } = await tempStore(t, { headCachePoints: 800 });
  const [a, b, c, d] = Array.from({ length: 4 }, () => newId());
  for (const id of [a, b, c, d]) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (const id of [a, b, c]) await store.write([f64Batch(id, secs(0, 10), secs(0, 10).map((_, i) => i))], WHO);
  await store.write([f64Batch(a, secs(10, 10), secs(10, 10).map((_, i) => 10 + i))], WHO);
  const loads = store.headCacheStats().loads;
  await store.write([f64Batch(d, secs(0, 10), secs(0, 10).map((_, i) => i))], WHO);
  t.equal(store.headCacheStats().heads, 3, 'one head left for the fourth');
  await store.write([f64Batch(a, secs(20, 10), secs(20, 10).map((_, i) => 20 + i))], WHO);
  t.equal(store.headCacheStats().loads, loads + 1, 'the head written again stayed cached (only the fourth was loaded)');
  await store.write([f64Batch(b, secs(10, 10), secs(10, 10).map((_, i) => 10 + i))], WHO);
  t.equal(store.headCacheStats().loads, loads + 2, 'the oldest head not written again was the one evicted');
  t.same(allValues(store, a).v, Array.from({ length: 30 }, (_, i) => i));
  t.same(allValues(store, b).v, Array.from({ length: 20 }, (_, i) => i));
});

t.test('an idle seal takes the emptied heads out of the writer\'s cache, and the series take points again', async (t) => {
  const { store } = await tempStore(t);
  const ids = Array.from({ length: 5 }, () => newId());
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (const id of ids) await store.write([f64Batch(id, secs(0, 3000), secs(0, 3000).map((_, i) => i / 10))], WHO);
  const before = store.headCacheStats();
  t.equal(before.heads, 5);
  t.ok(before.points >= 5 * 3000, `the open heads hold their 3,000 points each (capacity ${before.points})`);
  await store.sealHeads(0);
  t.same(store.headCacheStats(), { heads: 0, loads: before.loads, points: 0 }, 'no emptied head holds columns');
  for (const id of ids) t.equal(store.headPoints(id), 0);
  for (const id of ids) await store.write([f64Batch(id, secs(3000, 1000), secs(3000, 1000).map((_, i) => (3000 + i) / 10))], WHO);
  t.equal(store.headCacheStats().heads, 5, 'each series has its head again');
  for (const id of ids) {
    t.equal(store.headPoints(id), 1000);
    t.same(allValues(store, id).v, Array.from({ length: 4000 }, (_, i) => i / 10));
  }
});
