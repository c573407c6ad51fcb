// POST /v1/read/snapshot in a worker: per attribute, the latest point of the series its
// binding puts behind it at the instant (readSnapshot: the newest head segment's last point,
// or the last chunk's header and quality section; a decode only when the binding has closed
// or the quality filter drops the latest). Only points inside the binding count: a series
// bound at from_ns answers nothing older than that for this attribute. With a quality
// filter the latest kept point, looking back past at most PRIOR_WALK dropped points. With
// resolve.as_of_ns (upToNs) the latest point at or before that instant.
// Body: [{attribute_id, path, unit_id, snapshot: {ts_ns, value, quality} | null, provenance}]
// The HTTP thread answers most attributes from the latest-point table (src/reads/
// read-snapshot.ts) and sends only the rest here; this task fills the table's slots it found
// unknown (sequence read before the task's snapshot begins: storage/latest-table.ts rule 3).
// Items are written by snapshotItemText/snapshotItemObject, which the HTTP thread uses too.
import { INT64_MAX, LatestTable, UNKNOWN, readMeta, readSnapshot, type LatestRead } from '../../storage/series-store.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadSnapshotTask, type TaskOutcome } from '../task-protocol.js';
import { converterOf, enumRefOf, keyOf, minQuality, priorPoint, shapeValue, writeItems, type ExactPoint, type PlanAttribute, type PlanSegment } from '../resolved-points.js';
import { stringifyJson } from '../../json/json.js';
import type { ReadView } from '../../storage/series-store.js';
import type { ValueType } from '../../storage/encoding/chunk-types.js';

/** What a snapshot item says besides its attribute: the point (null: none), whether a binding covered the instant. */
export interface SnapshotItemPoint { ts: bigint; value: unknown; quality: number }

/** The provenance's fixed part of every item of one snapshot, as JSON text (without the closing brace). */
export const snapshotBaseText = (windowStartNs: string, windowEndNs: string, modelAsOfNs: string): string =>
  `"provenance":{"window_resolved":{"start_ns":${windowStartNs},"end_ns":${windowEndNs}},"model_as_of_ns":${modelAsOfNs}`;

/** One JSON item (no object per item: written as text). */
export function snapshotItemText(a: { attributeId: string; path: string; unitId: string | null }, p: SnapshotItemPoint | null, bound: boolean, baseText: string, nowNs: bigint): string {
  const suspect = p !== null && p.ts > nowNs;
  return `{"attribute_id":"${a.attributeId}","path":${JSON.stringify(a.path)},"unit_id":${a.unitId === null ? 'null' : `"${a.unitId}"`},"snapshot":${
    p === null ? 'null' : `{"ts_ns":${p.ts},"value":${stringifyJson(p.value)},"quality":${p.quality}}`},${baseText}${
    bound ? ',"tiers_touched":["hot"]' : ''}${suspect ? ',"clock_suspect":true' : ''}}}`;
}

/** One item as plain values (msgpack). */
export function snapshotItemObject(a: { attributeId: string; path: string; unitId: string | null }, p: SnapshotItemPoint | null, bound: boolean,
  base: { window_resolved: { start_ns: bigint; end_ns: bigint }; model_as_of_ns: bigint }, nowNs: bigint): Record<string, unknown> {
  const provenance: Record<string, unknown> = { ...base };
  if (bound) provenance.tiers_touched = ['hot'];
  if (p !== null && p.ts > nowNs) provenance.clock_suspect = true;
  return {
    attribute_id: a.attributeId, path: a.path, unit_id: a.unitId,
    snapshot: p === null ? null : { ts_ns: p.ts, value: p.value, quality: p.quality }, provenance,
  };
}

/**
 * The table's sequence of each attribute's slot when it is unknown (else odd: no fill), read
 * before the snapshot that answers them begins (storage/latest-table.ts, rule 3).
 */
export function fillSequences(table: LatestTable, attributes: readonly PlanAttribute[]): Int32Array {
  const seqs = new Int32Array(attributes.length).fill(1);
  const r: LatestRead = { state: UNKNOWN, seq: 0, ts: 0n, value: 0, quality: 0 };
  for (let k = 0; k < attributes.length; k++) {
    const segs = attributes[k].segments;
    const seg = segs[segs.length - 1];
    if (seg === undefined || seg.valueType === undefined) continue;
    if (table.read(seg.series, r).state === UNKNOWN) seqs[k] = r.seq;
  }
  return seqs;
}

