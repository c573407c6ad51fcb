// Rollup day blocks: the compact rows round-trip every field bit for bit, rows written in
// the legacy 112-byte form stay readable and are rewritten as blocks when their day
// changes, and lifecycle trimming drops exactly the buckets that end before the cutoff.
import t from 'tap';
import fc from 'fast-check';
import { decodeDayBlock, emptyDayBlock, encodeDayBlock, encodeRow, foldHours, HOURS_PER_DAY, type RollupRow } from '../../src/storage/rollup-row.js';
import { readRollups, type SeriesStore } from '../../src/storage/series-store.js';
import { rollupKey, seriesKey } from '../../src/storage/keys.js';
import { trimRollups } from '../../src/storage/rollups.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const H = 3_600_000_000_000n, D = 24n * H;
const all = { startNs: T0 - 100n * D, endNs: T0 + 100n * D };

const anyDouble = fc.oneof(fc.double(), fc.constantFrom(0, -0, NaN, 1, 20.5, 1e15, 2 ** 53, -(2 ** 60)));
const anyTime = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: 0n, max: H }));
const anyRow: fc.Arbitrary<RollupRow> = fc.record({
  count: fc.oneof(fc.constant(0), fc.nat(), fc.constant(2 ** 53 - 1)),
  min: anyDouble, max: anyDouble, first: anyDouble, last: anyDouble,
  minTs: anyTime, maxTs: anyTime, firstTs: anyTime, lastTs: anyTime,
  lastQuality: fc.oneof(fc.constantFrom(0, 192), fc.nat({ max: 2 ** 32 - 1 })),
  areaStepped: anyDouble, areaLinear: anyDouble,
  coveredNs: fc.oneof(anyDouble, fc.nat(), fc.constant(3_600_000_000_000)), goodNs: fc.oneof(anyDouble, fc.nat(), fc.constant(0)),
});

/** Field by field with Object.is (NaN equals NaN, -0 differs from 0). */
function sameRow(a: RollupRow | null, b: RollupRow | null): boolean {
  if (a === null || b === null) return a === b;
  return (Object.keys(a) as (keyof RollupRow)[]).every((k) => Object.is(a[k], b[k]));
}

t.test('a day block round-trips any rows exactly', async (t) => {
  fc.assert(fc.property(fc.option(anyRow), fc.array(fc.option(anyRow, { nil: null }), { minLength: HOURS_PER_DAY, maxLength: HOURS_PER_DAY }), fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), (day, hours, dayStart) => {
    const b = emptyDayBlock();
    b.day = day;
    b.hours = hours;
    const back = decodeDayBlock(encodeDayBlock(b, dayStart, H), dayStart, H);
    return sameRow(back.day, b.day) && back.hours.every((h, i) => sameRow(h, b.hours[i]));
  }), { seed: SEED, numRuns: 300 });
  // plant-like rows: decimal values and millisecond times take the scaled forms
  const decimal = fc.tuple(fc.integer({ min: -1e7, max: 1e7 }), fc.nat({ max: 4 })).map(([m, k]) => m / 10 ** k);
  const msTime = fc.nat({ max: 3_600_000 }).map((ms) => T0 + BigInt(ms) * 1_000_000n);
  const plantRow: fc.Arbitrary<RollupRow> = fc.record({
    count: fc.nat({ max: 3600 }), min: decimal, max: decimal, first: decimal, last: decimal,
    minTs: msTime, maxTs: msTime, firstTs: msTime, lastTs: msTime, lastQuality: fc.constantFrom(0, 192),
    areaStepped: fc.double(), areaLinear: fc.double(), coveredNs: fc.nat({ max: 3600 }).map((s) => s * 1e9), goodNs: fc.constantFrom(0, 1e6, 3.6e12),
  });
  fc.assert(fc.property(fc.array(fc.option(plantRow, { nil: null }), { minLength: HOURS_PER_DAY, maxLength: HOURS_PER_DAY }), (hours) => {
    // explicit day rows (kept after a trim), and the usual block: no day row, derived on read
    for (const day of [hours[0], foldHours(hours), null]) {
      const b = { day, hours };
      const bytes = encodeDayBlock(b, T0, H);
      const back = decodeDayBlock(bytes, T0, H);
      if (!(sameRow(back.day, b.day) && back.hours.every((h, i) => sameRow(h, b.hours[i])))) return false;
    }
    // a derived day row costs nothing: the block is its hours and the 7-byte header
    const bare = encodeDayBlock({ day: null, hours }, T0, H), withDay = encodeDayBlock({ day: foldHours(hours), hours }, T0, H);
    // (all 24 hours present: version 3 stores the fold as well, rollup-block-v3.test.ts)
    if (hours.every((h) => h !== null)) return bare[0] === 3 && bare.length === withDay.length;
    return hours.every((h) => h === null) ? bare.length === 7 : bare.length < withDay.length;
  }), { seed: SEED, numRuns: 300 });
  const empty = emptyDayBlock();
  t.same(decodeDayBlock(encodeDayBlock(empty, T0, H), T0, H), empty, 'an empty block');
  t.throws(() => decodeDayBlock(Buffer.from([9, 0, 0, 0, 0]), T0, H), /version 9/, 'an unknown block version is refused');
  t.throws(() => decodeDayBlock(encodeDayBlock({ ...emptyDayBlock(), day: rowOf(1) }, T0, H).subarray(0, 8), T0, H), /truncated/, 'a truncated block is refused');
});

