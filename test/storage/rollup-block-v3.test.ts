// Rollup day blocks, version 3: a day whose 24 hours all hold points stores its day row (the
// fold of the hours), read without decoding the hours. The stored fold equals the fold a
// reader derives, bit for bit; version-2 blocks of full days are still read (their hours
// folded) and migrate by storage:repack; summaries over days equal the all-raw computation
// whichever form the blocks have, and say how many chunks the rollups spared.
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { decodeDayBlock, encodeDayBlock, readFoldedDay, upgradeDayBlock, type DayBlock } from '../../src/storage/rollup-block.js';
import { foldHours, type RollupRow } from '../../src/storage/rollup-row.js';
import { rollupKey, seriesKey } from '../../src/storage/keys.js';
import { DAY_BLOCK_CODE } from '../../src/storage/rollup-read.js';
import { summarizePieces, uniformBoundaries, type SummaryColumns } from '../../src/storage/summary.js';
import { repackInPlace } from '../../src/storage/repack.js';
import { SeriesStore } from '../../src/storage/series-store.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const H = 3_600_000_000_000n, D = 24n * H;
const DAY = 1_699_920_000_000_000_000n; // a UTC midnight

function sameRow(a: RollupRow | null, b: RollupRow | null): boolean {
  if (a === null || b === null) return a === b;
  return (Object.keys(a) as (keyof RollupRow)[]).every((k) => Object.is(a[k], b[k]));
}
const sameBlock = (a: DayBlock, b: DayBlock) => sameRow(a.day, b.day) && a.hours.every((h, i) => sameRow(h, b.hours[i]));

/** An hour row as the writer makes it: points inside the hour, plant-like values. */
const hourRow = (h: number) => fc.record({
  count: fc.integer({ min: 1, max: 100_000 }), v: fc.array(fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.integer({ min: -5000, max: 5000 }).map((x) => x / 100)), { minLength: 4, maxLength: 4 }),
  at: fc.array(fc.bigInt({ min: 0n, max: H - 1n }), { minLength: 4, maxLength: 4 }), q: fc.constantFrom(0, 64, 192),
  a: fc.double({ min: -1e20, max: 1e20, noNaN: true }), b: fc.double({ min: -1e20, max: 1e20, noNaN: true }),
  cov: fc.oneof(fc.constant(3_600_000_000_000), fc.nat({ max: 3_600_000_000_000 })), good: fc.nat({ max: 3_600_000_000_000 }),
}).map((r): RollupRow => {
  const base = DAY + BigInt(h) * H, [min, max, first, last] = [Math.min(...r.v), Math.max(...r.v), r.v[2], r.v[3]];
  return { count: r.count, min, max, first, last, minTs: base + r.at[0], maxTs: base + r.at[1], firstTs: base + r.at[2], lastTs: base + r.at[3], lastQuality: r.q, areaStepped: r.a, areaLinear: r.b, coveredNs: r.cov, goodNs: Math.min(r.good, r.cov) };
});
const fullDay = fc.tuple(...Array.from({ length: 24 }, (_, h) => hourRow(h)));

t.test('a full day stores the fold of its hours, bit for bit; other days stay version 2', async (t) => {
  fc.assert(fc.property(fullDay, fc.integer({ min: -1, max: 23 }), (hours, hole) => {
    const b: DayBlock = { day: null, hours: hours.map((h, i) => (i === hole ? null : h)) };
    const bytes = encodeDayBlock(b, DAY, H);
    if (!sameBlock(decodeDayBlock(bytes, DAY, H), b)) return false;
    if (hole >= 0) return bytes[0] === 2 && readFoldedDay(bytes, DAY, H) === null && upgradeDayBlock(bytes, DAY, H) === bytes;
    const old = encodeDayBlock(b, DAY, H, false);
    return bytes[0] === 3 && sameRow(readFoldedDay(bytes, DAY, H), foldHours(b.hours))
      && old[0] === 2 && readFoldedDay(old, DAY, H) === null && sameBlock(decodeDayBlock(old, DAY, H), b)
      && upgradeDayBlock(old, DAY, H).equals(bytes);
  }), { seed: SEED, numRuns: 150 });
  t.pass('150 random days');
  const explicit: DayBlock = { day: foldHours([]), hours: new Array(24).fill(null) };
  t.equal(encodeDayBlock(explicit, DAY, H)[0], 2, 'a block without hours is version 2');
  // a version-3 block claiming fewer than 24 hours is refused, as is bit 3 on version 2
  const v3 = encodeDayBlock({ day: null, hours: Array.from({ length: 24 }, (_, h) => ({ ...foldHours([]), count: 1, min: 1, max: 1, first: 1, last: 1, minTs: DAY + BigInt(h) * H, maxTs: DAY + BigInt(h) * H, firstTs: DAY + BigInt(h) * H, lastTs: DAY + BigInt(h) * H, lastQuality: 192, coveredNs: 3.6e12, goodNs: 3.6e12, areaStepped: 3.6e12, areaLinear: 3.6e12 })) }, DAY, H);
  t.equal(v3[0], 3);
  const holed = Buffer.from(v3); holed[4] = 0x7f;
  t.throws(() => decodeDayBlock(holed, DAY, H), /hour mask 7fffff is not valid/, 'a version-3 block missing an hour');
  const v2 = Buffer.from(v3); v2[0] = 2;
  t.throws(() => decodeDayBlock(v2, DAY, H), /version 2 with flags/, 'bit 3 on version 2');
});

const close = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

