// Rollups after any interleaving of in-order, late and backfill writes (runs of points
// separated by gaps of minutes to months, written in a shuffled order, some points sent
// again with another value) equal the rollups recomputed from every raw point in time
// order: both intervals, both continuities, over the whole series and over ranges that
// start and end inside gaps (buckets without points are synthesized, not stored). Then a
// lifecycle trim with its cutoff inside a gap keeps every bucket after the cutoff as it was.
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { readRollups, type RollupColumns, type SeriesStore } from '../../src/storage/series-store.js';
import { rollupOracle, type Want } from '../helpers/rollup-oracle.js';
import { trimRollups } from '../../src/storage/rollups.js';
import { seriesKey } from '../../src/storage/keys.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const H = 3_600_000_000_000n, D = 24n * H;
const ALL = { startNs: -(2n ** 62n), endNs: 2n ** 62n };
type Continuity = 'continuous' | 'stepped';
const close = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

/** null when the read equals the oracle's buckets, else what differs first. */
function differs(got: RollupColumns, want: Want[], continuity: Continuity): string | null {
  if (got.count !== want.length) return `${got.count} buckets, want ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    const area = continuity === 'stepped' ? w.stepped : w.linear;
    const ok = got.bucketStartNs[i] === w.start && got.points[i] === w.count && got.coveredNs[i] === w.cov
      && (w.count === 0 ? Number.isNaN(got.min[i]) && Number.isNaN(got.last[i]) : got.min[i] === w.min && got.max[i] === w.max && got.first[i] === w.first && got.last[i] === w.last)
      && close(got.twa[i], w.cov > 0 ? area / w.cov : NaN) && close(got.percentGood[i], w.cov > 0 ? (100 * w.good) / w.cov : NaN);
    if (!ok) return `bucket ${i} at ${w.start} (count ${w.count}, covered ${w.cov}): got count ${got.points[i]} at ${got.bucketStartNs[i]}, covered ${got.coveredNs[i]}, twa ${got.twa[i]} want ${w.cov > 0 ? area / w.cov : NaN}`;
  }
  return null;
}

/** Whole series and a few sub-ranges (their ends inside gaps or runs), each interval and continuity. */
function checkAll(store: SeriesStore, id: string, cuts: bigint[]): string | null {
  for (const [interval, ns] of [['1h', H], ['1d', D]] as const) {
    const want = rollupOracle(store, id, ns);
    for (const continuity of ['continuous', 'stepped'] as const) {
      const whole = differs(store.read((v) => readRollups(v, id, { interval, ...ALL, continuity })), want, continuity);
      if (whole) return `${interval} ${continuity} whole series: ${whole}`;
      for (let i = 0; i + 1 < cuts.length; i += 2) {
        const lo = cuts[i] < cuts[i + 1] ? cuts[i] : cuts[i + 1], hi = cuts[i] < cuts[i + 1] ? cuts[i + 1] : cuts[i];
        if (hi <= lo) continue;
        const from = lo - (((lo % ns) + ns) % ns);
        const inRange = want.filter((w) => w.start >= from && w.start < hi);
        const limit = 1 + (i % 7);
        const got = store.read((v) => readRollups(v, id, { interval, startNs: lo, endNs: hi, continuity }));
        const part = differs(got, inRange, continuity);
        if (part) return `${interval} ${continuity} [${lo}, ${hi}): ${part}`;
        const cut = store.read((v) => readRollups(v, id, { interval, startNs: lo, endNs: hi, continuity, limit }));
        const first = differs(cut, inRange.slice(0, limit), continuity);
        if (first) return `${interval} ${continuity} [${lo}, ${hi}) limit ${limit}: ${first}`;
      }
    }
  }
  return null;
}

const cleanups: Array<() => unknown> = [];
const scratchStore = (opts: Parameters<typeof tempStore>[1]) => tempStore({ teardown: (fn) => { cleanups.push(fn); } }, opts);

/** Runs of points: gap before the run (s), points, cadence (s). */
const runArb = fc.record({
  gapS: fc.oneof(fc.integer({ min: 1, max: 7200 }), fc.integer({ min: 86_400, max: 130 * 86_400 })),
  points: fc.integer({ min: 1, max: 120 }),
  cadenceS: fc.constantFrom(1, 7, 60, 600, 1800, 5000),
});

t.test('rollups after any interleaving of in-order, late and backfill writes equal the rollups of the raw points in time order', async (t) => {
  let runs = 0;
  await fc.assert(fc.asyncProperty(
    fc.array(runArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 8, max: 80 }), fc.integer({ min: 10, max: 200 }),
    fc.infiniteStream(fc.nat()), fc.array(fc.bigInt({ min: -200n * D, max: 400n * D }), { minLength: 2, maxLength: 6 }),
    async (runsOf, chunkPoints, batchPoints, rand, cutOffsets) => {
      const { store } = await scratchStore({ seal: { chunkPoints }, groupWindowMs: 0 });
      const id = newId();
      await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
      // the points, in time order: runs separated by gaps of seconds to months
      const times: bigint[] = [];
      let at = T0;
      for (const r of runsOf) {
        at += BigInt(r.gapS) * SEC;
        for (let i = 0; i < r.points; i++) { times.push(at + BigInt(i % 3) * 1_000_000n); at += BigInt(r.cadenceS) * SEC; }
      }
      const next = () => rand.next().value as number;
      const value = () => (next() % 20001) / 100 - 100;
      const quality = () => (next() % 5 === 0 ? 0 : 192);
      // batches of consecutive points, written in a random order: the first ones are in order,
      // the others late (inside sealed data or the head) or backfill (before everything)
      const batches: bigint[][] = [];
      for (let k = 0; k < times.length; k += batchPoints) batches.push(times.slice(k, k + batchPoints));
      const order = batches.map((_, i) => i);
      for (let i = order.length - 1; i > 0; i--) { const j = next() % (i + 1); [order[i], order[j]] = [order[j], order[i]]; }
      for (const i of order) {
        const ts = batches[i];
        await store.write([f64Batch(id, ts, ts.map(value), ts.map(quality))], WHO);
        // sometimes a point sent again with another value (a supersede)
        if (next() % 3 === 0) await store.write([f64Batch(id, [ts[next() % ts.length]], [value()], [quality()])], WHO);
      }
      const cuts = cutOffsets.map((c) => T0 + c);
      const bad = checkAll(store, id, cuts);
      while (cleanups.length) await cleanups.pop()!();
      runs++;
      if (bad) t.comment(`${runsOf.length} runs, ${times.length} points in ${batches.length} batches (chunks of ${chunkPoints}): ${bad}`);
      return bad === null;
    }), { seed: SEED, numRuns: 30 });
  t.ok(runs >= 30, `${runs} runs`);
});

/** Columns of one read as comparable rows. */
function rowsOf(c: RollupColumns): string[] {
  const out: string[] = [];
  for (let i = 0; i < c.count; i++) out.push([c.bucketStartNs[i], c.points[i], c.min[i], c.max[i], c.first[i], c.last[i], c.twa[i], c.percentGood[i], c.coveredNs[i]].join(' '));
  return out;
}

async function trimmedInGap(t: Test, cutoffAt: 'hour' | 'mid-hour') {
  const { store } = await tempStore(t, { seal: { chunkPoints: 50 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const day0 = T0 - (((T0 % D) + D) % D);
  // a day at 10 min, a 20-day gap, another day at 10 min
  const times = [...Array.from({ length: 144 }, (_, i) => day0 + BigInt(i) * 600n * SEC), ...Array.from({ length: 144 }, (_, i) => day0 + 21n * D + BigInt(i) * 600n * SEC)];
  await store.write([f64Batch(id, times, times.map((_, i) => (i % 50) / 4))], WHO);
  const cutoff = day0 + 5n * D + 7n * H + (cutoffAt === 'hour' ? 0n : 1_800n * SEC);
  const read = (interval: '1h' | '1d') => store.read((v) => readRollups(v, id, { interval, ...ALL, continuity: 'continuous' }));
  const keep = (c: RollupColumns, ns: bigint) => rowsOf(c).filter((_, i) => c.bucketStartNs[i] + ns > cutoff);
  const beforeH = keep(read('1h'), H), beforeD = keep(read('1d'), D);
  await store.env.root.transaction(() => trimRollups({ env: store.env, txn: undefined }, seriesKey(id), cutoff));
  t.same(rowsOf(read('1h')), beforeH, `${cutoffAt}: the hours after the cutoff (gap hours among them) are unchanged`);
  t.same(rowsOf(read('1d')), beforeD, `${cutoffAt}: the days reaching the cutoff are unchanged`);
}

t.test('a lifecycle trim with its cutoff inside a gap keeps the buckets after it', async (t) => {
  await trimmedInGap(t, 'hour');
  await trimmedInGap(t, 'mid-hour');
});
