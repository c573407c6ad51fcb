// A series' partial last chunk (an idle seal closed it short) is taken back into the head and
// re-encoded with the points that follow it, on the writer's thread and with a seal thread:
// report-by-exception tags keep one chunk instead of one per idle period, a series resuming
// after an outage fills its chunks again, and every point stays exact throughout.
import t from 'tap';
import fc from 'fast-check';
import { listChunks, readRaw, type PointBatch, type SeriesStore } from '../../src/storage/series-store.js';
import { readHeadRecord } from '../../src/storage/head-record.js';
import { INT64_MAX, INT64_MIN, chunkKey, seriesKey } from '../../src/storage/keys.js';
import { CHUNK_BYTE_BUDGET } from '../../src/storage/encoding/chunk.js';
import { PARTIAL_CHUNK_SHARE } from '../../src/storage/seal.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? 20261121);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const range = { startNs: T0 - SEC, endNs: T0 + 10_000_000n * SEC };
const chunksOf = (store: SeriesStore, id: string) => store.read((v) => listChunks(v, id, range)).filter((c) => c.sealed);

/** Points [from, to) of a 1 s series with ms jitter and a 0.01-resolution wander. */
function wander(id: string, from: number, to: number): PointBatch {
  const times: bigint[] = [], values: number[] = [];
  for (let j = from; j < to; j++) {
    times.push(T0 + BigInt(j) * SEC + BigInt((j * 7) % 8) * 1_000_000n);
    values.push(Math.round((50 + 10 * Math.sin(j / 50) + ((j * 13) % 17) / 100) * 100) / 100);
  }
  return f64Batch(id, times, values);
}

function readAll(store: SeriesStore, id: string): { ts: bigint[]; v: number[] } {
  const p = store.read((v) => readRaw(v, id, { ...range, limit: 10_000_000 }));
  return { ts: [...p.ts], v: [...p.f64!.subarray(0, p.count)] };
}

const isPartial = (c: { bytes: number; count: number }, chunkPoints: number) => c.count < chunkPoints && c.bytes < PARTIAL_CHUNK_SHARE * CHUNK_BYTE_BUDGET;

t.test('a report-by-exception tag sealed after each of its points keeps one chunk, not one per point', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const times: bigint[] = [], values: number[] = [];
  for (let i = 0; i < 300; i++) {
    times.push(T0 + BigInt(i) * 900n * SEC); values.push(20 + (i % 9) * 0.5);
    await store.write([f64Batch(id, [times[i]], [values[i]])], WHO);
    await store.sealHeads(0);
  }
  const chunks = chunksOf(store, id);
  t.equal(chunks.length, 1, 'one chunk');
  t.equal(chunks[0].count, 300);
  t.ok(chunks[0].bytes < 600, `${chunks[0].bytes} bytes for 300 points`);
  t.same(readAll(store, id), { ts: times, v: values }, 'every point once, exact, in order');
  t.equal(store.read((v) => readHeadRecord(v, seriesKey(id))), null, 'the head sealed whole keeps no record');
  // a late point inside the chunk still merges into it
  await store.write([f64Batch(id, [times[10] + 1n], [-1])], WHO);
  t.equal(chunksOf(store, id).length, 1);
  t.equal(readAll(store, id).ts.length, 301);
});

t.test('a partial chunk after a full one is taken back when the head behind it fills a chunk of its own', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const counts = () => chunksOf(store, id).map((c) => c.count);
  await store.write([wander(id, 0, 130)], WHO);
  await store.sealHeads(0);
  t.same(counts(), [100, 30], 'a full chunk and a partial one');
  await store.write([wander(id, 130, 200)], WHO);
  t.same(counts(), [100, 30], 'a head short of a chunk leaves them as they are');
  t.equal(store.read((v) => readHeadRecord(v, seriesKey(id)))?.sealedEnd, wander(id, 129, 130).times[0], 'sealedEnd: the partial chunk\'s last point');
  await store.write([wander(id, 200, 230)], WHO);
  t.same(counts(), [100, 100], 'the full head sealed a chunk of the partial\'s points and its own');
  t.equal(store.headPoints(id), 30, 'the rest stays open');
  t.equal(store.read((v) => readHeadRecord(v, seriesKey(id)))?.sealedEnd, wander(id, 199, 200).times[0], 'sealedEnd: the new chunk\'s last point');
  await store.sealHeads(0);
  t.same(counts(), [100, 100, 30], 'a full chunk is never taken back');
  await store.write([wander(id, 230, 240)], WHO);
  await store.sealHeads(0);
  t.same(counts(), [100, 100, 40], 'an idle seal re-encodes the partial chunk with the head');
  const want = wander(id, 0, 240);
  t.same(readAll(store, id), { ts: [...want.times], v: [...want.values as Float64Array] });
});

