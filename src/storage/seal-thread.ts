// The seal thread: encodes chunks from copies of full heads, off the writer's thread.
// Sealing is a quarter of the ingest thread's work when it runs inside the write
// transaction (docs/decisions.md); here it runs beside it, and the writer stores the
// chunks in a later transaction if the head's front is still what was copied.
import { parentPort } from 'node:worker_threads';
import { fitChunk, fitState } from './chunk-fit.js';
import { slicePointColumns } from './encoding/point-columns.js';
import { encodeChunk } from './encoding/chunk.js';
import { MIN_CHUNK_BYTES } from './encoding/chunk-header.js';
import type { SealReply, SealRequest } from './seal-messages.js';

const port = parentPort;
if (port === null) throw new Error('seal-thread.ts runs only as a worker thread');

port.on('message', (req: SealRequest) => {
  let reply: SealReply;
  try {
    const st = fitState(req.bytesPerPoint);
    const cols = req.cols;
    let lastFromChunk = false;
    if (Number.isNaN(st.bytesPerPoint)) {
      // a series not measured yet: one sample encode of its newest points gives the estimate
      const k = Math.min(cols.count, req.samplePoints);
      const sample = encodeChunk(slicePointColumns(cols, cols.count - k, k));
      st.bytesPerPoint = Math.max(1e-3, (sample.byteLength - MIN_CHUNK_BYTES) / k);
      st.lastBytes = sample.byteLength; st.lastPoints = k;
    }
    const chunks: { bytes: Uint8Array; n: number }[] = [];
    let view = cols;
    for (;;) {
      const c = fitChunk(view, req.budget, false, st);
      if (c === null) break;
      chunks.push(c);
      view = slicePointColumns(view, c.n, view.count - c.n);
    }
    if (st.encodes > 0) lastFromChunk = true;
    reply = { id: req.id, chunks, encodes: st.encodes, lastBytes: st.lastBytes, lastPoints: st.lastPoints, lastFromChunk, error: null };
  } catch (e) {
    reply = { id: req.id, chunks: [], encodes: 0, lastBytes: 0, lastPoints: 0, lastFromChunk: false, error: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply, reply.chunks.map((c) => c.bytes.buffer as ArrayBuffer));
});
port.postMessage({ ready: true });