/** What every item of one snapshot shares. */
export interface SnapshotRun {
  attributes: readonly PlanAttribute[];
  windowStartNs: string; windowEndNs: string; modelAsOfNs: string; nowNs: string;
  excludeQuality: ReadSnapshotTask['excludeQuality'];
  upToNs?: string | null;
  members?: ReadSnapshotTask['members'];
  /** With `seqs` (fillSequences): slots to fill from what is read. */
  table: LatestTable | null;
  seqs: Int32Array | null;
}

/**
 * Each attribute's item from storage (see the file header), handed to `item` as JSON text
 * or as plain values; returns the points visited.
 */
export function snapshotItems(view: ReadView, t: SnapshotRun, json: boolean, item: (k: number, it: string | Record<string, unknown>) => void): number {
  const keep = minQuality(t.excludeQuality);
  const now = BigInt(t.nowNs);
  const upTo = t.upToNs == null ? null : BigInt(t.upToNs) + 1n;
  const base = { window_resolved: { start_ns: BigInt(t.windowStartNs), end_ns: BigInt(t.windowEndNs) }, model_as_of_ns: BigInt(t.modelAsOfNs) };
  const baseText = snapshotBaseText(t.windowStartNs, t.windowEndNs, t.modelAsOfNs);
  const { table, seqs } = t;
  let points = 0;
  for (let k = 0; k < t.attributes.length; k++) {
    const a = t.attributes[k];
    const seg = a.segments[a.segments.length - 1];
    let p: ExactPoint | null = null;
    const known = seg === undefined ? null : seriesOf(view, seg);
    if (seg !== undefined && known !== null) {
      const conv = converterOf(a);
      const enumSet = enumRefOf(t.members, known);
      const from = BigInt(seg.boundFromNs);
      let to = seg.boundToNs === null ? INT64_MAX : BigInt(seg.boundToNs);
      if (upTo !== null && upTo < to) to = upTo;
      const last = readSnapshot(view, seg.series, true);
      if (table !== null && seqs !== null && (seqs[k] & 1) === 0) table.fill(seg.series, seqs[k], known.type, last);
      if (last !== null && last.ts >= from && last.ts < to && last.quality >= keep) {
        p = { ts: last.ts, value: shapeValue(last.value, known.type, enumSet, conv), quality: last.quality, numeric: NaN };
      } else if (last !== null && last.ts >= from) p = priorPoint(view, keyOf(seg.series), last.ts < to ? last.ts : to, from, keep, enumSet, conv);
      points++;
    }
    item(k, json ? snapshotItemText(a, p, seg !== undefined, baseText, now) : snapshotItemObject(a, p, seg !== undefined, base, now));
  }
  return points;
}

export function readSnapshotTask(t: ReadSnapshotTask): TaskOutcome {
  const table = t.latest ? LatestTable.attach(t.latest) : null;
  const seqs = table === null ? null : fillSequences(table, t.attributes);
  return runTask(t.format === 'msgpack' ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const json = t.format === 'json';
    const out = json ? null : new Array(t.attributes.length);
    if (json && !t.fragment) sink.ascii('[');
    const points = snapshotItems(view, { ...t, table, seqs }, json, (k, it) => {
      if (!json) { out![k] = it; return; }
      if (k > 0) sink.ascii(',');
      sink.utf8(it as string);
    });
    if (json) { if (!t.fragment) sink.ascii(']'); } else writeItems(sink, t.format, out!, t.fragment);
    return points;
  });
}

/** The series' type and enum set: from the plan when the HTTP thread knew them, else from its meta (undefined: no storage record). */
function seriesOf(view: ReadView, seg: PlanSegment): { type: ValueType; enumSetId: string | null } | null {
  if (seg.valueType !== undefined) return { type: seg.valueType, enumSetId: seg.enumSetId ?? null };
  const meta = readMeta(view, seg.series);
  return meta === undefined ? null : { type: meta.type, enumSetId: meta.enumSet?.id ?? null };
}
