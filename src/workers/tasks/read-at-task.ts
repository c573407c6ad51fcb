// POST /v1/read/at and /v1/read/sampled in a worker: per attribute, a value at each
// instant (given, or start + k * interval), found under the binding that covers the
// instant and read by the attribute's continuity:
//   - a stored point at exactly the instant: that point (not interpolated);
//   - continuous: linear between the kept points around the instant (interpolated: true,
//     quality the lower of the two); after the last point or before the first: no value;
//   - stepped: the kept point at or before the instant holds (interpolated: true);
//   - event: no value (points stand alone, nothing is between them).
// A dropped point (quality filter) is skipped over, as if not stored. Each lookup is a
// chunk-index seek; decoded chunks are kept for the task (DecodedChunks) so a grid over one
// chunk decodes it once.
// Body: [{attribute_id, path, unit_id, points: [{ts_ns, value?, quality?, interpolated?, no_value?, series?}], provenance}]
import { pointAtOrAfter, pointBefore, readMeta, type DecodedChunks, type ReadView } from '../../storage/series-store.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadAtTask, type TaskOutcome } from '../task-protocol.js';
import {
  converterOf, keyOf, minQuality, pointAt, PRIOR_WALK, tooLarge, writeItems, type ExactPoint, type PlanAttribute, type PlanSegment, type ValueConverter,
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
    const out = new Array(t.attributes.length);
    let visited = 0;
    for (let k = 0; k < t.attributes.length; k++) {
      const a = t.attributes[k];
      const conv = converterOf(a);
      const memo: DecodedChunks = new Map();
      const points = new Array(instants.length);
      let good = 0, valued = 0, interpolated = false, suspect = false;
      let s = 0;
      for (let i = 0; i < instants.length; i++) {
        const at = instants[i];
        while (s < a.segments.length && BigInt(a.segments[s].endNs) <= at) { s++; memo.clear(); }
        const seg = s < a.segments.length && BigInt(a.segments[s].startNs) <= at ? a.segments[s] : undefined;
        const v = seg === undefined ? { ts_ns: at, no_value: NO_VALUE.unbound } : valueAt(view, a, seg, at, keep, conv, memo);
        points[i] = v;
        visited++;
        if ('value' in v) {
          valued++;
          if ((v.quality as number) >= 192) good++;
          if (v.interpolated) interpolated = true;
        }
      }
      for (const seg of a.segments) {
        const last = pointBefore(view, keyOf(seg.series), BigInt(seg.endNs));
        if (last !== null && last.ts > now && last.ts >= BigInt(seg.startNs)) suspect = true;
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

/** The kept point at or before `at` (walking back past dropped ones), within [floor, ...). */
function keptAtOrBefore(view: ReadView, key: Buffer, at: bigint, floor: bigint, keep: number, memo: DecodedChunks) {
  let t = at + 1n;
  for (let step = 0; step <= PRIOR_WALK; step++) {
    const p = pointBefore(view, key, t, undefined, memo);
    if (p === null || p.ts < floor) return null;
    if (p.quality >= keep) return p;
    t = p.ts;
  }
  return null;
}

/** The kept point after `at` (walking forward past dropped ones), before `ceiling`. */
function keptAfter(view: ReadView, key: Buffer, at: bigint, ceiling: bigint | null, keep: number, memo: DecodedChunks) {
  let t = at + 1n;
  for (let step = 0; step <= PRIOR_WALK; step++) {
    const p = pointAtOrAfter(view, key, t, undefined, memo);
    if (p === null || (ceiling !== null && p.ts >= ceiling)) return null;
    if (p.quality >= keep) return p;
    t = p.ts + 1n;
  }
  return null;
}

function valueAt(view: ReadView, a: PlanAttribute, seg: PlanSegment, at: bigint, keep: number, conv: ValueConverter | null, memo: DecodedChunks): InstantOut {
  const meta = readMeta(view, seg.series);
  if (meta === undefined) return { ts_ns: at, no_value: NO_VALUE.unbound };
  const key = keyOf(seg.series);
  const floor = BigInt(seg.boundFromNs);
  const ceiling = seg.boundToNs === null ? null : BigInt(seg.boundToNs);
  const enumSet = meta.enumSet?.id ?? null;
  const before = keptAtOrBefore(view, key, at, floor, keep, memo);
  if (before !== null && before.ts === at) return exact(pointAt(view, key, at, enumSet, conv)!, seg.series, false);
  if (a.continuity === 'event') return { ts_ns: at, no_value: NO_VALUE.event, series: seg.series };
  if (before === null) return { ts_ns: at, no_value: NO_VALUE.before, series: seg.series };
  if (a.continuity === 'stepped') {
    const held = pointAt(view, key, before.ts, enumSet, conv)!;
    return { ...exact(held, seg.series, true), ts_ns: at };
  }
  const after = keptAfter(view, key, at, ceiling, keep, memo);
  if (after === null) return { ts_ns: at, no_value: NO_VALUE.after, series: seg.series };
  const v0 = conv !== null ? conv.apply(before.v) : before.v;
  const v1 = conv !== null ? conv.apply(after.v) : after.v;
  // offsets from `before` stay well inside 2^53 for any two neighbouring points
  const f = Number(at - before.ts) / Number(after.ts - before.ts);
  return { ts_ns: at, value: v0 + (v1 - v0) * f, quality: Math.min(before.quality, after.quality), interpolated: true, series: seg.series };
}

function exact(p: ExactPoint, series: string, interpolated: boolean): InstantOut {
  return interpolated ? { ts_ns: p.ts, value: p.value, quality: p.quality, interpolated: true, series } : { ts_ns: p.ts, value: p.value, quality: p.quality, series };
}
