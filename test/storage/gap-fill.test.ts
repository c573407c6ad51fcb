// History written where no stored point lies (before a series' first chunk, between two
// chunks, or between the last chunk and the open head) is sealed without a merge. Oracle: a second store given the same points in time
// order. Both must read back the same points and the same rollups, and the history must
// still fill its chunks (a partial chunk in front of the next batch is re-encoded with it).
import t from 'tap';
import fc from 'fast-check';
import { readRaw, readRawAudit, readRollups, listChunks, type SeriesStore } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? 20261121);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const ALL = { startNs: -(2n ** 62n), endNs: 2n ** 62n };

function raw(store: SeriesStore, id: string) {
  const p = store.read((v) => readRaw(v, id, { ...ALL, limit: 1_000_000 }));
  return { ts: [...p.ts.subarray(0, p.count)], v: [...p.f64!.subarray(0, p.count)] };
}

/** Every rollup of both stores equal (areas within 1e-9 relative: sums run in another order). */
function sameRollups(a: SeriesStore, b: SeriesStore, id: string): string | null {
  for (const interval of ['1h', '1d'] as const) {
    for (const continuity of ['continuous', 'stepped'] as const) {
      const q = { interval, ...ALL, continuity };
      const x = a.read((v) => readRollups(v, id, q)), y = b.read((v) => readRollups(v, id, q));
      if (x.count !== y.count) return `${interval} ${continuity}: ${x.count} buckets, want ${y.count}`;
      const close = (p: number, r: number) => (Number.isNaN(p) && Number.isNaN(r)) || Math.abs(p - r) <= 1e-9 * Math.max(1, Math.abs(r));
      for (let i = 0; i < x.count; i++) {
        if (x.bucketStartNs[i] !== y.bucketStartNs[i] || x.points[i] !== y.points[i] || !close(x.min[i], y.min[i]) || !close(x.max[i], y.max[i])
          || !close(x.first[i], y.first[i]) || !close(x.last[i], y.last[i]) || !close(x.twa[i], y.twa[i]) || !close(x.percentGood[i], y.percentGood[i]) || x.coveredNs[i] !== y.coveredNs[i]) {
          return `${interval} ${continuity}: bucket ${x.bucketStartNs[i]} differs`;
        }
      }
    }
  }
  return null;
}

const cleanups: Array<() => unknown> = [];

t.test('history before the first chunk, inside a gap between chunks or before an open head reads back, rolls up and fills chunks like data written in order', async (t) => {
  let runs = 0;
  await fc.assert(fc.asyncProperty(
    fc.integer({ min: 1, max: 6 }), fc.integer({ min: 20, max: 400 }), fc.integer({ min: 16, max: 200 }), fc.constantFrom('before-chunks', 'gap', 'before-head'),
    async (historyBatches, batchPoints, chunkPoints, where) => {
      const opts = { seal: { chunkPoints }, groupWindowMs: 0 };
      const { store } = await tempStore({ teardown: (fn) => { cleanups.push(fn); } }, opts);
      const { store: oracle } = await tempStore({ teardown: (fn) => { cleanups.push(fn); } }, opts);
      const id = newId();
      for (const s of [store, oracle]) await s.createSeries({ id, type: 'float64', writableClass: 'collector' });
      // live data: two runs 10 days apart (a gap between chunks), enough to seal chunks; or,
      // for 'before-head', a few points that stay in the open head (nothing sealed yet)
      const live: bigint[] = [];
      const perRun = where === 'before-head' ? Math.max(1, chunkPoints >> 2) : 3 * chunkPoints;
      for (let i = 0; i < perRun; i++) live.push(T0 + BigInt(i) * 10n * SEC);
      if (where !== 'before-head') for (let i = 0; i < perRun; i++) live.push(T0 + 10n * 86_400n * SEC + BigInt(i) * 10n * SEC);
      // history: consecutive batches in time order, before the first chunk (or the head) or inside the gap
      const histStart = where === 'gap' ? T0 + 3n * 86_400n * SEC : T0 - 400n * 86_400n * SEC;
      const history: bigint[][] = [];
      for (let b = 0; b < historyBatches; b++) history.push(Array.from({ length: batchPoints }, (_, i) => histStart + BigInt(b * batchPoints + i) * 7n * SEC));
      const value = (x: bigint) => Number((x / SEC) % 1000n) / 4;
      const batch = (ts: bigint[]) => f64Batch(id, ts, ts.map(value));
      for (let k = 0; k < live.length; k += 100) await store.write([batch(live.slice(k, k + 100))], WHO);
      for (const h of history) await store.write([batch(h)], WHO);
      const inOrder = [...history.flat(), ...live].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (let k = 0; k < inOrder.length; k += 100) await oracle.write([batch(inOrder.slice(k, k + 100))], WHO);

      const got = raw(store, id), want = raw(oracle, id);
      const samePoints = got.ts.length === want.ts.length && got.ts.every((x, i) => x === want.ts[i] && Object.is(got.v[i], want.v[i]));
      const rollups = sameRollups(store, oracle, id);
      const chunks = store.read((v) => listChunks(v, id, ALL)).filter((c) => c.sealed);
      const disjoint = chunks.every((c, i) => i === 0 || c.startNs > chunks[i - 1].endNs) && chunks.every((c) => c.count <= chunkPoints);
      // the history fills chunks: at most one partly filled chunk more than points / chunkPoints (or the byte budget) needs
      const histLo = histStart, histHi = history[history.length - 1][batchPoints - 1];
      const histChunks = chunks.filter((c) => c.startNs >= histLo && c.endNs <= histHi);
      const oracleHist = oracle.read((v) => listChunks(v, id, ALL)).filter((c) => c.sealed && c.startNs >= histLo && c.endNs <= histHi);
      const filled = histChunks.length <= Math.max(oracleHist.length, Math.ceil((historyBatches * batchPoints) / chunkPoints)) + 1;
      // resending a history batch is a no-op; a changed value supersedes into the audit
      const again = await store.write([batch(history[0])], WHO);
      const changed = await store.write([f64Batch(id, [history[0][0]], [-1])], WHO);
      const audit = store.read((v) => readRawAudit(v, id, { ...ALL, limit: 1000 }));
      while (cleanups.length) await cleanups.pop()!();
      runs++;
      if (!samePoints || rollups !== null || !disjoint || !filled) {
        t.comment(`points ${samePoints}, rollups ${rollups}, disjoint ${disjoint}, chunks ${histChunks.length} (in order ${oracleHist.length})`);
        return false;
      }
      return again.accepted === 0 && again.batches[0].unchanged === batchPoints && changed.batches[0].superseded === 1 && audit.length === 1;
    }), { seed: SEED, numRuns: 36 });
  t.ok(runs >= 36, `${runs} runs`);
});