for (const sealThread of [false, true]) {
  t.test(`a series resuming after an outage fills its chunks again (${sealThread ? 'seal thread' : 'writer seals'})`, async (t) => {
    const { store } = await tempStore(t, { sealThread, groupWindowMs: 0 });
    const resumed = newId(), steady = newId();
    for (const id of [resumed, steady]) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
    const N = 30_000, OUTAGE_AT = 1_700;
    await store.write([wander(resumed, 0, OUTAGE_AT)], WHO);
    await store.sealHeads(0); // idle during the outage
    t.equal(chunksOf(store, resumed).length, 1);
    t.ok(isPartial(chunksOf(store, resumed)[0], 16_384), 'the idle seal left a partial chunk');
    for (let a = OUTAGE_AT; a < N; a += 1000) await store.write([wander(resumed, a, Math.min(N, a + 1000))], WHO);
    for (let a = 0; a < N; a += 1000) await store.write([wander(steady, a, Math.min(N, a + 1000))], WHO);
    await store.settleSeals();
    await store.sealHeads(0);
    const got = chunksOf(store, resumed), ref = chunksOf(store, steady);
    t.ok(got.slice(0, -1).every((c) => !isPartial(c, 16_384)), `no partial chunk but the last: ${got.map((c) => c.bytes).join(' ')}`);
    t.ok(got.length <= ref.length, `${got.length} chunks, ${ref.length} for the same points written without the outage`);
    const want = wander(resumed, 0, N);
    t.same(readAll(store, resumed), { ts: [...want.times], v: [...want.values as Float64Array] }, 'every point exact');
  });
}

t.test('a swinging-door series keeps its partial chunks (its points were compressed once already)', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.setLifecyclePolicy(id, {
    schema: 'service-lifecycle-policy/v1', rollups: { keep: 'forever' }, annotations: { keep: '30d' },
    raw: { keep: 'forever' }, swinging_door: { maxdev_percent_of_range: 1, range_min: 0, range_max: 100 },
  });
  for (let k = 0; k < 3; k++) {
    await store.write([wander(id, k * 200, k * 200 + 200)], WHO);
    await store.sealHeads(0);
  }
  t.equal(chunksOf(store, id).length, 3, 'one chunk per idle seal');
});

for (const damage of ['payload', 'header'] as const) {
  t.test(`a damaged partial chunk (${damage}) is left as it is: new points are still stored, reads name the damage`, async (t) => {
    const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
    const id = newId();
    await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
    await store.write([wander(id, 0, 130)], WHO);
    await store.sealHeads(0);
    // the head open again (a head sealed whole keeps no record and is found from the last chunk's header)
    await store.write([wander(id, 130, 140)], WHO);
    const key = chunkKey(seriesKey(id), wander(id, 100, 101).times[0] as bigint);
    const bytes = Buffer.from(store.env.chunks.get(key) as Buffer);
    bytes[damage === 'payload' ? bytes.length - 1 : 1] ^= 0x40;
    store.env.chunks.putSync(key, bytes);
    const r = await store.write([wander(id, 140, 230)], WHO);
    t.equal(r.accepted, 90, 'the write is stored');
    await store.sealHeads(0);
    const keys = [...store.env.chunks.getKeys({ start: chunkKey(seriesKey(id), INT64_MIN), end: chunkKey(seriesKey(id), INT64_MAX) })];
    t.equal(keys.length, 3, 'the damaged chunk stays; the head sealed a chunk of its own');
    t.ok(keys.some((k) => Buffer.from(k as Buffer).equals(key)), 'the damaged chunk is still there');
    t.throws(() => readAll(store, id), { code: 'chunk-corrupt' }, 'a read over the damaged chunk says so');
    const after = store.read((v) => readRaw(v, id, { startNs: wander(id, 130, 131).times[0] as bigint, endNs: range.endNs, limit: 1000 }));
    const want = wander(id, 130, 230);
    t.same([...after.ts], [...want.times], 'the points after it read back exactly');
  });
}

