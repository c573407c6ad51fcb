// POST /v1/read/at and /v1/read/sampled in a worker: per attribute, a value at each
// instant (given, or start + k * interval), found under the binding that covers the
// instant and read by the attribute's continuity:
//   - a stored point at exactly the instant: that point (not interpolated);
//   - continuous: linear between the kept points around the instant (interpolated: true,
//     quality the lower of the two); after the last point or before the first: no value;
//   - stepped: the kept point at or before the instant holds (interpolated: true);
//   - event: no value (points stand alone, nothing is between them).
// A dropped point (quality filter) is skipped over, as if not stored. Each segment is read
// once: the kept point before it, its kept points (one range scan, the head decoded once)
// and the kept point after it; the instants then walk those points in order. The points a
// read scans count against max_points. A segment holding more than SEEK_RATIO points per
// instant (chunk headers tell, without decoding) is not scanned: each instant seeks its
// two neighbours instead.
// Body: [{attribute_id, path, unit_id, points: [{ts_ns, value?, quality?, interpolated?, no_value?, series?}], provenance}]
import type { EnumMemberNames } from '../enum-member-text.js';
import { listRange, pointAtOrAfter, readMeta, readOpenColumns, scanRange, type DecodedChunks, type ReadView } from '../../storage/series-store.js';
import type { PointColumns } from '../../storage/encoding/chunk-types.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadAtTask, type TaskOutcome } from '../task-protocol.js';
import {
  converterOf, enumRefOf, keyOf, minQuality, outValue, pointAt, priorPoint, PRIOR_WALK, tooLarge, writeItems, type PlanAttribute, type PlanSegment, type ValueConverter,
} from '../resolved-points.js';

export const NO_VALUE = {
  unbound: 'unbound: no binding covers this instant',
  event: 'event attribute: no point at this instant, and event values are not interpolated',
  before: 'no stored point before this instant under its binding',
  after: 'no stored point after this instant under its binding to interpolate toward',
} as const;

export function readAtTask(t: ReadAtTask): TaskOutcome {
  return runTask(t.format === 'msgpack' ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const instants = t.instants !== null ? t.instants.map((x) => BigInt(x)) : gridOf(t.grid!);
    if (instants.length * t.attributes.length > t.maxPoints) throw tooLarge(t.maxPoints, 'values');
    const keep = minQuality(t.excludeQuality);
    const now = BigInt(t.nowNs);
    const windowStart = BigInt(t.windowStartNs), windowEnd = BigInt(t.windowEndNs);
    const budget = { left: t.maxPoints, limit: t.maxPoints };
    const out = new Array(t.attributes.length);
    let visited = 0;
    for (let k = 0; k < t.attributes.length; k++) {
      const a = t.attributes[k];
      const conv = converterOf(a);
      const points: InstantOut[] = new Array(instants.length);
      let good = 0, valued = 0, interpolated = false, suspect = false;
      let i = 0;
      for (let s = 0; s < a.segments.length; s++) {
        const seg = a.segments[s];
        const segStart = BigInt(seg.startNs), segEnd = BigInt(seg.endNs);
        for (; i < instants.length && instants[i] < segStart; i++) points[i] = { ts_ns: instants[i], no_value: NO_VALUE.unbound };
        let j = i;
        while (j < instants.length && instants[j] < segEnd) j++;
        if (j === i) continue;
        if (sparse(view, seg, j - i)) {
          // few instants over many points: seek the neighbours of each instant instead of scanning
          for (; i < j; i++) {
            const known = neighbours(view, seg, instants[i], keep, conv, t.members);
            visited += known.ts.length;
            if (known.suspect(now)) suspect = true;
            points[i] = valueAt(a, seg, known, known.ts.length > 0 && known.ts[0] <= instants[i] ? 0 : -1, instants[i]);
          }
          continue;
        }
        const known = segmentPoints(view, seg, keep, conv, budget, t.members);
        visited += known.ts.length;
        if (known.suspect(now)) suspect = true;
        for (let p = 0; i < j; i++) {
          const at = instants[i];
          while (p < known.ts.length && known.ts[p] <= at) p++;
          const v = valueAt(a, seg, known, p - 1, at);
          points[i] = v;
        }
      }
      for (; i < instants.length; i++) points[i] = { ts_ns: instants[i], no_value: NO_VALUE.unbound };
      for (const v of points) {
        if (v.value === undefined) continue;
        valued++;
        if ((v.quality as number) >= 192) good++;
        if (v.interpolated) interpolated = true;
      }
      const provenance: Record<string, unknown> = { window_resolved: { start_ns: windowStart, end_ns: windowEnd }, model_as_of_ns: BigInt(t.modelAsOfNs) };
      if (valued > 0) provenance.percent_good = Math.round((1e8 * good) / valued) / 1e6;
      if (interpolated) provenance.computed = a.continuity === 'continuous' ? 'linear-interpolation' : 'previous-value';
      if (a.segments.length > 0) provenance.tiers_touched = ['hot'];
      if (suspect) provenance.clock_suspect = true;
      out[k] = { attribute_id: a.attributeId, path: a.path, unit_id: a.unitId, points, provenance };
    }
    writeItems(sink, t.format, out, t.fragment);
    return visited;
  });
}

