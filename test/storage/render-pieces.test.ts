// renderPieces across a sensor swap equals the render of one series holding the union of
// the pieces' points (pixel-exact: same points and columns; areas within rounding).
import t from 'tap';
import fc from 'fast-check';
import { readRaw, renderSeries, type SeriesStore, type RenderStat } from '../../src/storage/series-store.js';
import { renderPieces, type MinMaxBand, type SignificantPoints } from '../../src/storage/render.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = 2026_1127;
const H = 3_600_000_000_000n;

function pointsOf(store: SeriesStore, id: string, from: bigint, to: bigint) {
  const p = store.read((v) => readRaw(v, id, { startNs: from, endNs: to, limit: 1_000_000 }));
  return { ts: Array.from(p.ts), v: Array.from(p.f64!), q: Array.from(p.quality) };
}

const same = (a: Float64Array, b: Float64Array, tol = 0) => a.length === b.length && a.every((x, i) => (Number.isNaN(x) && Number.isNaN(b[i])) || Math.abs(x - b[i]) <= tol * Math.max(1, Math.abs(b[i])));

t.test('a render across a swap equals the render of the union of the pieces', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 250 } });
  const a = newId(), b = newId();
  for (const id of [a, b]) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const ts: bigint[] = [];
  for (let i = 0; i < 6000; i++) ts.push(T0 + BigInt(i) * 29n * SEC + BigInt(i % 3) * 7n);
  await store.write([f64Batch(a, ts, ts.map((_, i) => Math.round(Math.sin(i / 40) * 1000) / 10), ts.map((_, i) => (i % 400 < 30 ? 0 : 192)))], WHO);
  await store.write([f64Batch(b, ts.map((x) => x + 13n * SEC), ts.map((_, i) => 500 + (i % 97)), ts.map((_, i) => (i % 300 < 10 ? 100 : 192)))], WHO);
  const stats: Array<RenderStat | undefined> = [undefined, 'count', 'min', 'max', 'first', 'last', 'twa', 'percent_good'];
  let n = 0;
  await fc.assert(fc.asyncProperty(
    fc.bigInt(0n, 10n * H), fc.bigInt(30n * H, 47n * H), fc.bigInt(11n * H, 29n * H), fc.integer({ min: 1, max: 1500 }),
    fc.constantFrom('significant-points' as const, 'minmax-band' as const), fc.constantFrom(...stats), fc.boolean(),
    async (s, e, w, width, mode, stat, stepped) => {
      const start = ts[0] + s, end = ts[0] + e, swap = ts[0] + w;
      // the union as one series: a's points before the swap (and before the range), b's from it on (and after the range)
      const u = newId();
      await store.createSeries({ id: u, type: 'float64', writableClass: 'collector' });
      const pa = pointsOf(store, a, 0n, swap), pb = pointsOf(store, b, swap, 2n ** 62n);
      await store.write([f64Batch(u, [...pa.ts, ...pb.ts], [...pa.v, ...pb.v], [...pa.q, ...pb.q])], WHO);
      const q = { startNs: start, endNs: end, width, mode, stat: mode === 'minmax-band' ? stat : undefined, continuity: stepped ? 'stepped' as const : 'continuous' as const };
      const got = store.read((v) => renderPieces(v, [{ series: a, fromNs: start, toNs: swap }, { series: b, fromNs: swap, toNs: end }], q));
      const want = store.read((v) => renderSeries(v, u, q));
      n++;
      if (got.mode === 'significant-points') {
        const g = got, wnt = want as SignificantPoints;
        if (!(g.count === wnt.count && g.tNs.every((x, i) => x === wnt.tNs[i]) && same(g.v, wnt.v) && same(Float64Array.of(g.percentGood), Float64Array.of(wnt.percentGood), 1e-9))) throw new Error(`significant points differ (width ${width})`);
      } else {
        const g = got, wnt = want as MinMaxBand;
        const tol = q.stat === 'twa' || q.stat === 'percent_good' ? 1e-9 : 0;
        if (!(same(g.tMs, wnt.tMs) && same(g.vMin, wnt.vMin) && same(g.vMax, wnt.vMax) && (g.vStat === null ? wnt.vStat === null : same(g.vStat, wnt.vStat!, tol)))) throw new Error(`band differs (width ${width}, stat ${q.stat})`);
      }
    }), { seed: SEED, numRuns: 30 });
  t.equal(n, 30, `30 random renders equal the union's (fast-check seed ${SEED})`);
});
