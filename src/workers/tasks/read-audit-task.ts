// POST /v1/read/raw-audit in a worker: per attribute, per segment, every superseded value
// with its time in the segment (the engine's edit audit), oldest point time first and, per
// point, in the order it was superseded. Each entry pairs the old version with the one that
// replaced it: the next audit entry of the same point, or the point as stored now (null
// when the point is no longer stored, e.g. dropped by lifecycle).
// Body: [{attribute_id, path, unit_id, entries: [{series, ts_ns, superseded_at_ns, principal, old: {value, quality}, new: {value, quality} | null}], provenance}]
import type { EnumMemberNames } from '../enum-member-text.js';
import { readMeta, readRawAudit, type ReadView } from '../../storage/series-store.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, type ReadAuditTask, type TaskOutcome } from '../task-protocol.js';
import { converterOf, enumRefOf, enumValue, keyOf, pointAt, tooLarge, writeItems, type ValueConverter } from '../resolved-points.js';

export function readAuditTask(t: ReadAuditTask): TaskOutcome {
  return runTask(JSON_TYPE, (view, sink) => {
    let left = t.maxPoints;
    let total = 0;
    const out = t.attributes.map((a) => {
      const conv = converterOf(a);
      const entries: unknown[] = [];
      for (const seg of a.segments) {
        const got = segmentAudit(view, seg.series, BigInt(seg.startNs), BigInt(seg.endNs), conv, left + 1, t.members);
        if (got.length > left) throw tooLarge(t.maxPoints, 'entries', 'max_entries');
        left -= got.length;
        entries.push(...got);
      }
      total += entries.length;
      const provenance: Record<string, unknown> = { window_resolved: { start_ns: BigInt(t.windowStartNs), end_ns: BigInt(t.windowEndNs) }, model_as_of_ns: BigInt(t.modelAsOfNs) };
      if (a.segments.length > 0) provenance.tiers_touched = ['hot'];
      return { attribute_id: a.attributeId, path: a.path, unit_id: a.unitId, entries, provenance };
    });
    writeItems(sink, 'json', out, t.fragment);
    return total;
  });
}

function segmentAudit(view: ReadView, series: string, startNs: bigint, endNs: bigint, conv: ValueConverter | null, limit: number, members?: Record<string, EnumMemberNames>) {
  const meta = readMeta(view, series);
  if (meta === undefined) return [];
  const enumSet = enumRefOf(members, meta);
  const shape = (v: unknown) => (conv !== null && (typeof v === 'number' || typeof v === 'bigint') ? conv.apply(Number(v)) : meta.type === 'enum' ? enumValue(enumSet, v) : v);
  const raw = readRawAudit(view, series, { startNs, endNs, limit });
  // oldest point time first, then by supersession (audit keys sort by time, then superseded_at)
  const out = [];
  const key = keyOf(series);
  for (let i = 0; i < raw.length; i++) {
    const e = raw[i];
    const next = i + 1 < raw.length && raw[i + 1].ts === e.ts ? raw[i + 1] : null;
    let replacement: { value: unknown; quality: number } | null;
    if (next !== null) replacement = { value: shape(next.value), quality: next.quality };
    else {
      const now = pointAt(view, key, e.ts, enumSet, conv);
      replacement = now === null ? null : { value: now.value, quality: now.quality };
    }
    out.push({ series, ts_ns: e.ts, superseded_at_ns: e.supersededAtNs, principal: e.principal, old: { value: shape(e.value), quality: e.quality }, new: replacement });
  }
  return out;
}
