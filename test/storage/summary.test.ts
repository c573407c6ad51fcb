// summarizePieces against a brute-force oracle: the union of the pieces' points, every
// segment integrated interval by interval, the value before the range weighting its start.
// The rollup path (aligned interior hours) and the all-raw path must both equal it.
import t from 'tap';
import fc from 'fast-check';
import { readRaw, type SeriesStore } from '../../src/storage/series-store.js';
import { summarizePieces, uniformBoundaries, type SummaryPiece } from '../../src/storage/summary.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const H = 3_600_000_000_000n;
const SEED = 2026_1127;

interface Oracle { count: number[]; min: number[]; max: number[]; first: number[]; last: number[]; sum: number[]; area: number[]; cov: number[]; good: number[]; unc: number[]; bad: number[] }

function oracle(store: SeriesStore, pieces: SummaryPiece[], B: BigInt64Array, stepped: boolean, keep = 0): Oracle & { filtered: number } {
  const n = B.length - 1, start = B[0], end = B[n];
  const z = () => new Array<number>(n).fill(0);
  const o: Oracle & { filtered: number } = { filtered: 0, count: z(), min: z().fill(NaN), max: z().fill(NaN), first: z().fill(NaN), last: z().fill(NaN), sum: z(), area: z(), cov: z(), good: z(), unc: z(), bad: z() };
  const pts: Array<{ ts: bigint; v: number; q: number }> = [];
  const all = (id: string, a: bigint, b: bigint) => {
    const p = store.read((v) => readRaw(v, id, { startNs: a, endNs: b, limit: 1_000_000 }));
    return Array.from({ length: p.count }, (_, i) => ({ ts: p.ts[i], v: p.f64![i], q: p.quality[i] }));
  };
  const kept = (xs: Array<{ ts: bigint; v: number; q: number }>) => xs.filter((x) => x.q >= keep);
  if (pieces[0].fromNs === start) { const b = kept(all(pieces[0].series, -(2n ** 62n), start)); if (b.length) pts.push(b[b.length - 1]); }
  for (const p of pieces) {
    const stored = all(p.series, p.fromNs, p.toNs);
    stored.forEach((x, i) => { if (x.q < keep) o.filtered += Number((i + 1 < stored.length ? stored[i + 1].ts : p.toNs) - x.ts); });
    pts.push(...kept(stored));
  }
  const last = pieces[pieces.length - 1];
  if (last.toNs === end) { const a = kept(all(last.series, end, 2n ** 62n)); if (a.length) pts.push(a[0]); }
  const idx = (t: bigint) => { for (let k = 0; k < n; k++) if (t >= B[k] && t < B[k + 1]) return k; return -1; };
  for (const p of pts) {
    const k = idx(p.ts);
    if (k < 0) continue;
    if (o.count[k] === 0) { o.first[k] = p.v; o.min[k] = p.v; o.max[k] = p.v; }
    o.min[k] = Math.min(o.min[k], p.v); o.max[k] = Math.max(o.max[k], p.v); o.last[k] = p.v; o.sum[k] += p.v; o.count[k]++;
  }
  // time between pieces is not covered
  const bound = (t: bigint) => pieces.some((p) => t >= p.fromNs && t < p.toNs);
  for (let i = 0; i + 1 < pts.length; i++) {
    const a = pts[i], b = pts[i + 1];
    for (let k = 0; k < n; k++) {
      const lo = a.ts > B[k] ? a.ts : B[k], hi = b.ts < B[k + 1] ? b.ts : B[k + 1];
      if (hi <= lo) continue;
      // split at piece edges inside [lo, hi)
      const cuts = [lo, ...pieces.flatMap((p) => [p.fromNs, p.toNs]).filter((c) => c > lo && c < hi), hi].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
      for (let c = 0; c + 1 < cuts.length; c++) {
        const x0 = cuts[c], x1 = cuts[c + 1];
        if (x1 <= x0 || !bound(x0)) continue;
        const d = Number(x1 - x0);
        const at = (x: bigint) => a.v + ((b.v - a.v) * Number(x - a.ts)) / Number(b.ts - a.ts);
        o.area[k] += stepped ? a.v * d : ((at(x0) + at(x1)) / 2) * d;
        o.cov[k] += d;
        if (a.q >= 192) o.good[k] += d; else if (a.q >= 64) o.unc[k] += d; else o.bad[k] += d;
      }
    }
  }
  return o;
}

const close = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-7 * Math.max(1, Math.abs(b));

