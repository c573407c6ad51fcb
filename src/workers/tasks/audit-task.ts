// GET /v1/series/{uuid}/raw-audit in a worker: superseded values with their time in the
// range, oldest first (engine readRawAudit), each with who superseded it and when.
// Body: {series, start_ns, end_ns, entries: [{ts_ns, superseded_at_ns, value, quality,
//        principal}], truncated}
import { readRawAudit, requireMeta } from '../../storage/series-store.js';
import { stringifyJson } from '../../json/json.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, type AuditTask, type TaskOutcome } from '../task-protocol.js';

export function auditTask(t: AuditTask): TaskOutcome {
  return runTask(JSON_TYPE, (view, sink) => {
    const startNs = BigInt(t.startNs), endNs = BigInt(t.endNs);
    const meta = requireMeta(view, t.series);
    const all = readRawAudit(view, t.series, { startNs, endNs, limit: t.limit + 1 });
    const n = Math.min(all.length, t.limit);
    const entries = new Array(n);
    for (let i = 0; i < n; i++) {
      const e = all[i];
      entries[i] = {
        ts_ns: e.ts, superseded_at_ns: e.supersededAtNs,
        value: meta.type === 'enum' ? { enum_set: meta.enumSet?.id ?? null, ordinal: e.value } : e.value,
        quality: e.quality, principal: e.principal,
      };
    }
    sink.utf8(stringifyJson({ series: t.series, start_ns: startNs, end_ns: endNs, entries, truncated: all.length > t.limit }));
    return n;
  });
}
