// The resolved snapshot answered on the HTTP thread from the latest-point table
// (storage/latest-table.ts): per attribute, the slot of the series its binding puts behind it
// at the instant. The answer is the task's (workers/tasks/read-snapshot-task.ts) by the same
// rule, written by the same item writers, so the two paths give the same bytes:
//   - no binding at the instant: null, without tiers_touched;
//   - the series holds no point (NONE), or its latest is older than the binding: null;
//   - its latest lies inside the binding (and at or before as_of_ns) and passes the quality
//     filter: that point;
//   - otherwise (slot UNKNOWN, a latest past the binding's end or as_of_ns,
//     or one the filter drops, whose answer is an older point): the attribute is left for
//     the read pool, which reads storage and fills the slot.
//
//   answerFromLatest(table, r, units, members, o) -> { json | objects, pending }
import type { ExcludeQuality } from '../workers/resolved-points.js';
import { ValueConverter, enumRefOf, minQuality, shapeValue } from '../workers/resolved-points.js';
import { snapshotBaseText, snapshotItemObject, snapshotItemText } from '../workers/tasks/read-snapshot-task.js';
import { INT64_MAX, NONE, POINT, UNKNOWN, type LatestRead, type LatestTable } from '../storage/series-store.js';
import type { EnumMemberNames } from '../series/enum-members.js';
import type { ReadResolution } from './read-resolution.js';
import { answeredUnit, type UnitPlan } from './read-units.js';

export interface LatestAnswerOptions {
  excludeQuality: ExcludeQuality;
  /** resolve.as_of_ns: points after it do not count; null: the latest. */
  upToNs: bigint | null;
  /** The service clock at the request (a later point is clock_suspect). */
  nowNs: bigint;
  format: 'json' | 'msgpack';
  members: Record<string, EnumMemberNames> | undefined;
}

export interface LatestAnswers {
  /** Per attribute in resolution order: its JSON item text (json) or item object (msgpack), or the read pool's item bytes; undefined while pending. */
  items: Array<string | Record<string, unknown> | Uint8Array | undefined>;
  /** Indexes of the attributes the read pool must answer. */
  pending: number[];
}

/** Attributes answered between two turns of the event loop (10,000 take a few ms). */
export const ANSWER_SLICE = 5_000;

/** Answers the attributes [from, to) of `r` into `out` (see the file header). */
export function answerFromLatest(table: LatestTable, r: ReadResolution, units: Map<string, UnitPlan>, o: LatestAnswerOptions, out: LatestAnswers, from: number, to: number): void {
  const keep = minQuality(o.excludeQuality);
  const json = o.format === 'json';
  const baseText = json ? snapshotBaseText(String(r.window.startNs), String(r.window.endNs), String(r.modelAsOfNs)) : '';
  const base = { window_resolved: { start_ns: r.window.startNs, end_ns: r.window.endNs }, model_as_of_ns: r.modelAsOfNs };
  const upTo = o.upToNs === null ? null : o.upToNs + 1n;
  const slot: LatestRead = { state: UNKNOWN, seq: 0, ts: 0n, value: 0, quality: 0 };
  for (let k = from; k < to; k++) {
    const a = r.attributes[k];
    // as the plan does (read-plan.ts): a segment whose series has no storage record is skipped
    let seg = null;
    for (let i = a.segments.length - 1; i >= 0; i--) if (a.segments[i].valueType !== null) { seg = a.segments[i]; break; }
    const u = units.get(a.attributeId);
    const item = { attributeId: a.attributeId, path: a.path, unitId: answeredUnit(a, units) };
    if (seg === null) {
      out.items[k] = json ? snapshotItemText(item, null, false, baseText, o.nowNs) : snapshotItemObject(item, null, false, base, o.nowNs);
      continue;
    }
    const type = seg.valueType!;
    table.read(seg.seriesId, slot);
    let p: { ts: bigint; value: unknown; quality: number } | null;
    if (slot.state === NONE) p = null;
    else if (slot.state !== POINT) { out.pending.push(k); continue; }
    else {
      let end = seg.boundToNs === null ? INT64_MAX : seg.boundToNs;
      if (upTo !== null && upTo < end) end = upTo;
      if (slot.ts < seg.boundFromNs) p = null;
      else if (slot.ts < end && slot.quality >= keep) {
        const conv = u === undefined || u.identity ? null : new ValueConverter({ factor: u.factor, offset: u.offset });
        p = { ts: slot.ts, value: shapeValue(slot.value, type, enumRefOf(o.members, { enumSetId: seg.enumSetId }), conv), quality: slot.quality };
      } else { out.pending.push(k); continue; }
    }
    out.items[k] = json ? snapshotItemText(item, p, true, baseText, o.nowNs) : snapshotItemObject(item, p, true, base, o.nowNs);
  }
}
