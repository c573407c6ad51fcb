// The seal thread: encodes chunks from copies of full heads, and of whole heads for a quiet
// seal, off the writer's thread.
// Sealing is a quarter of the ingest thread's work when it runs inside the write
// transaction (docs/decisions.md); here it runs beside it, and the writer stores the
// chunks in a later transaction if the head's front is still what was copied.
import { parentPort } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { fullGc } from '../threads/full-gc.js';
import { fitChunk, fitState, sampleNewest } from './chunk-fit.js';
import { slicePointColumns } from './encoding/point-columns.js';
import type { SealReply, SealRequest } from './seal-messages.js';

const port = parentPort;
if (port === null) throw new Error('seal-thread.ts runs only as a worker thread');

/**
 * The copies the thread is sent are garbage once encoded, but this thread allocates so little
 * on its JS heap that V8 collects them only when its external memory is ~64 MB past the last
 * collection: the bulk load's quiet seal left 30-40 MB of them resident (issue 33). Past
 * this many bytes of external memory above the last collection the thread collects itself;
 * its heap is a few MB, so a full collection costs a few milliseconds.
 */
const COLLECT_AFTER_EXTERNAL_BYTES = 16 * 2 ** 20;
let externalAfterCollect = getHeapStatistics().external_memory;

port.on('message', (req: SealRequest) => {
  let reply: SealReply;
  try {
    const st = fitState(req.bytesPerPoint);
    // a whole head is encoded at once when not measured, as the writer's own seal does
    const cols = req.quality < 0 ? req.cols : { ...req.cols, quality: qualityColumn(req.quality, req.cols.count) };
    if (Number.isNaN(st.bytesPerPoint) && !req.all) sampleNewest(cols, st);
    const chunks: { bytes: Uint8Array; n: number }[] = [];
    let view = cols;
    while (view.count > 0) {
      const c = fitChunk(view, req.budget, req.all, st);
      if (c === null) break;
      chunks.push(c);
      view = slicePointColumns(view, c.n, view.count - c.n);
    }
    // the last encode was a chunk's unless fitting encoded nothing after the sample
    reply = { id: req.id, chunks, encodes: st.encodes, lastBytes: st.lastBytes, lastPoints: st.lastPoints, lastFromChunk: st.encodes > 0, error: null };
  } catch (e) {
    reply = { id: req.id, chunks: [], encodes: 0, lastBytes: 0, lastPoints: 0, lastFromChunk: false, error: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply, reply.chunks.map((c) => c.bytes.buffer as ArrayBuffer));
  // after this handler returns, so that this request's copy is garbage too
  if (getHeapStatistics().external_memory - externalAfterCollect > COLLECT_AFTER_EXTERNAL_BYTES) setImmediate(collect);
});

/** Never-written columns of one quality repeated, by quality (a request with `quality` sends none). */
const qualityColumns = new Map<number, Uint32Array>();
const MAX_QUALITY_COLUMNS = 8;

function qualityColumn(quality: number, n: number): Uint32Array {
  let col = qualityColumns.get(quality);
  if (col === undefined || col.length < n) {
    if (col === undefined && qualityColumns.size >= MAX_QUALITY_COLUMNS) qualityColumns.clear();
    col = new Uint32Array(Math.max(n, col === undefined ? 16_384 : 2 * col.length)).fill(quality);
    qualityColumns.set(quality, col);
  }
  return col.subarray(0, n);
}

function collect(): void {
  if (getHeapStatistics().external_memory - externalAfterCollect <= COLLECT_AFTER_EXTERNAL_BYTES) return;
  fullGc();
  externalAfterCollect = getHeapStatistics().external_memory;
}