function same(t: Test, got: SummaryColumns, want: SummaryColumns, what: string): void {
  let bad = -1;
  for (let k = 0; k < want.n && bad < 0; k++) {
    const ok = got.count[k] === want.count[k] && close(got.min[k], want.min[k]) && close(got.max[k], want.max[k]) && close(got.first[k], want.first[k])
      && close(got.last[k], want.last[k]) && close(got.area[k], want.area[k]) && close(got.covered[k], want.covered[k]) && close(got.goodNs[k], want.goodNs[k]);
    if (!ok) bad = k;
  }
  t.equal(bad, -1, `${what}: every interval equals the all-raw summary`);
}

t.test('summaries over days: day rows, version-2 hours and raw points agree; chunks the rollups spared are counted', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rollup-v3-'));
  let store = SeriesStore.open(join(dir, 'series'), { seal: { chunkPoints: 500 } });
  t.teardown(async () => { await store.close(); await rm(dir, { recursive: true, force: true }); });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  // 6 days of 20 s points from 05:17 of a day, a 3-hour hole on day 3 (no points: its hours are synthesized)
  const day0 = T0 - (T0 % D);
  const start = day0 + 5n * H + 17n * 60n * SEC;
  const ts: bigint[] = [];
  for (let t0 = start; t0 < start + 6n * D; t0 += 20n * SEC) if (!(t0 >= day0 + 3n * D + 4n * H && t0 < day0 + 3n * D + 7n * H)) ts.push(t0 + (t0 / SEC) % 7n * 1_000_000n);
  await store.write([f64Batch(id, ts, ts.map((_, i) => Math.round(Math.sin(i / 300) * 5000) / 100 + (i % 11)), ts.map((_, i) => (i % 997 < 30 ? 100 : 192)))], WHO);
  await store.sealHeads(0);
  const key = (d: bigint) => rollupKey(seriesKey(id), DAY_BLOCK_CODE, d);
  const versions = () => store.read((v) => Array.from({ length: 7 }, (_, i) => v.env.rollups.get(key(day0 + BigInt(i) * D), { transaction: v.txn })?.[0] ?? 0));
  t.same(versions(), [2, 3, 3, 2, 3, 3, 2], 'full days are version 3; the first, the last and the one with a hole are version 2');

  const grids = [uniformBoundaries(day0, day0 + 7n * D, D), uniformBoundaries(day0 + 2n * H, day0 + 7n * D, D), uniformBoundaries(day0, day0 + 7n * D, 2n * D), uniformBoundaries(day0 + 30n * 60n * SEC, day0 + 6n * D, 6n * H)];
  const summarize = (s: SeriesStore, B: BigInt64Array, useRollups: boolean, stepped: boolean) => s.read((v) => summarizePieces(v, [{ series: id, fromNs: B[0], toNs: B[B.length - 1] }], { boundaries: B, continuity: stepped ? 'stepped' : 'continuous', useRollups }));
  const raw = grids.map((B) => [false, true].map((stepped) => summarize(store, B, false, stepped)));
  const check = (s: SeriesStore, form: string) => grids.forEach((B, g) => [false, true].forEach((stepped, j) => same(t, summarize(s, B, true, stepped), raw[g][j], `${form}, grid ${g}, ${stepped ? 'stepped' : 'continuous'}`)));
  check(store, 'version-3 blocks');
  const v3 = summarize(store, grids[0], true, false);
  t.equal(v3.rollupDays, 4, 'the four full days come from their stored day rows');
  t.ok(v3.pointsRead < 2000 && v3.rollupHours > 0, `edges raw (${v3.pointsRead} points), ${v3.rollupHours} hour rows`);
  // spared: every chunk but those the raw edges and edge lookups decode (a few at each end)
  const chunks = store.read((v) => v.env.chunks.getKeysCount({ start: seriesKey(id), end: Buffer.concat([seriesKey(id), Buffer.alloc(8, 255)]), transaction: v.txn }));
  t.ok(chunks > 40 && v3.chunksPruned >= chunks - 6 && v3.chunksPruned <= chunks - 2, `${v3.chunksPruned} of ${chunks} chunks spared`);
  t.equal(raw[0][0].chunksPruned, 0, 'an all-raw summary spares none');
  const offGrid = summarize(store, grids[1], true, false);
  t.equal(offGrid.rollupDays, 0, 'days across an interval boundary are not used whole');

  // the form before 2026-11-28: every version-3 block written back as version 2
  await store.env.root.transaction(() => {
    for (let i = 0; i < 7; i++) {
      const d = day0 + BigInt(i) * D, b = store.env.rollups.get(key(d));
      if (b?.[0] === 3) store.env.rollups.putSync(key(d), encodeDayBlock(decodeDayBlock(b, d, H), d, H, false));
    }
  });
  t.same(versions(), [2, 2, 2, 2, 2, 2, 2], 'every block in the older form');
  check(store, 'version-2 blocks');
  t.equal(summarize(store, grids[0], true, false).rollupDays, 0, 'older blocks answer with their hours');
  await store.close();
  await repackInPlace(join(dir, 'series'));
  const repacked = store = SeriesStore.open(join(dir, 'series'), {});
  t.same(repacked.read((v) => Array.from({ length: 7 }, (_, i) => v.env.rollups.get(key(day0 + BigInt(i) * D), { transaction: v.txn })?.[0] ?? 0)), [2, 3, 3, 2, 3, 3, 2], 'storage:repack migrates full days to version 3');
  check(repacked, 'repacked');
  t.equal(summarize(repacked, grids[0], true, false).rollupDays, 4);
});
