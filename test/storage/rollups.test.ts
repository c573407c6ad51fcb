import t, { type Test } from 'tap';
import { readRollups, type SeriesStore } from '../../src/storage/series-store.js';
import { rollupOracle } from '../helpers/rollup-oracle.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const H = 3_600_000_000_000n, D = 24n * H;

function compare(t: Test, store: SeriesStore, id: string, interval: '1h' | '1d', continuity: 'continuous' | 'stepped') {
  const want = rollupOracle(store, id, interval === '1h' ? H : D).map((w) => [w.start, { ...w, area: continuity === 'stepped' ? w.stepped : w.linear }] as const);
  const got = store.read((v) => readRollups(v, id, { interval, startNs: -(2n ** 62n), endNs: 2n ** 62n, continuity }));
  t.equal(got.count, want.length, `${interval} ${continuity}: bucket count`);
  const close = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  let bad = 0;
  want.forEach(([k, w], i) => {
    const ok = got.bucketStartNs[i] === k && got.points[i] === w.count && (w.count === 0 || (got.min[i] === w.min && got.max[i] === w.max && got.first[i] === w.first && got.last[i] === w.last))
      && close(got.twa[i], w.cov > 0 ? w.area / w.cov : NaN) && close(got.percentGood[i], w.cov > 0 ? (100 * w.good) / w.cov : NaN);
    if (!ok) bad++;
  });
  t.equal(bad, 0, `${interval} ${continuity}: every bucket equals the brute-force computation`);
}

t.test('rollups equal a brute-force computation, kept current by appends and repaired after late data', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 200 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  // 30 s cadence over ~2 days, written in appended pieces, with a bad-quality stretch and an outage
  const all: bigint[] = [];
  for (let i = 0; i < 6000; i++) if (i < 3000 || i > 3300) all.push(T0 + BigInt(i) * 30n * SEC + BigInt(i % 5) * 1_000_000n);
  const val = (i: number) => Math.round(Math.sin(i / 50) * 1000) / 10;
  for (let k = 0; k < all.length; k += 700) {
    const ts = all.slice(k, k + 700);
    await store.write([f64Batch(id, ts, ts.map((_, j) => val(k + j)), ts.map((_, j) => ((k + j) % 997 < 40 ? 0 : 192)))], WHO);
  }
  for (const iv of ['1h', '1d'] as const) for (const c of ['continuous', 'stepped'] as const) compare(t, store, id, iv, c);
  // late data: into sealed chunks, into the outage, and a supersede
  const late = [T0 + 45n * SEC, T0 + 3100n * 30n * SEC, T0 + 3200n * 30n * SEC, all[10]];
  const r = await store.write([f64Batch(id, late, [500, -500, 250, 12345])], WHO);
  t.equal(r.accepted, 4);
  for (const iv of ['1h', '1d'] as const) for (const c of ['continuous', 'stepped'] as const) compare(t, store, id, iv, c);
});

t.test('rollups reject unknown intervals and continuities', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  t.throws(() => store.read((v) => readRollups(v, id, { interval: '1m' as '1h', startNs: T0, endNs: T0 + H, continuity: 'stepped' })), { code: 'invalid-request' });
  t.throws(() => store.read((v) => readRollups(v, id, { interval: '1h', startNs: T0, endNs: T0 + H, continuity: 'linear' as 'stepped' })), { code: 'invalid-request' });
});
