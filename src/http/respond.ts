// Writing responses through uWebSockets.js. Every write after the handler's synchronous
// part is corked, and nothing is written to a response the client aborted or that was
// already ended (either would throw inside uWS and kill the process).
import type { HttpResponse } from 'uWebSockets.js';
import type { Headers } from './route.js';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 302: 'Found', 303: 'See Other', 304: 'Not Modified',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 409: 'Conflict', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests',
  500: 'Internal Server Error', 503: 'Service Unavailable',
};
const statusLine = (status: number) => `${status} ${STATUS_TEXT[status] ?? 'Status'}`;

/** A uWS response with the flags that keep us from touching it after abort or end. */
export interface LiveResponse extends HttpResponse {
  aborted?: boolean;
  done?: boolean;
}

/**
 * `onSent` runs once uWS no longer reads `body` (written or copied into its buffers, or
 * never to be written): the moment a lent body buffer may be reused. On an abort while a
 * large body streams, the caller's abort handler must release it (onWritable stops).
 */
export function writeResponse(
  res: LiveResponse,
  status: number,
  headers: Headers,
  body: Uint8Array | string | null,
  opts: { closeConnection?: boolean; onSent?: () => void } = {},
): boolean {
  if (res.aborted || res.done) { opts.onSent?.(); return false; }
  res.done = true;
  let streaming = false;
  res.cork(() => {
    res.writeStatus(statusLine(status));
    for (const [k, v] of headers) res.writeHeader(k, v);
    // Only 204 and 304 are bodiless by definition; a bodiless 302/303 still needs
    // Content-Length: 0, or the client waits for a body until the connection closes.
    if (body === null) { if (status === 204 || status === 304) res.endWithoutBody(); else res.end(''); return; }
    if (typeof body === 'string' || body.byteLength < 64 * 1024) { res.end(body, opts.closeConnection); return; }
    streaming = !streamLarge(res, body, opts.onSent);
  });
  if (!streaming) opts.onSent?.();
  return true;
}

// Large bodies go out with backpressure, in slices, a bounded number of bytes per turn of
// the event loop. tryEnd(slice, total) hands uWS no copy: it sends what the socket takes
// now and leaves the rest in `body`. Handing it the whole remainder at once let one send
// run for 10-12 ms on loopback (the kernel keeps copying while the reader drains on the
// other core; main-thread profile of bench/storage.ts, 2026-11-21), time in which no other
// request, timer or worker result is served. So each callback sends at most TURN_BYTES
// (~0.3-0.5 ms of copying here, at 0.25 ms of service CPU per MB sent) in slices of
// SLICE_BYTES; the rest continues from setImmediate (after the other I/O of this turn),
// or from onWritable once a full socket drains. Offsets are relative to the write offset
// taken before the first try (getWriteOffset counts what uWS wrote of this response).
const SLICE_BYTES = 1 << 20;
const TURN_BYTES = 2 << 20;
type Pumped = 'done' | 'full' | 'more';

/** Returns true when the whole body was written now (no later callback will read `body`). */
function streamLarge(res: LiveResponse, body: Uint8Array, onSent?: () => void): boolean {
  const total = body.byteLength;
  const base = res.getWriteOffset();
  let finished = false;
  let later = false; // a setImmediate continuation is pending
  /** Writes up to TURN_BYTES; 'done', 'full' (onWritable will call again) or 'more'. */
  const pump = (): Pumped => {
    let budget = TURN_BYTES;
    for (;;) {
      const sent = res.getWriteOffset() - base;
      const end = Math.min(total, sent + SLICE_BYTES);
      const [ok, done] = res.tryEnd(body.subarray(sent, end), total);
      if (done) { finished = true; return 'done'; }
      if (!ok) return 'full';
      budget -= end - sent;
      if (budget <= 0) return 'more';
    }
  };
  const resume = () => {
    later = false;
    if (res.aborted || finished) return;
    let r = 'full' as Pumped;
    res.cork(() => { r = pump(); });
    if (r === 'done') onSent?.();
    else if (r === 'more') schedule();
  };
  const schedule = () => { if (!later) { later = true; setImmediate(resume); } };
  const first = pump();
  if (first === 'done') return true;
  res.onWritable(() => {
    if (res.aborted || finished) return true;
    const r = pump();
    if (r === 'done') onSent?.();
    else if (r === 'more') schedule();
    return r !== 'full';
  });
  if (first === 'more') schedule();
  return false;
}

/** Starts a chunked streaming response (SSE) and returns nothing; later writes must cork. */
export function startStream(res: LiveResponse, status: number, headers: Headers): void {
  res.cork(() => {
    res.writeStatus(statusLine(status));
    for (const [k, v] of headers) res.writeHeader(k, v);
  });
}
