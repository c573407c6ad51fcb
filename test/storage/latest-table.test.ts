// The shared latest-point table (storage/latest-table.ts) against the stored latest point
// (readSnapshot) through any sequence of writes: appends, late points, edits of the latest
// point (same instant, another value or quality), repeats, refused points, plain-array
// batches, two engines writing one series, fills by a reader and lifecycle enforcement.
// Whenever the table claims to know (NONE or POINT) it must say exactly what storage holds.
import t from 'tap';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LatestTable, NONE, POINT, UNKNOWN, type LatestRead } from '../../src/storage/latest-table.js';
import { SeriesStore, readSnapshot, type PointBatch } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, T0, SEC } from '../helpers/series-store.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';

const SEED = Number(process.env.FC_SEED ?? 20261128);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);
const out = (): LatestRead => ({ state: UNKNOWN, seq: 0, ts: 0n, value: 0, quality: 0 });

/** Fails when the table claims something storage does not hold; returns the table's state. */
function check(store: SeriesStore, table: LatestTable, id: string): number {
  const r = table.read(id, out());
  const stored = store.read((v) => readSnapshot(v, id));
  if (r.state === NONE && stored !== null) throw new Error(`table says no point, storage holds ${stored.ts}`);
  if (r.state === POINT) {
    if (stored === null) throw new Error(`table says ${r.ts}, storage holds nothing`);
    if (r.ts !== stored.ts || r.quality !== stored.quality || !Object.is(r.value, stored.value)) {
      throw new Error(`table ${r.ts}=${String(r.value)}@${r.quality}, storage ${stored.ts}=${String(stored.value)}@${stored.quality}`);
    }
  }
  return r.state;
}

/** A reader's fill: sequence first, then a fresh snapshot, then the compare-and-swap. */
function fillFromStorage(store: SeriesStore, table: LatestTable, id: string, type: ValueType): boolean {
  const seen = table.read(id, out()).seq;
  const p = store.read((v) => readSnapshot(v, id));
  return table.fill(id, seen, type, p);
}

const opArb = fc.oneof(
  // a batch: offsets in seconds around the series' clock (negative: late), values, qualities, a refused (NaN) point maybe
  fc.record({ kind: fc.constant('write' as const), points: fc.array(fc.tuple(fc.integer({ min: -20, max: 20 }), fc.integer({ min: 0, max: 3 }), fc.constantFrom(0, 64, 192)), { minLength: 1, maxLength: 6 }), nan: fc.boolean(), plain: fc.boolean(), other: fc.boolean() }),
  fc.record({ kind: fc.constant('fill' as const) }),
  fc.record({ kind: fc.constant('forget' as const) }),
);

t.test('float64: the table never disagrees with storage, and knows the series after a fill and appends', async (t) => {
  await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
    const dir = await mkdtemp(join(tmpdir(), 'latest-table-'));
    const table = LatestTable.create(1 << 6);
    const a = SeriesStore.open(join(dir, 'series'), { latest: table });
    // a second engine over the same environment with its own view of the same buffer (the ingest worker's)
    const b = SeriesStore.open(join(dir, 'series'), { latest: LatestTable.attach(table.buffer) });
    try {
      const id = newId();
      await a.createSeries({ id, type: 'float64', writableClass: 'collector' });
      let clock = T0 + 100n * SEC;
      for (const op of ops) {
        if (op.kind === 'fill') fillFromStorage(a, table, id, 'float64');
        else if (op.kind === 'forget') table.forgetAll();
        else {
          const times = op.points.map(([dt]) => clock + BigInt(dt) * SEC);
          const values = op.points.map(([, v], i) => (op.nan && i === 0 ? Number.NaN : v * 0.5));
          const quality = op.points.map(([, , q]) => q);
          const batch: PointBatch = op.plain
            ? { series: id, times, values, quality }
            : { series: id, times: BigInt64Array.from(times), values: Float64Array.from(values), quality: Uint32Array.from(quality) };
          await (op.other ? b : a).write([batch], WHO);
          clock += 5n * SEC;
        }
        check(a, table, id);
      }
      // a fill then a later point: the table knows it exactly
      fillFromStorage(a, table, id, 'float64');
      if (table.read(id, out()).state === UNKNOWN) throw new Error('not known after a fill');
      await a.write([{ series: id, times: BigInt64Array.of(clock + 1000n * SEC), values: Float64Array.of(7.25), quality: Uint32Array.of(192) }], WHO);
      const r = table.read(id, out());
      if (r.state !== POINT || r.ts !== clock + 1000n * SEC || r.value !== 7.25) throw new Error('an append after a fill is not the latest');
    } finally {
      await a.close(); await b.close();
      await rm(dir, { recursive: true, force: true });
    }
  }), { seed: SEED, numRuns: 40 });
  t.pass('agrees');
});

