// A write batch that needs a damaged chunk of its series is refused whole, each point with
// 'chunk-corrupt', and the other batches of the call and of its group are stored: one
// damaged chunk must not stop a collector's whole stream. The refused batch leaves no trace.
import t from 'tap';
import { readRaw, type SeriesStore } from '../../src/storage/series-store.js';
import { readHeadRecord } from '../../src/storage/head-record.js';
import { INT64_MAX, INT64_MIN, chunkKey, seriesKey } from '../../src/storage/keys.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

/** Points j in [from, to) at 1 s, value j / 10. */
const points = (id: string, from: number, to: number, shift = 0) => {
  const ts: bigint[] = [], v: number[] = [];
  for (let j = from; j < to; j++) { ts.push(T0 + BigInt(j) * SEC); v.push(j / 10 + shift); }
  return f64Batch(id, ts, v);
};

const all = { startNs: T0 - SEC, endNs: T0 + 1_000_000n * SEC, limit: 1_000_000 };
const readAll = (store: SeriesStore, id: string) => {
  const p = store.read((v) => readRaw(v, id, all));
  return { ts: [...p.ts], v: [...p.f64!.subarray(0, p.count)] };
};
const chunkKeys = (store: SeriesStore, id: string) =>
  [...store.env.chunks.getKeys({ start: chunkKey(seriesKey(id), INT64_MIN), end: chunkKey(seriesKey(id), INT64_MAX) })].map((k) => Buffer.from(k as Buffer));

/** Flips a bit of the chunk at `key`: byte 1 lies in the header, the last byte in the trailer CRC's payload. */
function damage(store: SeriesStore, key: Buffer, at: 'header' | 'payload'): Buffer {
  const bytes = Buffer.from(store.env.chunks.get(key) as Buffer);
  bytes[at === 'header' ? 1 : bytes.length - 1] ^= 0x40;
  store.env.chunks.putSync(key, bytes);
  return bytes;
}

async function twoSeries(t: Parameters<typeof tempStore>[0]) {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const a = newId(), b = newId();
  for (const id of [a, b]) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  return { store, a, b };
}

t.test('a series whose last chunk header is damaged (its head found from it) refuses its batch; the rest of the call is stored', async (t) => {
  const { store, a, b } = await twoSeries(t);
  await store.write([points(a, 0, 100), points(b, 0, 100)], WHO);
  await store.sealHeads(0);
  t.equal(store.read((v) => readHeadRecord(v, seriesKey(a))), null, 'a sealed head keeps no record: the last chunk header gives its end');
  const [key] = chunkKeys(store, a).slice(-1);
  const damaged = damage(store, key, 'header');

  const r = await store.write([points(a, 100, 110), points(b, 100, 110)], WHO);
  t.same(r.batches[0], { series: a, accepted: 0, unchanged: 0, superseded: 0, refused: 10, refusals: Array.from({ length: 10 }, (_, index) => ({ index, reason: 'chunk-corrupt' })) }, 'the damaged series\' batch is refused point by point');
  t.match(r.batches[1], { accepted: 10, refused: 0 }, 'the other series of the same call is stored');
  t.equal(r.accepted, 10);
  t.equal(r.refused, 10);
  t.same(readAll(store, b).ts, [...points(b, 0, 110).times], 'it reads back whole');
  t.ok(Buffer.from(store.env.chunks.get(key) as Buffer).equals(damaged), 'the damaged chunk is left exactly as it was');
  t.equal(store.read((v) => readHeadRecord(v, seriesKey(a))), null, 'nothing of the refused batch was stored');
  t.equal(store.groupReruns, 0, 'the head is loaded before the batch writes anything: refused without rerunning the group');
});

t.test('late points into a damaged chunk refuse their batch whole, with no trace of its other points', async (t) => {
  const { store, a, b } = await twoSeries(t);
  await store.write([points(a, 0, 250), points(b, 0, 250)], WHO);
  await store.sealHeads(0);
  const keys = chunkKeys(store, a);
  t.ok(keys.length >= 3, 'several chunks');
  damage(store, keys[0], 'payload');
  const before = readAll(store, b);

  // one batch of a: a late correction inside the damaged chunk plus new points after the head
  const late = points(a, 10, 11, 5);
  const mixed = f64Batch(a, [late.times[0] as bigint, ...points(a, 250, 260).times], [(late.values as Float64Array)[0], ...(points(a, 250, 260).values as Float64Array)]);
  const r = await store.write([mixed, points(b, 250, 260)], WHO);
  t.match(r.batches[0], { accepted: 0, refused: 11 }, 'the batch that needs the damaged chunk is refused whole');
  t.ok(r.batches[0].refusals.every((x) => x.reason === 'chunk-corrupt'), 'each point names the reason');
  t.match(r.batches[1], { accepted: 10, refused: 0 });
  t.equal(store.groupReruns, 1, 'the merge met the damage mid-batch: the group ran again without it');
  t.same(readAll(store, b).ts, [...before.ts, ...points(b, 250, 260).times], 'b has its new points');
  const tail = store.read((v) => readRaw(v, a, { startNs: T0 + 100n * SEC, endNs: all.endNs, limit: 1000 }));
  t.same([...tail.ts], [...points(a, 100, 250).times], 'a has none of the refused batch\'s points after the head, though they needed no chunk');
  t.equal([...store.env.audit.getKeys({})].length, 0, 'and no audit entry for the correction it carried');

  // a batch of a that stays clear of the damaged chunk is stored as before
  const r2 = await store.write([points(a, 250, 260)], WHO);
  t.match(r2.batches[0], { accepted: 10, refused: 0 }, 'later batches clear of the damage are stored');
  t.throws(() => readAll(store, a), { code: 'chunk-corrupt' }, 'reads over the damaged chunk still say so');
});

t.test('calls sharing a group: the damaged batch is refused, every other batch of every call is stored once', async (t) => {
  const { store, a, b } = await twoSeries(t);
  const c = newId();
  await store.createSeries({ id: c, type: 'float64', writableClass: 'collector' });
  await store.write([points(a, 0, 100), points(b, 0, 100), points(c, 0, 100)], WHO);
  await store.sealHeads(0);
  damage(store, chunkKeys(store, a).slice(-1)[0], 'header');

  // issued in one tick, so they share one transaction (the group window)
  const [r1, r2, r3] = await Promise.all([
    store.write([points(b, 100, 110)], WHO),
    store.write([points(c, 100, 110), points(a, 100, 110), points(b, 110, 120)], WHO),
    store.write([points(c, 110, 120)], WHO),
  ]);
  t.equal(r1.accepted, 10);
  t.same(r2.batches.map((x) => [x.accepted, x.refused]), [[10, 0], [0, 10], [10, 0]], 'in the call with the damaged batch, only that batch is refused');
  t.equal(r3.accepted, 10);
  t.same(readAll(store, b).ts, [...points(b, 0, 120).times], 'b: every point once');
  t.same(readAll(store, c).ts, [...points(c, 0, 120).times], 'c: every point once');
  t.same(readAll(store, c).v, [...(points(c, 0, 120).values as Float64Array)]);
});
