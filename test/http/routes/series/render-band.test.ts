// GET /v1/series/{uuid}/render answers arrays of numbers: a minmax-band leaves out the
// pixel columns without a point (t_ms included), and percent_good is a number for every
// answer, 0 when the range covers no time. Random sparse series (clusters of points with
// empty stretches between them) over real HTTP, JSON and msgpack, against an oracle
// that bins the points itself.
import t from 'tap';
import fc from 'fast-check';
import { Unpackr } from 'msgpackr';
import { startTestService, request } from '../../../helpers/service.js';
import { columnOf } from '../../../../src/storage/render-columns.js';

const BASE = 1_700_000_000_000_000_000n;
const MS = 1_000_000n;
const SEED = 20261127;
const unpack = new Unpackr({ int64AsType: 'bigint', useRecords: false, mapsAsObjects: true });

interface Band { t_ms: number[]; v_min: number[]; v_max: number[]; stat?: string; v_stat?: number[]; percent_good: number; points_scanned: number; transitions: unknown[] }
interface Points { t_ms: number[]; v: number[]; provenance: { mode: string; percentGood: number; pointsScanned: number } }

const isNumberArray = (a: unknown): a is number[] => Array.isArray(a) && a.every((x) => typeof x === 'number' && Number.isFinite(x));

