// Rollup day blocks, version 2: golden bytes pin the layout, version-1 blocks are still
// read (golden bytes written by the version-1 encoder) and rewritten as version 2 when
// their day changes, and the fields v2 writes differently round-trip for any value.
import t from 'tap';
import fc from 'fast-check';
import { decodeDayBlock, emptyDayBlock, encodeDayBlock, type DayBlock } from '../../src/storage/rollup-block.js';
import type { RollupRow } from '../../src/storage/rollup-row.js';
import { readRollups } from '../../src/storage/series-store.js';
import { rollupKey, seriesKey } from '../../src/storage/keys.js';
import { tempStore, newId, WHO, f64Batch, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const H = 3_600_000_000_000n, D = 24n * H;
const DAY = 1_699_920_000_000_000_000n; // a UTC midnight

function row(r: Partial<RollupRow>): RollupRow {
  return { count: 0, min: NaN, max: NaN, first: NaN, last: NaN, minTs: 0n, maxTs: 0n, firstTs: 0n, lastTs: 0n, lastQuality: 0, areaStepped: 0, areaLinear: 0, coveredNs: 0, goodNs: 0, ...r };
}

// two hours of a plant series (ms times, two-decimal values, good quality, a full hour)
const plant = emptyDayBlock();
plant.hours[22] = row({ count: 3600, min: 12.5, max: 19.25, first: 15.5, last: 13, minTs: DAY + 22n * H + 1_234_000_000n, maxTs: DAY + 22n * H + 2_000_005_000_000n, firstTs: DAY + 22n * H + 3_000_000n, lastTs: DAY + 23n * H - 998_000_000n, lastQuality: 192, areaStepped: 55_912_345.123456789e6, areaLinear: 55_912_346.987654321e6, coveredNs: 3_600_000_000_000, goodNs: 3_600_000_000_000 });
plant.hours[23] = row({ count: 1800, min: 10, max: 10, first: 10, last: 10, minTs: DAY + 23n * H + 2_000_000n, maxTs: DAY + 23n * H + 2_000_000n, firstTs: DAY + 23n * H + 2_000_000n, lastTs: DAY + 23n * H + 2_000_000n, areaStepped: 1.8e13, areaLinear: 1.8e13, coveredNs: 1_800_000_000_000 });
// unscaled forms: an explicit day row with -0, NaN, 1e300, fractional ns; an hour covered past its end
const odd = emptyDayBlock();
odd.day = row({ count: 7, min: -0, max: Math.PI, first: NaN, last: 1e300, minTs: DAY - 5n, maxTs: DAY + 90_000_000_000_000n, firstTs: DAY + 1n, lastTs: DAY + 3n, lastQuality: 4294967295, areaStepped: -1.5, areaLinear: 2.25, coveredNs: 0.5, goodNs: 0.25 });
odd.hours[0] = row({ areaStepped: 3.5, areaLinear: 3.5, coveredNs: 7_200_000_000_000, goodNs: 1_000_000_000 });

const GOLDEN = {
  plantV1: '01020000c0060205901cc413a4138a1e8a92f4019c1806a814b4aab703c00165401dbc0d6dc942294356ca0d6dc94280dddb01f3880ed00f04000000209bf35eb042c0ee6d',
  plantV2: '02060000c0060205901cc413a4138a1e8a92f4019c1806a814cc0f0065401dbc0d6dc942044c034b7600f3880ed00f04c0010000209bf35eb042c0ee6d',
  oddV1: '010101000000ff0907000000000000008009182d4454fb2109408080bda0d8f628000000000000f87f029c7500883ce4377e06ffffffff0f000000000000f8bf0000000000000240000000000000e03f000000000000d03f020000000000000c408080c58bc6d1018094ebdc03',
  oddV2: '020101000000ff0907000000000000008009182d4454fb2109408080bda0d8f628000000000000f87f029c7500883ce4377efafff79492a527bffeffff0f000000000000f8bf08000000000000faff000000000000e03f000000000000d03f020000000000000c408080c58bc6d1018094ebdc03',
};

/** Field by field with Object.is (NaN equals NaN, -0 differs from 0). */
function sameRow(a: RollupRow | null, b: RollupRow | null): boolean {
  if (a === null || b === null) return a === b;
  return (Object.keys(a) as (keyof RollupRow)[]).every((k) => Object.is(a[k], b[k]));
}
const sameBlock = (a: DayBlock, b: DayBlock) => sameRow(a.day, b.day) && a.hours.every((h, i) => sameRow(h, b.hours[i]));

t.test('golden bytes: version 2 as written, version 1 still read', async (t) => {
  t.equal(encodeDayBlock(plant, DAY, H).toString('hex'), GOLDEN.plantV2, 'plant block, version 2');
  t.equal(encodeDayBlock(odd, DAY, H).toString('hex'), GOLDEN.oddV2, 'unscaled block, version 2');
  t.ok(GOLDEN.plantV2.length < GOLDEN.plantV1.length, `plant block ${GOLDEN.plantV1.length / 2} -> ${GOLDEN.plantV2.length / 2} bytes`);
  for (const [name, block] of [['plant', plant], ['odd', odd]] as const) {
    for (const v of ['V1', 'V2'] as const) {
      t.ok(sameBlock(decodeDayBlock(Buffer.from(GOLDEN[`${name}${v}`], 'hex'), DAY, H), block), `${name} ${v} decodes to its rows`);
    }
  }
  t.throws(() => decodeDayBlock(Buffer.from('02020100000900' + '00' + '0000000000000000' + '09', 'hex'), DAY, H), /area difference of 9 bytes/, 'an area difference longer than an f64 is refused');
  t.throws(() => decodeDayBlock(Buffer.from(GOLDEN.plantV2, 'hex').subarray(0, 30), DAY, H), /truncated/, 'a truncated block is refused');
});

t.test('the fields version 2 writes from the other end round-trip for any value', async (t) => {
  const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
  const nearEnd = fc.bigInt({ min: -2n * H, max: 2n * H });
  const ms = fc.integer({ min: -7_200_000, max: 7_200_000 }).map((x) => BigInt(x) * 1_000_000n);
  const anyDouble = fc.oneof(fc.double(), fc.constantFrom(0, -0, NaN, Infinity, 1e300, 5e-324));
  const anyRow = fc.record({
    count: fc.nat(), min: fc.double({ noNaN: true }), max: fc.double(), first: fc.double(), last: anyDouble,
    minTs: fc.oneof(int64, nearEnd, ms), maxTs: fc.oneof(nearEnd, ms), firstTs: fc.oneof(nearEnd, ms), lastTs: fc.oneof(int64, nearEnd, ms),
    lastQuality: fc.oneof(fc.constantFrom(0, 192, 193, 2 ** 31, 2 ** 32 - 1), fc.nat({ max: 2 ** 32 - 1 })),
    areaStepped: anyDouble, areaLinear: anyDouble,
    coveredNs: fc.oneof(fc.constantFrom(0, 3.6e12, 3.6e12 + 1e6, 8.64e13, 2 ** 53 - 1), fc.nat({ max: 3_600_000 }).map((x) => x * 1e6), anyDouble),
    goodNs: fc.oneof(fc.constant(0), fc.nat(), anyDouble),
  });
  fc.assert(fc.property(fc.option(anyRow, { nil: null }), fc.array(fc.option(anyRow, { nil: null }), { minLength: 24, maxLength: 24 }), fc.boolean(), (day, hours, relative) => {
    // relative: times near each row's own bucket (the scaled forms); else as drawn
    const shift = (r: RollupRow | null, base: bigint) => r && relative ? { ...r, minTs: base + r.minTs, maxTs: base + r.maxTs, firstTs: base + r.firstTs, lastTs: base + (r.lastTs % (3n * H)) } : r;
    const b: DayBlock = { day: shift(day, DAY), hours: hours.map((h, i) => shift(h, DAY + BigInt(i) * H)) };
    const bytes = encodeDayBlock(b, DAY, H);
    // a day whose 24 hours are all present stores their fold as version 3 (rollup-block-v3.test.ts)
    const version = b.day === null && b.hours.every((h) => h !== null) && Number.isSafeInteger(b.hours.reduce((n, h) => n + (h!.count > 0 ? h!.count : 0), 0)) ? 3 : 2;
    return bytes[0] === version && sameBlock(decodeDayBlock(bytes, DAY, H), b);
  }), { seed: SEED, numRuns: 400 });
  t.pass('400 random blocks round-tripped');
});

t.test('a version-1 block in the store is read, and its day is rewritten as version 2 when it changes', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const key = rollupKey(seriesKey(id), 3, DAY);
  await store.env.root.transaction(() => { store.env.rollups.putSync(key, Buffer.from(GOLDEN.plantV1, 'hex')); });
  const q = { interval: '1h' as const, startNs: DAY, endNs: DAY + D, continuity: 'stepped' as const };
  const r = store.read((v) => readRollups(v, id, q));
  t.same([...r.bucketStartNs.slice(0, r.count)], [DAY + 22n * H, DAY + 23n * H], 'its two hours');
  t.same([r.count, r.min[0], r.max[0], r.min[1]], [2, 12.5, 19.25, 10], 'with their statistics');
  // a point of its day (after hour 23's last one) repairs the rollups from there: the block is rewritten
  await store.write([f64Batch(id, [DAY + 23n * H + 30n * 60n * SEC], [4])], WHO);
  const after = store.env.rollups.get(key)!;
  t.equal(after[0], 2, 'the day is version 2 now');
  t.ok(sameRow(decodeDayBlock(after, DAY, H).hours[22], plant.hours[22]), 'the hour the point did not touch keeps its row');
});