t.test('int64 and boolean values, a series without points, an edit of the latest point, a late point', async (t) => {
  const table = LatestTable.create(1 << 6);
  const { store } = await tempStore(t, { latest: table });
  const i = newId(), bo = newId(), empty = newId();
  await store.createSeries({ id: i, type: 'int64', writableClass: 'collector' });
  await store.createSeries({ id: bo, type: 'boolean', writableClass: 'collector' });
  await store.createSeries({ id: empty, type: 'float64', writableClass: 'collector' });
  t.equal(table.read(i, out()).state, UNKNOWN, 'nothing known before a write or a fill');
  t.ok(fillFromStorage(store, table, empty, 'float64'));
  t.equal(table.read(empty, out()).state, NONE, 'a series without points is known to have none');
  await store.write([{ series: empty, times: BigInt64Array.of(T0), values: Float64Array.of(1.5), quality: Uint32Array.of(192) }], WHO);
  t.match(table.read(empty, out()), { state: POINT, ts: T0, value: 1.5, quality: 192 }, 'its first point is the latest');

  fillFromStorage(store, table, i, 'int64');
  await store.write([{ series: i, times: BigInt64Array.of(T0, T0 + SEC), values: BigInt64Array.of(2n ** 60n, -3n), quality: Uint32Array.of(192, 64) }], WHO);
  t.match(table.read(i, out()), { state: POINT, ts: T0 + SEC, value: -3n, quality: 64 });
  await store.write([{ series: i, times: BigInt64Array.of(T0 - SEC), values: BigInt64Array.of(9n), quality: Uint32Array.of(192) }], WHO);
  t.match(table.read(i, out()), { state: POINT, ts: T0 + SEC, value: -3n }, 'a late older point leaves it');
  await store.write([{ series: i, times: BigInt64Array.of(T0 + SEC), values: BigInt64Array.of(-3n), quality: Uint32Array.of(64) }], WHO);
  t.match(table.read(i, out()), { state: POINT, value: -3n }, 'a repeat of the latest point leaves it');
  await store.write([{ series: i, times: BigInt64Array.of(T0 + SEC), values: BigInt64Array.of(5n), quality: Uint32Array.of(192) }], WHO);
  t.equal(table.read(i, out()).state, UNKNOWN, 'an edit of the latest point: read from storage again');
  fillFromStorage(store, table, i, 'int64');
  t.match(table.read(i, out()), { state: POINT, ts: T0 + SEC, value: 5n, quality: 192 }, 'the fill has the edited value');

  fillFromStorage(store, table, bo, 'boolean');
  await store.write([{ series: bo, times: [T0, T0 + SEC], values: [true, false], quality: [192, 192] }], WHO);
  t.match(table.read(bo, out()), { state: POINT, ts: T0 + SEC, value: false }, 'a plain-array boolean batch');
});