const VALUE_TYPES = ['float64', 'int64', 'boolean', 'string', 'enum'] as const;
type ValueType = typeof VALUE_TYPES[number];

function batchOf(id: string, type: ValueType, ts: bigint[], xs: number[]): PointBatch {
  const times = BigInt64Array.from(ts), quality = Uint32Array.from(xs.map((x) => (x % 5 === 0 ? 0 : 192)));
  switch (type) {
    case 'float64': return { series: id, times, quality, values: Float64Array.from(xs, (x) => x / 4) };
    case 'int64': return { series: id, times, quality, values: BigInt64Array.from(xs, (x) => BigInt(x) * 3_000_000_007n) };
    case 'boolean': return { series: id, times, quality, values: xs.map((x) => x % 2 === 0) };
    case 'string': return { series: id, times, quality, values: xs.map((x) => `B-${x}`) };
    case 'enum': return { series: id, times, quality, values: Int32Array.from(xs, (x) => x % 6) };
  }
}

t.test('property: any run of appends and idle seals keeps every point, and every chunk but the last full', async (t) => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('append' as const), n: fc.integer({ min: 1, max: 90 }), gapS: fc.integer({ min: 1, max: 4000 }), seed: fc.nat(1000) }),
    fc.record({ kind: fc.constant('seal' as const) }),
  );
  const CHUNK_POINTS = 40;
  await fc.assert(fc.asyncProperty(fc.constantFrom(...VALUE_TYPES), fc.array(op, { minLength: 1, maxLength: 30 }), async (type, ops) => {
    const { store } = await tempStore({ teardown: (fn) => cleanups.push(fn) }, { seal: { chunkPoints: CHUNK_POINTS } });
    try {
      const id = newId();
      await store.createSeries({ id, type, writableClass: 'collector', ...(type === 'enum' ? { enumSet: { id: 'states', ordinals: [0, 1, 2, 3, 4, 5] } } : {}) });
      const ts: bigint[] = [], xs: number[] = [];
      let now = T0;
      for (const o of ops) {
        if (o.kind === 'seal') { await store.sealHeads(0); continue; }
        const bt: bigint[] = [], bx: number[] = [];
        for (let i = 0; i < o.n; i++) { now += BigInt(1 + ((o.seed + i * 7) % o.gapS)) * SEC; bt.push(now); bx.push((o.seed * 31 + i * 17) % 1000); }
        await store.write([batchOf(id, type, bt, bx)], WHO);
        ts.push(...bt); xs.push(...bx);
      }
      await store.sealHeads(0);
      const chunks = chunksOf(store, id);
      if (!chunks.slice(0, -1).every((c) => c.count === CHUNK_POINTS)) return false;
      const p = store.read((v) => readRaw(v, id, { ...range, limit: 1_000_000 }));
      const want = batchOf(id, type, ts, xs);
      if (p.count !== ts.length || !ts.every((x, i) => p.ts[i] === x)) return false;
      for (let i = 0; i < ts.length; i++) {
        if (p.quality[i] !== want.quality[i]) return false;
        const got = type === 'float64' ? p.f64![i] : type === 'int64' ? p.i64![i] : type === 'boolean' ? p.u8![i] === 1 : type === 'string' ? p.str![i] : p.ord![i];
        const exp = (want.values as ArrayLike<unknown>)[i];
        if (got !== exp) return false;
      }
      return true;
    } finally {
      for (const fn of cleanups.splice(0)) await fn();
    }
  }), { seed: SEED, numRuns: 40 });
});

const cleanups: (() => unknown)[] = [];