function gridOf(g: { startNs: string; intervalNs: string; count: number }): bigint[] {
  const start = BigInt(g.startNs), step = BigInt(g.intervalNs);
  const out = new Array<bigint>(g.count);
  for (let i = 0; i < g.count; i++) out[i] = start + BigInt(i) * step;
  return out;
}

type InstantOut = { ts_ns: bigint; value?: unknown; quality?: number; interpolated?: boolean; no_value?: string; series?: string };

/** The kept points an instant of a segment may use, ascending: the one before the segment, its own, the one after. */
export interface KnownPoints {
  ts: bigint[];
  /** Numeric view (converted), for interpolation. */
  num: number[];
  /** Values as the body carries them. */
  val: unknown[];
  q: number[];
  suspect(now: bigint): boolean;
}

export function segmentPoints(view: ReadView, seg: PlanSegment, keep: number, conv: ValueConverter | null, budget: { left: number; limit: number }, members?: Record<string, EnumMemberNames>): KnownPoints {
  const out: KnownPoints = { ts: [], num: [], val: [], q: [], suspect: () => false };
  const meta = readMeta(view, seg.series);
  if (meta === undefined) return out;
  const key = keyOf(seg.series);
  const head: PointColumns | null = readOpenColumns(view, key);
  const memo: DecodedChunks = new Map();
  const enumSet = enumRefOf(members, meta);
  const start = BigInt(seg.startNs), end = BigInt(seg.endNs);
  const floor = BigInt(seg.boundFromNs), ceiling = seg.boundToNs === null ? null : BigInt(seg.boundToNs);
  const push = (ts: bigint, num: number, val: unknown, q: number) => { out.ts.push(ts); out.num.push(num); out.val.push(val); out.q.push(q); };
  const before = priorPoint(view, key, start, floor, keep, enumSet, conv, memo, head);
  if (before !== null) push(before.ts, before.numeric, before.value, before.quality);
  let last = -1n;
  scanRange(view, key, start, end, (cols, i0, i1) => {
    if ((budget.left -= i1 - i0) < 0) throw tooLarge(budget.limit);
    for (let i = i0; i < i1; i++) {
      if (cols.quality[i] < keep) continue;
      const v = outValue(cols, i, enumSet, conv);
      const num = typeof v === 'number' ? v : cols.type === 'int64' ? Number(cols.i64![i]) : cols.type === 'boolean' ? cols.u8![i] : cols.type === 'enum' ? cols.ord![i] : NaN;
      push(cols.tsBase + BigInt(cols.tsOffset[i]), num, v, cols.quality[i]);
    }
    last = cols.tsBase + BigInt(cols.tsOffset[i1 - 1]);
    return true;
  }, undefined, head);
  const after = keptAfter(view, key, end - 1n, ceiling, keep, memo, head);
  if (after !== null) {
    const p = pointAt(view, key, after, enumSet, conv, head);
    if (p !== null) push(p.ts, p.numeric, p.value, p.quality);
  }
  out.suspect = (now) => last > now;
  return out;
}

