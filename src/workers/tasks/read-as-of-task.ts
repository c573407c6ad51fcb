// POST /v1/read/as-of in a worker: the segments' points as they were known at knownAtNs.
//
// What storage keeps, and so what this can honour: the edit audit holds every superseded
// value with the instant it was superseded (superseded_at_ns, the service clock), and the
// series record its creation time. It keeps no arrival time for a point that was never
// replaced. So, for a point at time ts with audit entries e1..ek (oldest supersession
// first) and the current value c:
//   - the value known at K is e_j for the first j with e_j.superseded_at > K (e_j was
//     current then), or c when every supersession is at or before K;
//   - e_j for j >= 2 arrived when e_(j-1) was superseded, and c when e_k was: those arrivals
//     are known; e1, and c of a never-edited point, arrived at an unknown time;
//   - a series created after K had no points at K: nothing of it is answered.
// Points whose arrival is unknown are answered as stored, and provenance
// `contains_unknown_arrival` says so: a point that arrived after K without ever being
// edited cannot be told apart from one that was there.
// Body: [{attribute_id, path, unit_id, segments: [{series, start_ns, end_ns, points}], provenance}]
import type { EnumMemberNames } from '../enum-member-text.js';
import { readMeta, readRawAudit, scanRange, MAX_RAW_LIMIT, type ReadView } from '../../storage/series-store.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadAsOfTask, type TaskOutcome } from '../task-protocol.js';
import { converterOf, enumRefOf, enumValue, keyOf, minQuality, outValue, ProvenanceTally, tooLarge, writeItems, type ValueConverter } from '../resolved-points.js';

export function readAsOfTask(t: ReadAsOfTask): TaskOutcome {
  return runTask(t.format === 'msgpack' ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const knownAt = BigInt(t.knownAtNs);
    const keep = minQuality(t.excludeQuality);
    const now = BigInt(t.nowNs);
    const base = { windowStartNs: BigInt(t.windowStartNs), windowEndNs: BigInt(t.windowEndNs), modelAsOfNs: BigInt(t.modelAsOfNs), filtering: t.excludeQuality !== null };
    const budget = { left: t.maxPoints, limit: t.maxPoints };
    let visited = 0;
    const out = t.attributes.map((a) => {
      const tally = new ProvenanceTally(keep, now);
      const unknown = { any: false };
      const segments = a.segments.map((seg) => {
        const points = segmentAsOf(view, seg.series, BigInt(seg.startNs), BigInt(seg.endNs), knownAt, keep, converterOf(a), tally, unknown, budget, t.members);
        visited += points.length;
        return { series: seg.series, start_ns: BigInt(seg.startNs), end_ns: BigInt(seg.endNs), points };
      });
      const provenance = { ...tally.members(base), contains_unknown_arrival: unknown.any };
      return { attribute_id: a.attributeId, path: a.path, unit_id: a.unitId, segments, provenance };
    });
    writeItems(sink, t.format, out, t.fragment);
    return visited;
  });
}

interface Version { value: unknown; quality: number; knownArrival: boolean }

function segmentAsOf(view: ReadView, series: string, startNs: bigint, endNs: bigint, knownAt: bigint, keep: number,
  conv: ValueConverter | null, tally: ProvenanceTally, unknown: { any: boolean }, budget: { left: number; limit: number }, members?: Record<string, EnumMemberNames>) {
  const meta = readMeta(view, series);
  const points: Array<{ ts_ns: bigint; value: unknown; quality: number }> = [];
  if (meta === undefined || meta.createdNs > knownAt) return points;
  const enumSet = enumRefOf(members, meta);
  // the audit of the segment, by point time: the versions each point had before its current one
  const audit = new Map<bigint, Array<{ supersededAt: bigint; value: unknown; quality: number }>>();
  for (const e of readRawAudit(view, series, { startNs, endNs, limit: MAX_RAW_LIMIT })) {
    let list = audit.get(e.ts);
    if (!list) { list = []; audit.set(e.ts, list); }
    const v = conv !== null && typeof e.value === 'number' ? conv.apply(e.value) : conv !== null && typeof e.value === 'bigint' ? conv.apply(Number(e.value)) : meta.type === 'enum' ? enumValue(enumSet, e.value) : e.value;
    list.push({ supersededAt: e.supersededAtNs, value: v, quality: e.quality });
  }
  for (const list of audit.values()) list.sort((x, y) => (x.supersededAt < y.supersededAt ? -1 : x.supersededAt > y.supersededAt ? 1 : 0));
  tally.beginSegment(view, series, startNs, endNs);
  scanRange(view, keyOf(series), startNs, endNs, (cols, i0, i1) => {
    tally.run(cols, i0, i1);
    for (let i = i0; i < i1; i++) {
      const ts = cols.tsBase + BigInt(cols.tsOffset[i]);
      const known = versionAt(audit.get(ts), knownAt, () => ({ value: outValue(cols, i, enumSet, conv), quality: cols.quality[i] }));
      if (!known.knownArrival) unknown.any = true;
      if (known.quality < keep) continue;
      if (budget.left-- <= 0) throw tooLarge(budget.limit);
      points.push({ ts_ns: ts, value: known.value, quality: known.quality });
    }
    return true;
  });
  tally.endSegment(endNs);
  return points;
}

/** The version of one point current at K (see the file header). */
function versionAt(entries: Array<{ supersededAt: bigint; value: unknown; quality: number }> | undefined, knownAt: bigint, current: () => { value: unknown; quality: number }): Version {
  if (entries === undefined) return { ...current(), knownArrival: false };
  for (let j = 0; j < entries.length; j++) {
    if (entries[j].supersededAt > knownAt) return { value: entries[j].value, quality: entries[j].quality, knownArrival: j > 0 };
  }
  return { ...current(), knownArrival: true };
}
