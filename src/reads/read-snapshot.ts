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
//   answerFromLatest(table, r, units, o, out, from, to): fills out.points / out.pending
//   writeSnapshotBody(sink, r, units, o, answers): the array body; a JSON item answered from
//     the table is written straight into the sink (its attribute's fixed text kept as bytes
//     between reads), with no string per item
import type { ExcludeQuality } from '../workers/resolved-points.js';
import { ValueConverter, enumRefOf, minQuality, shapeValue } from '../workers/resolved-points.js';
import { snapshotBaseText, snapshotItemObject, type SnapshotItemPoint } from '../workers/tasks/read-snapshot-task.js';
import { mpAny } from '../workers/resolved-points.js';
import { mpArrayHeader } from '../workers/msgpack-bytes.js';
import { stringifyJson } from '../json/json.js';
import type { BodySink } from '../body-sink.js';
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
  /** Per attribute in resolution order, answered from the table: its point (null: none); undefined when pending. */
  points: Array<SnapshotItemPoint | null | undefined>;
  /** Per attribute: 1 when a binding covers the instant (the item says tiers_touched). */
  bound: Uint8Array;
  /** The items of the pending attributes once read from storage: JSON text or plain values (this thread), or the read pool's item bytes. */
  items: Array<string | Record<string, unknown> | Uint8Array | undefined>;
  /** Indexes of the attributes the table cannot answer. */
  pending: number[];
}

export function latestAnswers(n: number): LatestAnswers {
  return { points: new Array(n), bound: new Uint8Array(n), items: new Array(n), pending: [] };
}

/** Attributes answered between two turns of the event loop (10,000 take a few ms). */
export const ANSWER_SLICE = 5_000;

/** Answers the attributes [from, to) of `r` into `out` (see the file header). */
export function answerFromLatest(table: LatestTable, r: ReadResolution, units: Map<string, UnitPlan>, o: LatestAnswerOptions, out: LatestAnswers, from: number, to: number): void {
  const keep = minQuality(o.excludeQuality);
  const upTo = o.upToNs === null ? null : o.upToNs + 1n;
  const slot: LatestRead = { state: UNKNOWN, seq: 0, ts: 0n, value: 0, quality: 0 };
  for (let k = from; k < to; k++) {
    const a = r.attributes[k];
    // as the plan does (read-plan.ts): a segment whose series has no storage record is skipped
    let seg = null;
    for (let i = a.segments.length - 1; i >= 0; i--) if (a.segments[i].valueType !== null) { seg = a.segments[i]; break; }
    if (seg === null) { out.points[k] = null; continue; }
    const u = units.size === 0 ? undefined : units.get(a.attributeId);
    const type = seg.valueType!;
    table.read(seg.seriesId, slot);
    let p: SnapshotItemPoint | null;
    if (slot.state === NONE) p = null;
    else if (slot.state !== POINT) { out.pending.push(k); continue; }
    else {
      let end = seg.boundToNs === null ? INT64_MAX : seg.boundToNs;
      if (upTo !== null && upTo < end) end = upTo;
      if (slot.ts < seg.boundFromNs) p = null;
      else if (slot.ts < end && slot.quality >= keep) {
        const conv = u === undefined || u.identity ? null : new ValueConverter({ factor: u.factor, offset: u.offset });
        p = { ts: slot.ts, value: type === 'float64' && conv === null ? slot.value : shapeValue(slot.value, type, enumRefOf(o.members, { enumSetId: seg.enumSetId }), conv), quality: slot.quality };
      } else { out.pending.push(k); continue; }
    }
    out.points[k] = p;
    out.bound[k] = 1;
  }
}

/**
 * Each attribute's fixed text, `{"attribute_id":…,"path":…,"unit_id":…,"snapshot":`, as
 * UTF-8, kept between reads while its path and unit stay the same.
 */
const heads = new Map<string, { path: string; unitId: string | null; bytes: Uint8Array }>();
const HEADS_KEPT = 1_000_000;

function headOf(attributeId: string, path: string, unitId: string | null): Uint8Array {
  const h = heads.get(attributeId);
  if (h !== undefined && h.path === path && h.unitId === unitId) return h.bytes;
  const bytes = Buffer.from(`{"attribute_id":"${attributeId}","path":${JSON.stringify(path)},"unit_id":${unitId === null ? 'null' : `"${unitId}"`},"snapshot":`, 'utf8');
  if (heads.size >= HEADS_KEPT) heads.clear();
  heads.set(attributeId, { path, unitId, bytes });
  return bytes;
}

/** A value as stringifyJson writes it, without a writer per value for the common kinds. */
function valueText(v: unknown): string {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return JSON.stringify(v);
  return stringifyJson(v);
}

/** The whole array body: the table's answers and the pending items, in resolution order. */
export function writeSnapshotBody(sink: BodySink, r: ReadResolution, units: Map<string, UnitPlan>, o: LatestAnswerOptions, answers: LatestAnswers): void {
  const n = r.attributes.length;
  if (o.format === 'msgpack') {
    const base = { window_resolved: { start_ns: r.window.startNs, end_ns: r.window.endNs }, model_as_of_ns: r.modelAsOfNs };
    mpArrayHeader(sink, n);
    for (let k = 0; k < n; k++) {
      const it = answers.items[k];
      if (it instanceof Uint8Array) { sink.bytes(it); continue; }
      if (it !== undefined) { mpAny(sink, it); continue; }
      const a = r.attributes[k];
      mpAny(sink, snapshotItemObject({ attributeId: a.attributeId, path: a.path, unitId: answeredUnit(a, units) }, answers.points[k] ?? null, answers.bound[k] === 1, base, o.nowNs));
    }
    return;
  }
  const baseText = Buffer.from(`,${snapshotBaseText(String(r.window.startNs), String(r.window.endNs), String(r.modelAsOfNs))}`, 'utf8');
  sink.ascii('[');
  for (let k = 0; k < n; k++) {
    if (k > 0) sink.byte(0x2c);
    const it = answers.items[k];
    if (it instanceof Uint8Array) { sink.bytes(it); continue; }
    if (typeof it === 'string') { sink.utf8(it); continue; }
    const a = r.attributes[k];
    sink.bytes(headOf(a.attributeId, a.path, answeredUnit(a, units)));
    const p = answers.points[k];
    if (p === null || p === undefined) sink.ascii('null');
    else {
      sink.ascii(`{"ts_ns":${p.ts},"value":`);
      sink.utf8(valueText(p.value));
      sink.ascii(`,"quality":${p.quality}}`);
    }
    sink.bytes(baseText);
    if (answers.bound[k] === 1) sink.ascii(',"tiers_touched":["hot"]');
    if (p !== null && p !== undefined && p.ts > o.nowNs) sink.ascii(',"clock_suspect":true');
    sink.ascii('}}');
  }
  sink.ascii(']');
}
