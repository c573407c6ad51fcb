// POST /v1/read/snapshot in a worker: per attribute, the latest point of the series its
// binding puts behind it at the instant (readSnapshot: the newest head segment's last point,
// or the last chunk's header and quality section; a decode only when the binding has closed
// or the quality filter drops the latest). Only points inside the binding count: a series
// bound at from_ns answers nothing older than that for this attribute. With a quality
// filter the latest kept point, looking back past at most PRIOR_WALK dropped points. With
// resolve.as_of_ns (upToNs) the latest point at or before that instant.
// Body: [{attribute_id, path, unit_id, snapshot: {ts_ns, value, quality} | null, provenance}]
import { INT64_MAX, readMeta, readSnapshot } from '../../storage/series-store.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadSnapshotTask, type TaskOutcome } from '../task-protocol.js';
import { converterOf, enumRefOf, keyOf, minQuality, priorPoint, shapeValue, writeItems, type ExactPoint, type PlanSegment } from '../resolved-points.js';
import { stringifyJson } from '../../json/json.js';
import type { ReadView } from '../../storage/series-store.js';
import type { ValueType } from '../../storage/encoding/chunk-types.js';

export function readSnapshotTask(t: ReadSnapshotTask): TaskOutcome {
  return runTask(t.format === 'msgpack' ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const keep = minQuality(t.excludeQuality);
    const now = BigInt(t.nowNs);
    const upTo = t.upToNs == null ? null : BigInt(t.upToNs) + 1n;
    const json = t.format === 'json';
    const base = { window_resolved: { start_ns: BigInt(t.windowStartNs), end_ns: BigInt(t.windowEndNs) }, model_as_of_ns: BigInt(t.modelAsOfNs) };
    // the JSON items are written as text (no object per item): the provenance's fixed part once
    const baseText = `"provenance":{"window_resolved":{"start_ns":${t.windowStartNs},"end_ns":${t.windowEndNs}},"model_as_of_ns":${t.modelAsOfNs}`;
    const out = json ? null : new Array(t.attributes.length);
    if (json && !t.fragment) sink.ascii('[');
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
        if (last !== null && last.ts >= from && last.ts < to && last.quality >= keep) {
          p = { ts: last.ts, value: shapeValue(last.value, known.type, enumSet, conv), quality: last.quality, numeric: NaN };
        } else if (last !== null && last.ts >= from) p = priorPoint(view, keyOf(seg.series), last.ts < to ? last.ts : to, from, keep, enumSet, conv);
        points++;
      }
      const suspect = p !== null && p.ts > now;
      if (json) {
        if (k > 0) sink.ascii(',');
        sink.utf8(`{"attribute_id":"${a.attributeId}","path":${JSON.stringify(a.path)},"unit_id":${a.unitId === null ? 'null' : `"${a.unitId}"`},"snapshot":${
          p === null ? 'null' : `{"ts_ns":${p.ts},"value":${stringifyJson(p.value)},"quality":${p.quality}}`},${baseText}${
          seg !== undefined ? ',"tiers_touched":["hot"]' : ''}${suspect ? ',"clock_suspect":true' : ''}}}`);
        continue;
      }
      const provenance: Record<string, unknown> = { ...base };
      if (seg !== undefined) provenance.tiers_touched = ['hot'];
      if (suspect) provenance.clock_suspect = true;
      out![k] = {
        attribute_id: a.attributeId, path: a.path, unit_id: a.unitId,
        snapshot: p === null ? null : { ts_ns: p.ts, value: p.value, quality: p.quality }, provenance,
      };
    }
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
