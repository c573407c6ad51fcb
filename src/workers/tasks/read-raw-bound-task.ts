// POST /v1/read/raw, streamed (src/http/routes/reads/raw-stream.ts): before the first byte
// of a streamed answer goes out, the read's size must be known to fit max_points, because
// a refusal after it cannot be sent as an error envelope. This task adds up, over its
// attributes' segments, the points of the chunks covering each segment (from their
// headers) and of the open head inside it: an upper bound of the points the raw task will
// write (a chunk cut by a segment's edge counts whole; a quality filter only drops points).
// It stops once the bound passes max_points. The answer is the bound, as the outcome's
// point count (the body is empty).
import { listWholeRange, readMeta } from '../../storage/series-store.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, type ReadRawTask, type TaskOutcome } from '../task-protocol.js';
import { keyOf } from '../resolved-points.js';

export function readRawBoundTask(t: ReadRawTask): TaskOutcome {
  return runTask(JSON_TYPE, (view) => {
    let bound = 0;
    for (const a of t.attributes) {
      for (const seg of a.segments) {
        if (readMeta(view, seg.series) === undefined) continue;
        const left = t.maxPoints - bound;
        const listing = listWholeRange(view, keyOf(seg.series), BigInt(seg.startNs), BigInt(seg.endNs), undefined, left);
        // not whole: the chunks wholly inside the segment alone hold more than what is left
        if (!listing.whole) return t.maxPoints + 1;
        bound += listing.bound;
        if (bound > t.maxPoints) return bound;
      }
    }
    return bound;
  });
}