t.test('render answers are arrays of numbers', async (t) => {
  const svc = await startTestService(t);
  const parts = svc.service.context.parts;
  const who = { principal: 'tester' };
  let made = 0;

  /** A new series holding clusters of 1-40 points, one point every 10 ms, with gaps of 0-60 s between clusters. */
  async function sparseSeries(clusters: Array<{ gapMs: number; points: number; bad: boolean }>, values: number[]) {
    const s = await parts.series.create({ sourceName: `band/s${made++}`, valueType: 'float64' }, who);
    const times: bigint[] = [], v: number[] = [], q: number[] = [];
    let at = BASE;
    for (const c of clusters) {
      at += BigInt(c.gapMs) * MS;
      for (let i = 0; i < c.points; i++) {
        at += 10n * MS;
        times.push(at); v.push(values[(times.length - 1) % values.length]); q.push(c.bad ? 0 : 192);
      }
    }
    const w = await parts.storage.write([{ series: s.id, times: BigInt64Array.from(times), values: Float64Array.from(v), quality: Uint32Array.from(q) }], who);
    if (w.refused !== 0) throw new Error('points refused');
    return { id: s.id, times, v };
  }

  const cluster = fc.record({ gapMs: fc.integer({ min: 0, max: 60_000 }), points: fc.integer({ min: 1, max: 40 }), bad: fc.boolean() });
  const stat = fc.constantFrom(undefined, 'count', 'min', 'max', 'first', 'last', 'twa', 'percent_good');

  t.test('a band has one entry per column with a point, the same in JSON and msgpack', async (t) => {
    await fc.assert(fc.asyncProperty(
      fc.array(cluster, { minLength: 1, maxLength: 6 }), fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 20 }),
      fc.integer({ min: 1, max: 300 }), stat, fc.integer({ min: -30_000, max: 30_000 }), fc.integer({ min: 1_000, max: 400_000 }),
      async (clusters, values, width, st, startOffMs, spanMs) => {
        const s = await sparseSeries(clusters, values);
        const startNs = BASE + BigInt(startOffMs) * MS, endNs = startNs + BigInt(spanMs) * MS;
        const url = `${svc.url}/v1/series/${s.id}/render?start_ns=${startNs}&end_ns=${endNs}&width=${width}&mode=minmax-band${st ? `&stat=${st}` : ''}`;
        const r = await request(url);
        if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.text}`);
        const b = r.json as Band;
        // the oracle: bin the points inside the range
        const span = Number(endNs - startNs);
        const lo = new Map<number, number>(), hi = new Map<number, number>(), count = new Map<number, number>();
        s.times.forEach((ts, i) => {
          if (ts < startNs || ts >= endNs) return;
          const c = columnOf(Number(ts - startNs), width, span);
          lo.set(c, Math.min(lo.get(c) ?? Infinity, s.v[i])); hi.set(c, Math.max(hi.get(c) ?? -Infinity, s.v[i])); count.set(c, (count.get(c) ?? 0) + 1);
        });
        const cols = [...count.keys()].sort((a, b) => a - b);
        const startMs = Number(startNs) / 1e6;
        const expect = {
          t_ms: cols.map((c) => startMs + (c * span) / width / 1e6), v_min: cols.map((c) => lo.get(c)!), v_max: cols.map((c) => hi.get(c)!),
        };
        for (const k of ['t_ms', 'v_min', 'v_max'] as const) {
          if (!isNumberArray(b[k])) throw new Error(`${k} holds a non-number: ${r.text.slice(0, 300)}`);
          if (JSON.stringify(b[k]) !== JSON.stringify(expect[k])) throw new Error(`${k}: ${JSON.stringify(b[k])} != ${JSON.stringify(expect[k])}`);
        }
        if (st) {
          if (!isNumberArray(b.v_stat) || b.v_stat.length !== cols.length) throw new Error(`v_stat: ${JSON.stringify(b.v_stat)} for ${cols.length} columns`);
          if (st === 'count' && JSON.stringify(b.v_stat) !== JSON.stringify(cols.map((c) => count.get(c)))) throw new Error('count per column');
          if (st === 'percent_good' && b.v_stat.some((x) => x < 0 || x > 100)) throw new Error('percent_good per column out of 0..100');
        } else if (b.v_stat !== undefined) throw new Error('v_stat without a stat');
        if (typeof b.percent_good !== 'number' || b.percent_good < 0 || b.percent_good > 100) throw new Error(`percent_good ${b.percent_good}`);
        // (a range between two points has no column with data but is covered: percent_good of that segment)
        if (s.times[0] >= endNs && b.percent_good !== 0) throw new Error('a range before the first point has percent_good 0');
        const m = unpack.unpack(new Uint8Array(await (await fetch(url, { headers: { accept: 'application/x-msgpack' } })).arrayBuffer())) as Band;
        for (const k of ['t_ms', 'v_min', 'v_max', 'v_stat', 'percent_good'] as const) {
          if (JSON.stringify(m[k]) !== JSON.stringify(b[k])) throw new Error(`msgpack ${k} differs from JSON`);
        }
      }), { seed: SEED, numRuns: 40, endOnFailure: true });
    t.pass(`40 random bands matched the oracle (seed ${SEED})`);
  });

  t.test('an empty range answers empty arrays and percent_good 0, in both modes', async (t) => {
    const s = await sparseSeries([{ gapMs: 0, points: 5, bad: false }], [1, 2, 3]);
    const before = `start_ns=${BASE - 1_000n * MS}&end_ns=${BASE}&width=50`;
    const band = (await request(`${svc.url}/v1/series/${s.id}/render?${before}&mode=minmax-band&stat=twa`)).json as Band;
    t.same({ t_ms: band.t_ms, v_min: band.v_min, v_max: band.v_max, v_stat: band.v_stat, percent_good: band.percent_good }, { t_ms: [], v_min: [], v_max: [], v_stat: [], percent_good: 0 });
    const pts = (await request(`${svc.url}/v1/series/${s.id}/render?${before}`)).json as Points;
    t.equal(pts.provenance.percentGood, 0, 'significant points: percentGood 0 before the first point');
    t.ok(isNumberArray(pts.v) && isNumberArray(pts.t_ms));
    const zero = (await request(`${svc.url}/v1/series/${s.id}/render?start_ns=${BASE}&end_ns=${BASE + 1_000n * MS}&width=0&mode=minmax-band`)).json as Band;
    t.same([zero.t_ms, zero.percent_good], [[], 0], 'width 0 draws nothing');
    // one point and nothing after it: its column covers no time; twa and percent_good are its own value and quality
    const one = await sparseSeries([{ gapMs: 0, points: 1, bad: false }], [42.5]);
    const lone = (await request(`${svc.url}/v1/series/${one.id}/render?start_ns=${BASE}&end_ns=${BASE + 1_000n * MS}&width=10&mode=minmax-band&stat=twa`)).json as Band;
    t.same([lone.t_ms.length, lone.v_min, lone.v_stat, lone.percent_good], [1, [42.5], [42.5], 0]);
    const loneGood = (await request(`${svc.url}/v1/series/${one.id}/render?start_ns=${BASE}&end_ns=${BASE + 1_000n * MS}&width=10&mode=minmax-band&stat=percent_good`)).json as Band;
    t.same(loneGood.v_stat, [100], 'a lone good point is 100 % good in its column');
  });
});