/** Points a segment holds per instant above which seeking each instant beats one scan. */
const SEEK_RATIO = 64;

/** Whether the segment holds so many points per instant (chunk headers, no decode) that each instant is sought; `head`: the series' open head when the caller has decoded it already. */
export function sparse(view: ReadView, seg: PlanSegment, instants: number, head?: PointColumns | null): boolean {
  if (readMeta(view, seg.series) === undefined) return false;
  const key = keyOf(seg.series);
  const limit = SEEK_RATIO * instants;
  const listing = listRange(view, key, BigInt(seg.startNs), BigInt(seg.endNs), head === undefined ? readOpenColumns(view, key) : head, limit);
  return !listing.whole || listing.bound > limit;
}

/** The kept points around one instant: the one at or before it and the one after it (each under the segment's binding). */
export function neighbours(view: ReadView, seg: PlanSegment, at: bigint, keep: number, conv: ValueConverter | null, members?: Record<string, EnumMemberNames>): KnownPoints {
  const out: KnownPoints = { ts: [], num: [], val: [], q: [], suspect: () => false };
  const meta = readMeta(view, seg.series);
  if (meta === undefined) return out;
  const key = keyOf(seg.series);
  const head = readOpenColumns(view, key);
  const enumSet = enumRefOf(members, meta);
  const floor = BigInt(seg.boundFromNs), ceiling = seg.boundToNs === null ? null : BigInt(seg.boundToNs);
  const before = priorPoint(view, key, at + 1n, floor, keep, enumSet, conv, undefined, head);
  if (before !== null) { out.ts.push(before.ts); out.num.push(before.numeric); out.val.push(before.value); out.q.push(before.quality); }
  if (before === null || before.ts !== at) {
    const after = keptAfter(view, key, at, ceiling, keep, new Map(), head);
    const p = after === null ? null : pointAt(view, key, after, enumSet, conv, head);
    if (p !== null) { out.ts.push(p.ts); out.num.push(p.numeric); out.val.push(p.value); out.q.push(p.quality); }
  }
  const last = out.ts.length > 0 ? out.ts[out.ts.length - 1] : null;
  out.suspect = (now) => last !== null && last > now;
  return out;
}

/** The time of the kept point after `at` (walking forward past dropped ones), before `ceiling`. */
export function keptAfter(view: ReadView, key: Buffer, at: bigint, ceiling: bigint | null, keep: number, memo: DecodedChunks, head: PointColumns | null): bigint | null {
  let t = at + 1n;
  for (let step = 0; step <= PRIOR_WALK; step++) {
    const p = pointAtOrAfter(view, key, t, head, memo);
    if (p === null || (ceiling !== null && p.ts >= ceiling)) return null;
    if (p.quality >= keep) return p.ts;
    t = p.ts + 1n;
  }
  return null;
}

/** The value at `at` from the known points, j the last one at or before it (-1: none). */
function valueAt(a: PlanAttribute, seg: PlanSegment, k: KnownPoints, j: number, at: bigint): InstantOut {
  if (j >= 0 && k.ts[j] === at) return { ts_ns: at, value: k.val[j], quality: k.q[j], series: seg.series };
  if (a.continuity === 'event') return { ts_ns: at, no_value: NO_VALUE.event, series: seg.series };
  if (j < 0) return { ts_ns: at, no_value: NO_VALUE.before, series: seg.series };
  if (a.continuity === 'stepped') return { ts_ns: at, value: k.val[j], quality: k.q[j], interpolated: true, series: seg.series };
  if (j + 1 >= k.ts.length) return { ts_ns: at, no_value: NO_VALUE.after, series: seg.series };
  const v0 = k.num[j], v1 = k.num[j + 1];
  // offsets from the earlier point stay well inside 2^53 for any two neighbouring points
  const f = Number(at - k.ts[j]) / Number(k.ts[j + 1] - k.ts[j]);
  return { ts_ns: at, value: v0 + (v1 - v0) * f, quality: Math.min(k.q[j], k.q[j + 1]), interpolated: true, series: seg.series };
}
