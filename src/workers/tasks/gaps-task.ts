// GET /v1/series/{uuid}/gaps in a worker: declared gaps plus intervals longer than the
// series' own cadence allows (engine readGaps: 3x the median interval in the range).
// Body: {series, start_ns, end_ns, cadence_ns, gaps: [{start_ns, end_ns, kind, reason}]}
// kind 'declared' (the collector said so, with its reason) or 'detected' (reason null).
import { readGaps } from '../../storage/series-store.js';
import { stringifyJson } from '../../json/json.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, type GapsTask, type TaskOutcome } from '../task-protocol.js';

export function gapsTask(t: GapsTask): TaskOutcome {
  return runTask(JSON_TYPE, (view, sink) => {
    const startNs = BigInt(t.startNs), endNs = BigInt(t.endNs);
    const r = readGaps(view, t.series, { startNs, endNs });
    const gaps = [
      ...r.declared.map((g) => ({ start_ns: g.startNs, end_ns: g.endNs, kind: 'declared', reason: g.reason })),
      ...r.detected.map((g) => ({ start_ns: g.startNs, end_ns: g.endNs, kind: 'detected', reason: null })),
    ].sort((a, b) => (a.start_ns < b.start_ns ? -1 : a.start_ns > b.start_ns ? 1 : 0));
    sink.utf8(stringifyJson({
      series: t.series, start_ns: startNs, end_ns: endNs,
      cadence_ns: r.cadenceNs === null ? null : BigInt(Math.round(r.cadenceNs)), gaps,
    }));
    return gaps.length;
  });
}