function rowOf(count: number): RollupRow {
  return { count, min: 1, max: 2, first: 1, last: 2, minTs: T0, maxTs: T0 + SEC, firstTs: T0, lastTs: T0 + SEC, lastQuality: 192, areaStepped: 1e9, areaLinear: 1.5e9, coveredNs: 1e9, goodNs: 1e9 };
}

const rollups = (store: SeriesStore, id: string, interval: '1h' | '1d') => store.read((v) => readRollups(v, id, { interval, ...all, continuity: 'stepped' }));

t.test('legacy rows stay readable and are rewritten as a block when their day changes', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const times = Array.from({ length: 200 }, (_, i) => T0 + BigInt(i) * 60n * SEC);
  await store.write([f64Batch(id, times, times.map((_, i) => i % 17))], WHO);
  const hours = rollups(store, id, '1h'), days = rollups(store, id, '1d');
  t.ok(hours.count >= 3 && days.count >= 1);
  // rewrite what is stored as legacy rows: one 112-byte value per bucket, codes 1 and 2
  const series = seriesKey(id), env = store.env;
  await env.root.transaction(() => {
    for (const { key } of [...env.rollups.getRange({ start: series, end: Buffer.concat([series, Buffer.alloc(1, 0xff)]) })]) env.rollups.removeSync(key);
    for (let i = 0; i < hours.count; i++) {
      env.rollups.putSync(rollupKey(series, 1, hours.bucketStartNs[i]), encodeRow(rowFrom(hours, i)));
    }
    for (let i = 0; i < days.count; i++) env.rollups.putSync(rollupKey(series, 2, days.bucketStartNs[i]), encodeRow(rowFrom(days, i)));
  });
  t.same(rollups(store, id, '1h').points, hours.points, 'legacy hourly rows read back');
  t.same(rollups(store, id, '1d').min, days.min, 'legacy daily rows read back');
  // a late point repairs its hours: the day is rewritten as a block and its legacy rows go
  const late = T0 + 30n * SEC;
  await store.write([f64Batch(id, [late], [99])], WHO);
  const after = rollups(store, id, '1h');
  t.equal(after.count, hours.count);
  t.equal(after.max[0], 99, 'the repaired hour sees the late point');
  t.same(after.points.slice(1), hours.points.slice(1), 'other hours unchanged');
  const dayOf = (x: bigint) => x - (((x % D) + D) % D);
  let inLateDay = 0, elsewhere = 0;
  for (const { key } of env.rollups.getRange({ start: series, end: Buffer.concat([series, Buffer.alloc(1, 0xff)]) })) {
    if (key[16] !== 1 && key[16] !== 2) continue;
    if (dayOf(key.readBigUInt64BE(17) ^ 0x8000000000000000n) === dayOf(late)) inLateDay++; else elsewhere++;
  }
  t.equal(inLateDay, 0, 'no legacy row left in the rewritten day');
  t.ok(elsewhere > 0, 'the next day (T0 is 22:13 UTC) keeps its legacy rows');
  t.same(rollups(store, id, '1d').points.slice(1), days.points.slice(1), 'and reads them');
});

/** Rebuilds a stored-row shape from the read columns (stepped area = twa x covered). */
function rowFrom(c: ReturnType<typeof rollups>, i: number): RollupRow {
  return { count: c.points[i], min: c.min[i], max: c.max[i], first: c.first[i], last: c.last[i], minTs: c.bucketStartNs[i], maxTs: c.bucketStartNs[i], firstTs: c.bucketStartNs[i], lastTs: c.bucketStartNs[i], lastQuality: 192, areaStepped: c.twa[i] * c.coveredNs[i], areaLinear: c.twa[i] * c.coveredNs[i], coveredNs: c.coveredNs[i], goodNs: c.coveredNs[i] };
}

t.test('trimming drops the buckets that end before the cutoff and keeps a day row while its day reaches it', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const day0 = T0 - (((T0 % D) + D) % D);
  const times = Array.from({ length: 3 * 24 * 6 }, (_, i) => day0 + BigInt(i) * 600n * SEC); // 3 days at 10 min
  await store.write([f64Batch(id, times, times.map((_, i) => i))], WHO);
  const h0 = rollups(store, id, '1h'), d0 = rollups(store, id, '1d');
  t.equal(h0.count, 72); t.equal(d0.count, 3);
  const cutoff = day0 + D + 5n * H + 30n * 60n * SEC; // 05:30 on day 1
  const dropped = await store.env.root.transaction(() => trimRollups({ env: store.env, txn: undefined }, seriesKey(id), cutoff));
  t.equal(dropped, 24 + 5 + 1, 'day 0 (24 hours and its row) and hours 00-04 of day 1');
  const h1 = rollups(store, id, '1h'), d1 = rollups(store, id, '1d');
  t.equal(h1.count, 72 - 29);
  t.equal(h1.bucketStartNs[0], day0 + D + 5n * H, 'first hour left: the one holding the cutoff');
  t.same([...d1.bucketStartNs], [day0 + D, day0 + 2n * D], 'day 1 keeps its row');
  t.equal(d1.points[0], d0.points[1], 'unchanged by the trim of its early hours');
});
