import t from 'tap';
import { SeriesStore, readRaw, readRawAudit } from '../../src/storage/series-store.js';
import { seriesKey } from '../../src/storage/keys.js';
import { readHeadRecord } from '../../src/storage/head-record.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const DAY = 86_400n * SEC;
const range = { startNs: T0 - 100n * DAY, endNs: T0 + 100n * DAY };
const secs = (from: number, n: number) => Array.from({ length: n }, (_, i) => T0 + BigInt(from + i) * SEC);
const base = { schema: 'service-lifecycle-policy/v1', rollups: { keep: 'forever' }, annotations: { keep: '30d' } };

function allPoints(store: SeriesStore, id: string): { ts: bigint[]; v: number[] } {
  const p = store.read((v) => readRaw(v, id, { ...range, limit: 1_000_000 }));
  return { ts: [...p.ts], v: [...p.f64!.subarray(0, p.count)] };
}

const hasRecord = (store: SeriesStore, id: string) => store.env.heads.get(seriesKey(id)) !== undefined;

t.test('a head sealed whole keeps no record; a later point inside the sealed range merges into its chunk, a new one opens the head', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.write([f64Batch(id, secs(0, 250), secs(0, 250).map((_, i) => i))], WHO);
  t.ok(hasRecord(store, id), 'an open head has its record');
  t.same(await store.sealHeads(), { series: 1, points: 50 });
  t.notOk(hasRecord(store, id), 'the emptied head left no record');
  t.equal(store.headPoints(id), 0);
  // at or before the last sealed point: routed to the chunks (supersedes point 249 there, audited)
  const r = await store.write([f64Batch(id, [T0 + 249n * SEC, T0 + 100n * SEC + 1n], [-249, -100])], WHO);
  t.same([r.accepted, r.batches[0].superseded], [2, 1]);
  t.equal(store.headPoints(id), 0, 'no point went into the head');
  t.notOk(hasRecord(store, id), 'still no record: the merge left the head empty');
  t.equal(store.read((v) => readRawAudit(v, id, { ...range, limit: 10 })).length, 1);
  await store.write([f64Batch(id, secs(250, 10), secs(250, 10).map((_, i) => 250 + i))], WHO);
  t.equal(store.headPoints(id), 10, 'new points open the head again');
  t.equal(store.read((v) => readHeadRecord(v, seriesKey(id)))?.sealedEnd, T0 + 249n * SEC, 'its sealedEnd is the last chunk\'s last point');
  const want = Array.from({ length: 260 }, (_, i) => (i === 249 ? -249 : i));
  want.splice(101, 0, -100);
  t.same(allPoints(store, id).v, want, 'every point once, in order');
});

t.test('a writer whose cached head was sealed and unrecorded by another writer reloads it and routes late points to the chunks', async (t) => {
  const { store: a, dir } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const b = SeriesStore.open(`${dir}/series`, { seal: { chunkPoints: 100 } });
  t.teardown(() => b.close());
  const id = newId();
  await a.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await a.write([f64Batch(id, secs(0, 130), secs(0, 130).map((_, i) => i))], WHO);
  t.equal(a.headPoints(id), 30, 'writer a caches a head of 30 open points');
  await b.sealHeads();
  t.notOk(hasRecord(a, id), 'writer b sealed it whole');
  const loads = a.headCacheStats().loads;
  await a.write([f64Batch(id, [T0 + 120n * SEC], [-120])], WHO);
  t.equal(a.headCacheStats().loads, loads + 1, 'writer a did not trust its cached head');
  t.equal(a.headPoints(id), 0, 'the late point merged into the sealed chunk');
  await a.write([f64Batch(id, secs(130, 5), secs(130, 5).map((_, i) => 130 + i))], WHO);
  t.same(allPoints(a, id).v, Array.from({ length: 135 }, (_, i) => (i === 120 ? -120 : i)), 'no point twice, none lost');
});

t.test('an empty head whose sealedEnd lies past the last chunk keeps its record, so older points still go to the chunks', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.write([f64Batch(id, secs(0, 150), secs(0, 150).map((_, i) => i))], WHO);
  await store.setLifecyclePolicy(id, { ...base, raw: { keep_days: 1, then: 'rollups' } });
  const report = await store.enforceLifecycle(T0 + 10n * DAY);
  t.equal(report.pointsDropped, 150, 'chunks and the stale head dropped');
  const rec = store.read((v) => readHeadRecord(v, seriesKey(id)));
  t.same([rec?.openPoints, rec?.sealedEnd], [0, T0 + 149n * SEC], 'the record keeps the dropped head\'s last time');
  await store.write([f64Batch(id, [T0 + 140n * SEC], [1])], WHO);
  t.equal(store.headPoints(id), 0, 'a point before that time was sealed, not opened in the head');
  t.same(allPoints(store, id).v, [1]);
});
