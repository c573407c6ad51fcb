// ProvenanceTally adds a stretch of good, kept points in one step: its sums (percent_good,
// percent_time_filtered) equal the per-point sums it replaced, for any qualities, runs
// split anywhere, segments that start before or after their first point, and any filter.
import t from 'tap';
import fc from 'fast-check';
import { ProvenanceTally } from '../../src/workers/resolved-points.js';
import { allocColumns, type ReadView, type SeriesMeta } from '../../src/storage/series-store.js';

const SEED = Number(process.env.FC_SEED ?? 20261128);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);
const GOOD = 192;

/** The per-point reference: each interval between points is held by its left point's quality. */
function reference(times: number[], q: number[], segEnd: number, keep: number) {
  let held = 0, good = 0, filtered = 0;
  for (let i = 0; i < times.length; i++) {
    const next = i + 1 < times.length ? times[i + 1] : segEnd;
    const ns = next - times[i];
    held += ns;
    if (q[i] >= GOOD) good += ns;
    if (q[i] < keep) filtered += ns;
  }
  return { held, good, filtered };
}

t.test('one-step stretches sum exactly what the per-point loop sums', async (t) => {
  const quality = fc.oneof({ weight: 6, arbitrary: fc.constant(192) }, { weight: 1, arbitrary: fc.constantFrom(0, 63, 64, 100, 191, 193, 255, 1000) });
  await fc.assert(fc.property(
    fc.array(fc.tuple(fc.integer({ min: 1, max: 5_000_000_000 }), quality), { minLength: 1, maxLength: 300 }),
    fc.array(fc.nat({ max: 300 }), { maxLength: 5 }),
    fc.constantFrom(0, 64, 192, 200),
    fc.integer({ min: -1_000_000, max: 1_000_000 }),
    (pts, cuts, keep, baseShift) => {
      const n = pts.length;
      const times: number[] = [];
      let tt = 1_000_000;
      for (const [d] of pts) { tt += d; times.push(tt); }
      const q = pts.map(([, x]) => x);
      const segStart = 1_700_000_000_000_000_000n;
      const segEnd = times[n - 1] + 1;
      const cols = allocColumns('float64', n);
      cols.count = n;
      cols.tsBase = segStart + BigInt(baseShift);
      for (let i = 0; i < n; i++) { cols.tsOffset[i] = times[i] - baseShift; cols.quality[i] = q[i]; }
      const tally = new ProvenanceTally(keep, 2n ** 62n);
      // a series without lossy ranges: beginSegment reads nothing else of its record or the view
      tally.beginSegment(undefined as unknown as ReadView, 'series', segStart, segStart + BigInt(segEnd), { lossyRanges: [] } as unknown as SeriesMeta);
      const bounds = [...new Set([0, ...cuts.filter((c) => c < n), n])].sort((a, b) => a - b);
      for (let k = 0; k + 1 < bounds.length; k++) tally.run(cols, bounds[k], bounds[k + 1]);
      tally.endSegment(segStart + BigInt(segEnd));
      const want = reference(times, q, segEnd, keep);
      if (tally.heldNs !== want.held || tally.goodNs !== want.good || tally.filteredNs !== want.filtered) {
        throw new Error(`held ${tally.heldNs}/${want.held} good ${tally.goodNs}/${want.good} filtered ${tally.filteredNs}/${want.filtered}`);
      }
    }), { seed: SEED, numRuns: 2000 });
  t.pass('2000 runs');
});
