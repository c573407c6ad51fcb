// GET /v1/series/{uuid}/rollups in a worker: stored buckets at one interval over a range
// (engine readRollups), as JSON. NaN statistics (no points, or no covered time) are null.
// Body: {series, interval, continuity, buckets: [{start_ns, count, min, max, first, last,
//        twa, percent_good, covered_ns}], truncated}
import { readRollups } from '../../storage/series-store.js';
import { stringifyJson } from '../../json/json.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, type RollupsTask, type TaskOutcome } from '../task-protocol.js';

const orNull = (v: number) => (Number.isNaN(v) ? null : v);

export function rollupsTask(t: RollupsTask): TaskOutcome {
  return runTask(JSON_TYPE, (view, sink) => {
    // one more than asked tells whether the page was cut short
    const cols = readRollups(view, t.series, { interval: t.interval, startNs: BigInt(t.startNs), endNs: BigInt(t.endNs), continuity: t.continuity, limit: t.limit + 1 });
    const n = Math.min(cols.count, t.limit);
    const buckets = new Array(n);
    for (let i = 0; i < n; i++) {
      buckets[i] = {
        start_ns: cols.bucketStartNs[i], count: cols.points[i],
        min: orNull(cols.min[i]), max: orNull(cols.max[i]), first: orNull(cols.first[i]), last: orNull(cols.last[i]),
        twa: orNull(cols.twa[i]), percent_good: orNull(cols.percentGood[i]), covered_ns: cols.coveredNs[i],
      };
    }
    sink.utf8(stringifyJson({ series: t.series, interval: t.interval, continuity: t.continuity, buckets, truncated: cols.count > t.limit }));
    return n;
  });
}
