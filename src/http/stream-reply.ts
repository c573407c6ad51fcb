// Answers whose body is sent while it is still being produced: the pieces come in order
// (a sliced raw read's bodies as their read workers finish them, src/http/routes/reads/
// raw-stream.ts) and go out with chunked transfer encoding (uWS res.write), so the client
// receives the first slices while the workers still encode the last. Before, no byte left
// until the last slice was encoded: the hour of 950 attributes waited ~half its time for
// the workers, then sent 49-212 MB (2026-11-28).
//
// Writes follow respond.ts's bounds: slices of SLICE_BYTES, a turn of the event loop ends
// after TURN_MS of sending (so other requests, timers and worker results are served), and a
// full socket (write returns false; uWS keeps a copy of what it could not send) waits for
// onWritable. A piece is handed back (release) once uWS holds no reference to its bytes:
// res.write sends or copies all it is given.
//
// A failure after the first byte cannot become an error envelope (the status line is out):
// the connection is closed without the chunked body's last chunk, which every HTTP client
// reports as an incomplete body (node: 'aborted' / ERR_STREAM_PREMATURE_CLOSE, curl: 18).
// Producers make this rare by deciding everything refusable before the first piece.
import type { Exchange } from './exchange.js';
import type { Headers } from './route.js';

/** One piece of a streamed body: bytes in order, and what hands them back once sent. */
export interface BodyPiece {
  bytes: readonly Uint8Array[];
  release: () => void;
}

/** A body produced while it is sent. */
export interface BodyPieces {
  /** The next piece, or null after the last; rejects when the body cannot be completed. */
  next(): Promise<BodyPiece | null>;
  /** Called once when the body will not be read to the end (client gone, failure): hand back every piece not yet taken. */
  cancel(): void;
}

const SLICE_BYTES = 256 << 10;
/** Same bound as respond.ts's turns: 2-4 ms of loopback sends on this 2-core box. */
const TURN_MS = 3;

const STATUS: Record<number, string> = { 200: '200 OK' };

const immediate = () => new Promise<void>((done) => setImmediate(done));

/**
 * Sends `pieces` as the response body (chunked) after the status and headers. Resolves
 * when the body was sent whole (true) or cut: client gone or a piece failed (false).
 */
export async function sendStream(ex: Exchange, status: number, headers: Headers, pieces: BodyPieces, onError: (e: unknown) => void): Promise<boolean> {
  const res = ex.res;
  let cancelled = false;
  let current: BodyPiece | null = null;
  let wake: (() => void) | null = null;
  const cancel = () => {
    if (cancelled) return;
    cancelled = true;
    current?.release();
    current = null;
    pieces.cancel();
    wake?.();
  };
  if (res.aborted || res.done) { cancel(); return false; }
  res.done = true;
  ex.onAbort = cancel;
  let headersOut = false;
  let turnEnd = performance.now() + TURN_MS;
  for (;;) {
    let piece: BodyPiece | null;
    try {
      piece = await pieces.next();
    } catch (e) {
      onError(e);
      cancel();
      if (!res.aborted) res.close();
      return false;
    }
    if (cancelled) { piece?.release(); return false; }
    if (piece === null) break;
    current = piece;
    for (const b of piece.bytes) {
      for (let off = 0; off < b.byteLength; off += SLICE_BYTES) {
        if (performance.now() > turnEnd) {
          await immediate();
          if (cancelled) return false;
          turnEnd = performance.now() + TURN_MS;
        }
        let ok = true;
        const part = b.subarray(off, Math.min(b.byteLength, off + SLICE_BYTES));
        res.cork(() => {
          if (!headersOut) {
            res.writeStatus(STATUS[status] ?? `${status} Status`);
            for (const [k, v] of headers) res.writeHeader(k, v);
            headersOut = true;
          }
          ok = res.write(part);
        });
        if (!ok) {
          // uWS copied what the socket did not take; the next slice waits until it drains.
          // Resumed from a later turn, not inside the onWritable callback: a write there whose
          // socket fills again registers onWritable from within its own callback, and uWS then
          // never called the new one (the response hung; scratch test, 2026-11-28).
          await new Promise<void>((done) => {
            wake = done;
            res.onWritable(() => { wake = null; setImmediate(done); return true; });
          });
          if (cancelled) return false;
          turnEnd = performance.now() + TURN_MS;
        }
      }
    }
    current = null;
    piece.release();
  }
  ex.onAbort = null;
  res.cork(() => {
    if (!headersOut) {
      res.writeStatus(STATUS[status] ?? `${status} Status`);
      for (const [k, v] of headers) res.writeHeader(k, v);
    }
    res.end();
  });
  return true;
}
