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

// Large bodies go out with backpressure: tryEnd, then onWritable with offsets relative
// to the write offset taken before the first try. tryEnd hands uWS no copy: it writes
// what the socket takes now (one send of at most the kernel's buffer, a few MB on
// loopback) and leaves the rest in `body` for the next writable event, so a body of any
// size costs the loop one bounded write per event. Returns true when all was written now.
function streamLarge(res: LiveResponse, body: Uint8Array, onSent?: () => void): boolean {
  const total = body.byteLength;
  const base = res.getWriteOffset();
  const [ok, done] = res.tryEnd(body, total);
  if (done || ok) return true;
  res.onWritable((offset) => {
    if (res.aborted) return true;
    const [ok2, done2] = res.tryEnd(body.subarray(offset - base), total);
    if (done2) onSent?.();
    return ok2;
  });
  return false;
}

/** Starts a chunked streaming response (SSE) and returns nothing; later writes must cork. */
export function startStream(res: LiveResponse, status: number, headers: Headers): void {
  res.cork(() => {
    res.writeStatus(statusLine(status));
    for (const [k, v] of headers) res.writeHeader(k, v);
  });
}
