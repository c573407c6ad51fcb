// The definition stored rollups must match: every raw point of a series in time order,
// each segment integrated bucket by bucket (both continuities' areas, covered and good time).
import { readRaw, type SeriesStore } from '../../src/storage/series-store.js';

export interface Want { start: bigint; count: number; min: number; max: number; first: number; last: number; stepped: number; linear: number; cov: number; good: number }

const ALL = { startNs: -(2n ** 62n), endNs: 2n ** 62n };

/** The buckets of `interval` ns holding points or covered time, in time order. */
export function rollupOracle(store: SeriesStore, id: string, interval: bigint): Want[] {
  const p = store.read((v) => readRaw(v, id, { ...ALL, limit: 1_000_000 }));
  const buckets = new Map<bigint, Want>();
  const floor = (x: bigint) => x - (((x % interval) + interval) % interval);
  const b = (k: bigint) => {
    let r = buckets.get(k);
    if (!r) { r = { start: k, count: 0, min: Infinity, max: -Infinity, first: NaN, last: NaN, stepped: 0, linear: 0, cov: 0, good: 0 }; buckets.set(k, r); }
    return r;
  };
  for (let i = 0; i < p.count; i++) {
    const r = b(floor(p.ts[i])), v = p.f64![i];
    if (r.count === 0) r.first = v;
    r.count++; r.min = Math.min(r.min, v); r.max = Math.max(r.max, v); r.last = v;
    if (i + 1 === p.count) continue;
    const t0 = p.ts[i], t1 = p.ts[i + 1], v1 = p.f64![i + 1];
    for (let a = t0; a < t1;) {
      const k = floor(a), e = k + interval < t1 ? k + interval : t1;
      const d = Number(e - a);
      const va = v + ((v1 - v) * Number(a - t0)) / Number(t1 - t0), ve = v + ((v1 - v) * Number(e - t0)) / Number(t1 - t0);
      const rr = b(k);
      rr.stepped += v * d; rr.linear += ((va + ve) / 2) * d; rr.cov += d;
      if (p.quality[i] >= 192) rr.good += d;
      a = e;
    }
  }
  return [...buckets.values()].sort((x, y) => (x.start < y.start ? -1 : 1));
}
