// Decode throughput of one worker (bench/storage.ts): decodes every sealed chunk of a
// series `repeat` times into columns allocated once, and reports points and seconds.
// Not served over HTTP. Body: {points, seconds}
import { allChunks } from '../../storage/chunk-access.js';
import { decodeChunk, MAX_CHUNK_POINTS } from '../../storage/encoding/chunk.js';
import { allocColumns } from '../../storage/point-runs.js';
import { seriesKey } from '../../storage/keys.js';
import { requireMeta } from '../../storage/read-raw.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, type DecodeTask, type TaskOutcome } from '../task-protocol.js';

export function decodeTask(t: DecodeTask): TaskOutcome {
  return runTask(JSON_TYPE, (view, sink) => {
    const meta = requireMeta(view, t.series);
    const series = seriesKey(t.series);
    // chunk bytes are gathered first so the timing covers decoding, not the LMDB walk
    const chunks: Uint8Array[] = [];
    for (const c of allChunks(view, series)) chunks.push(new Uint8Array(c.bytes));
    const cols = allocColumns(meta.type, MAX_CHUNK_POINTS);
    let points = 0;
    const t0 = process.hrtime.bigint();
    for (let r = 0; r < t.repeat; r++) {
      for (const bytes of chunks) points += decodeChunk(bytes, cols);
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    sink.ascii(JSON.stringify({ points, seconds }));
    return points;
  });
}
