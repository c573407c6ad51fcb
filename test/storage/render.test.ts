import t from 'tap';
import fc from 'fast-check';
import { columnOf, readRaw, renderSeries, type SignificantPoints, type MinMaxBand } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = 4242;
const ROWS = 40;

/** Bresenham between integer pixel points, keeping pixels inside [0, W). */
function rasterise(xs: number[], ys: number[], W: number): Set<string> {
  const px = new Set<string>();
  const plot = (x: number, y: number) => { if (x >= 0 && x < W) px.add(`${x},${y}`); };
  for (let i = 0; i < xs.length; i++) {
    if (i === 0) { plot(xs[0], ys[0]); continue; }
    let x0 = xs[i - 1], y0 = ys[i - 1];
    const x1 = xs[i], y1 = ys[i];
    const dx = Math.abs(x1 - x0), dy = -Math.abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    let err = dx + dy;
    for (;;) {
      plot(x0, y0);
      if (x0 === x1 && y0 === y1) break;
      const e2 = 2 * err;
      if (e2 >= dy) { err += dy; x0 += sx; }
      if (e2 <= dx) { err += dx; y0 += sy; }
    }
  }
  return px;
}

t.test(`significant-points output draws exactly the pixels of every raw point (fast-check seed ${SEED})`, async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 16 } });
  let headerRuns = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.integer({ min: 0, max: 2_000 }), { minLength: 1, maxLength: 400, size: "max" }),
      fc.array(fc.integer({ min: -50, max: 50 }), { minLength: 400, maxLength: 400 }),
      fc.integer({ min: 1, max: 30 }),
      fc.integer({ min: 0, max: 1_500 }),
      fc.integer({ min: 1, max: 2_500 }),
      async (secs, vals, width, from, len) => {
        const id = newId();
        await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
        const ts = secs.map((s) => T0 + BigInt(s) * 100_000_000n);
        await store.write([f64Batch(id, ts, ts.map((_, i) => vals[i] / 4))], WHO);
        const startNs = T0 + BigInt(from) * 100_000_000n, endNs = startNs + BigInt(len) * 100_000_000n;
        const out = store.read((v) => renderSeries(v, id, { startNs, endNs, width, mode: 'significant-points' })) as SignificantPoints;
        if (out.chunksFromHeaders > 0) headerRuns++;
        const raw = store.read((v) => readRaw(v, id, { startNs: T0 - SEC, endNs: T0 + 10_000n * SEC, limit: 1000 }));
        const span = Number(endNs - startNs);
        const x = (tn: bigint) => columnOf(Number(tn - startNs), width, span);
        const y = (v: number) => Math.floor(((v + 13) / 26) * ROWS);
        const want = rasterise([...raw.ts].map(x), [...raw.f64!].map(y), width);
        const got = rasterise([...out.tNs].map(x), [...out.v].map(y), width);
        return want.size === got.size && [...want].every((p) => got.has(p));
      },
    ),
    { seed: SEED, numRuns: 150 },
  );
  t.ok(headerRuns > 0, `some renders answered chunks from headers alone (${headerRuns})`);
});

t.test('a dense series renders mostly from chunk headers and agrees with the band', async (t) => {
  // chunks of at most 1,000 points, so most lie inside one 2,000-point pixel column whatever
  // the codec's bytes per point (a -0 in this sine forces a chunk into the float split)
  const { store } = await tempStore(t, { seal: { chunkPoints: 1000 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const n = 200_000;
  const ts = BigInt64Array.from({ length: n }, (_, i) => T0 + BigInt(i) * SEC);
  const vs = Float64Array.from({ length: n }, (_, i) => Math.round(Math.sin(i / 300) * 1000) / 10);
  const q = Uint32Array.from({ length: n }, (_, i) => (i >= 100_000 && i < 110_000 ? 0 : 192));
  await store.write([{ series: id, times: ts, values: vs, quality: q }], WHO);
  await store.sealHeads();
  const W = 100, startNs = T0, endNs = T0 + BigInt(n) * SEC;
  const sp = store.read((v) => renderSeries(v, id, { startNs, endNs, width: W, mode: 'significant-points' })) as SignificantPoints;
  t.ok(sp.chunksFromHeaders > sp.chunksDecoded, `headers ${sp.chunksFromHeaders} > decoded ${sp.chunksDecoded}`);
  t.equal(sp.pointsScanned, n);
  t.ok(Math.abs(sp.percentGood - (100 * (n - 1 - 10_000)) / (n - 1)) < 1e-9, 'percent good is time-weighted');
  const band = store.read((v) => renderSeries(v, id, { startNs, endNs, width: W, mode: 'minmax-band', stat: 'count' })) as MinMaxBand;
  const twa = store.read((v) => renderSeries(v, id, { startNs, endNs, width: W, mode: 'minmax-band', stat: 'twa', continuity: 'stepped' })) as MinMaxBand;
  const per = n / W;
  let ok = true;
  for (let c = 0; c < W; c++) {
    let lo = Infinity, hi = -Infinity, area = 0;
    for (let i = c * per; i < (c + 1) * per; i++) { lo = Math.min(lo, vs[i]); hi = Math.max(hi, vs[i]); if (i + 1 < n) area += vs[i]; }
    const cov = c === W - 1 ? per - 1 : per;
    if (band.vMin[c] !== lo || band.vMax[c] !== hi || band.vStat![c] !== per || Math.abs(twa.vStat![c] - area / cov) > 1e-9) ok = false;
  }
  t.ok(ok, 'band min/max/count/twa per column equal brute force');
});

t.test('render refuses strings and bad parameters', async (t) => {
  const { store } = await tempStore(t);
  const s = newId();
  await store.createSeries({ id: s, type: 'string', writableClass: 'manual' });
  const q = { startNs: T0, endNs: T0 + SEC, width: 10, mode: 'significant-points' as const };
  t.throws(() => store.read((v) => renderSeries(v, s, q)), { code: 'invalid-request' });
  t.throws(() => store.read((v) => renderSeries(v, s, { ...q, width: -1 })), { code: 'invalid-request' });
  t.throws(() => store.read((v) => renderSeries(v, s, { ...q, mode: 'lines' as 'minmax-band' })), { code: 'invalid-request' });
  t.throws(() => store.read((v) => renderSeries(v, s, { ...q, mode: 'minmax-band', stat: 'median' as 'min' })), { code: 'invalid-request' });
  t.throws(() => store.read((v) => renderSeries(v, s, { ...q, endNs: T0 })), { code: 'invalid-request' });
});