t.test('string values: kept up to 56 UTF-8 bytes, a longer latest value is read from storage', async (t) => {
  const table = LatestTable.create(1 << 6);
  const { store } = await tempStore(t, { latest: table });
  const id = newId();
  await store.createSeries({ id, type: 'string', writableClass: 'collector' });
  t.ok(fillFromStorage(store, table, id, 'string'));
  const short = 'Betrieb – läuft ✓', long = 'x'.repeat(57);
  await store.write([{ series: id, times: [T0, T0 + SEC], values: ['a', short], quality: [192, 192] }], WHO);
  t.match(table.read(id, out()), { state: POINT, ts: T0 + SEC, value: short });
  check(store, table, id);
  await store.write([{ series: id, times: [T0 + SEC], values: [short], quality: [192] }], WHO);
  t.match(table.read(id, out()), { state: POINT, value: short }, 'a repeat leaves it');
  await store.write([{ series: id, times: [T0 + 2n * SEC], values: [long], quality: [192] }], WHO);
  t.equal(table.read(id, out()).state, UNKNOWN, 'too long to keep');
  await store.write([{ series: id, times: [T0 + 3n * SEC], values: ['y'.repeat(56)], quality: [64] }], WHO);
  t.equal(table.read(id, out()).state, UNKNOWN, 'from UNKNOWN a write leaves it');
  t.ok(fillFromStorage(store, table, id, 'string'));
  t.match(table.read(id, out()), { state: POINT, ts: T0 + 3n * SEC, value: 'y'.repeat(56), quality: 64 });
  await store.write([{ series: id, times: [T0 + 3n * SEC], values: ['z'], quality: [64] }], WHO);
  t.equal(table.read(id, out()).state, UNKNOWN, 'an edit of the latest string');
});

t.test('a fill from a snapshot older than a write does not land', async (t) => {
  const table = LatestTable.create(1 << 6);
  const { store } = await tempStore(t, { latest: table });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.write([{ series: id, times: BigInt64Array.of(T0), values: Float64Array.of(1), quality: Uint32Array.of(192) }], WHO);
  const seen = table.read(id, out()).seq;
  const old = store.read((v) => readSnapshot(v, id));
  await store.write([{ series: id, times: BigInt64Array.of(T0), values: Float64Array.of(2), quality: Uint32Array.of(192) }], WHO);
  t.notOk(table.fill(id, seen, 'float64', old), 'refused: the slot moved since the reader looked');
  t.equal(table.read(id, out()).state, UNKNOWN);
});

t.test('lifecycle enforcement that deletes the latest point: the slot is forgotten', async (t) => {
  const table = LatestTable.create(1 << 6);
  const { store } = await tempStore(t, { latest: table, seal: { chunkPoints: 100 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  fillFromStorage(store, table, id, 'float64');
  const times = Array.from({ length: 300 }, (_, i) => T0 + BigInt(i) * 60n * SEC);
  await store.write([{ series: id, times: BigInt64Array.from(times), values: Float64Array.from(times.map((_, i) => i)), quality: new Uint32Array(300).fill(192) }], WHO);
  await store.sealHeads();
  t.match(table.read(id, out()), { state: POINT, ts: times[299] });
  await store.setLifecyclePolicy(id, { schema: 'service-lifecycle-policy/v1', rollups: { keep: 'forever' }, annotations: { keep: '30d' }, raw: { keep_days: 1, then: 'delete' } });
  await store.enforceLifecycle(T0 + 400n * 86_400n * SEC);
  t.equal(table.read(id, out()).state, UNKNOWN, 'forgotten');
  check(store, table, id);
  fillFromStorage(store, table, id, 'float64');
  check(store, table, id);
  t.equal(table.read(id, out()).state === POINT ? table.read(id, out()).ts : null, store.read((v) => readSnapshot(v, id))?.ts ?? null, 'the fill says what storage holds now');
});

t.test('a full table: series without a slot are simply unknown', async (t) => {
  const table = LatestTable.create(2);
  const ids = Array.from({ length: 5 }, newId);
  let slots = 0;
  for (const id of ids) if (table.slotOf(id, true) >= 0) slots++;
  t.equal(slots, 2);
  t.equal(table.slotOf('not-a-uuid', true), -1);
});

t.test('series claimed one after another get adjacent slots, found the same from another attachment', async (t) => {
  const table = LatestTable.create(1 << 10);
  const ids = Array.from({ length: 100 }, newId);
  const slots = ids.map((id) => table.slotOf(id, true));
  const strides = new Set(slots.slice(1).map((s, i) => s - slots[i]));
  t.equal(strides.size, 1, 'one stride: claim order, not hash order');
  t.ok([...strides][0] > 0);
  const other = LatestTable.attach(table.buffer);
  t.same(ids.map((id) => other.slotOf(id, false)), slots);
  t.equal(other.slotOf(newId(), false), -1, 'an unclaimed series has none');
});