t.test('summaries over a sensor swap equal the brute-force union, with and without rollups', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 300 } });
  const a = newId(), b = newId();
  await store.createSeries({ id: a, type: 'float64', writableClass: 'collector' });
  await store.createSeries({ id: b, type: 'float64', writableClass: 'collector' });
  // ~3 days of 37 s points on both sensors (each records before and after its binding)
  const ts: bigint[] = [];
  for (let i = 0; i < 7000; i++) ts.push(T0 + BigInt(i) * 37n * SEC + BigInt(i % 7) * 1_000_003n);
  const q = (i: number) => (i % 500 < 20 ? 0 : i % 500 < 45 ? 100 : 192);
  await store.write([f64Batch(a, ts, ts.map((_, i) => Math.sin(i / 40) * 100), ts.map((_, i) => q(i)))], WHO);
  await store.write([f64Batch(b, ts.map((x) => x + 11n * SEC), ts.map((_, i) => 1000 + Math.cos(i / 30) * 50), ts.map((_, i) => q(i + 250)))], WHO);
  const first = ts[0], lastT = ts[ts.length - 1];
  await fc.assert(fc.asyncProperty(
    fc.bigInt(0n, 12n * H), fc.bigInt(36n * H, 66n * H), fc.bigInt(13n * H, 35n * H), fc.constantFrom(15n * 60n * SEC, H, 3n * H, 24n * H, 7n * 60n * SEC + 3n),
    fc.boolean(), fc.boolean(), fc.boolean(),
    async (s, e, swap, iv, stepped, gap, align) => {
      const base = align ? first - (first % H) + H : first;
      const start = base + s, end = base + e, swapAt = base + swap;
      const pieces: SummaryPiece[] = [{ series: a, fromNs: start, toNs: swapAt }, { series: b, fromNs: gap ? swapAt + 2n * H + 17n : swapAt, toNs: end }].filter((p) => p.toNs > p.fromNs);
      const B = uniformBoundaries(start, end, iv);
      const want = oracle(store, pieces, B, stepped);
      for (const useRollups of [true, false]) {
        const got = store.read((v) => summarizePieces(v, pieces, { boundaries: B, continuity: stepped ? 'stepped' : 'continuous', useRollups }));
        for (let k = 0; k < got.n; k++) {
          const ok = got.count[k] === want.count[k] && close(got.min[k], want.min[k]) && close(got.max[k], want.max[k])
            && close(got.first[k], want.first[k]) && close(got.last[k], want.last[k])
            && close(got.area[k], want.area[k]) && close(got.covered[k], want.cov[k]) && close(got.goodNs[k], want.good[k])
            && (useRollups || (close(got.uncertainNs[k], want.unc[k]) && close(got.badNs[k], want.bad[k])
              && (want.count[k] === 0 || close(got.count[k] * got.first[k] + got.sumD[k], want.sum[k]))));
          if (!ok) throw new Error(`interval ${k} (rollups ${useRollups}): got ${JSON.stringify({ c: got.count[k], mn: got.min[k], a: got.area[k], cov: got.covered[k], g: got.goodNs[k], u: got.uncertainNs[k] })} want ${JSON.stringify({ c: want.count[k], mn: want.min[k], a: want.area[k], cov: want.cov[k], g: want.good[k], u: want.unc[k] })}`);
        }
        if (useRollups && iv >= H && align) t.ok(got.rollupHours >= 0);
      }
    }), { seed: SEED, numRuns: 40 });
  // the quality filter: dropped points as if not stored, the time they held tallied
  await fc.assert(fc.asyncProperty(
    fc.bigInt(0n, 12n * H), fc.bigInt(36n * H, 66n * H), fc.bigInt(13n * H, 35n * H), fc.constantFrom(H, 3n * H, 7n * 60n * SEC + 3n), fc.constantFrom(64, 192), fc.boolean(),
    async (s, e, swap, iv, keep, stepped) => {
      const start = first + s, end = first + e, swapAt = first + swap;
      const pieces: SummaryPiece[] = [{ series: a, fromNs: start, toNs: swapAt }, { series: b, fromNs: swapAt, toNs: end }];
      const B = uniformBoundaries(start, end, iv);
      const want = oracle(store, pieces, B, stepped, keep);
      const got = store.read((v) => summarizePieces(v, pieces, { boundaries: B, continuity: stepped ? 'stepped' : 'continuous', useRollups: true, minQuality: keep }));
      for (let k = 0; k < got.n; k++) {
        const ok = got.count[k] === want.count[k] && close(got.min[k], want.min[k]) && close(got.area[k], want.area[k]) && close(got.covered[k], want.cov[k])
          && close(got.goodNs[k], want.good[k]) && close(got.uncertainNs[k], want.unc[k]) && close(got.badNs[k], want.bad[k]);
        if (!ok) throw new Error(`filtered interval ${k} (keep ${keep}) differs`);
      }
      if (!close(got.filteredNs, want.filtered)) throw new Error(`filtered time ${got.filteredNs} != ${want.filtered}`);
    }), { seed: SEED, numRuns: 20 });
  t.ok(lastT > first, `fast-check seed ${SEED}`);
  // aligned day intervals over the middle of one series read interior hours from rollups
  const start = first - (first % (24n * H)) + 24n * H;
  const got = store.read((v) => summarizePieces(v, [{ series: a, fromNs: start, toNs: start + 24n * H }], { boundaries: uniformBoundaries(start, start + 24n * H, 24n * H), continuity: 'continuous', useRollups: true }));
  t.ok(got.rollupHours >= 22, `a whole day comes from rollup hours (${got.rollupHours}), edges raw (${got.pointsRead} points)`);
  t.ok(got.pointsRead < 400, 'only the edge hours are read raw');
});
