// Writing responses through uWebSockets.js. Every write after the handler's synchronous
// part is corked, and nothing is written to a response the client aborted or that was
// already ended (either would throw inside uWS and kill the process).
import type { HttpResponse } from 'uWebSockets.js';
import type { Headers } from './route.js';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 206: 'Partial Content', 302: 'Found', 303: 'See Other', 304: 'Not Modified',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 409: 'Conflict', 413: 'Payload Too Large', 414: 'URI Too Long', 415: 'Unsupported Media Type', 416: 'Range Not Satisfiable', 426: 'Upgrade Required', 429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error', 503: 'Service Unavailable',
};
const statusLine = (status: number) => `${status} ${STATUS_TEXT[status] ?? 'Status'}`;

/**
 * A response body: text, bytes, or bytes in consecutive pieces (a sliced read's parts, sent
 * in order from where they lie instead of being copied into one buffer first); null: none.
 */
export type ResponseBody = Uint8Array | string | null | readonly Uint8Array[];

/** Bodies below this go out with one end call. */
const SMALL_BODY = 64 * 1024;

/** Bytes in all the pieces. */
export function piecesLength(pieces: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of pieces) n += p.byteLength;
  return n;
}

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
  body: ResponseBody,
  opts: { closeConnection?: boolean; onSent?: () => void } = {},
): boolean {
  if (res.aborted || res.done) { opts.onSent?.(); return false; }
  res.done = true;
  let streaming = false;
  const pieces = Array.isArray(body) ? (body as readonly Uint8Array[]) : null;
  // small pieces go out joined, with one end call; large ones from where they lie
  const flat = pieces === null ? (body as Uint8Array | string | null) : piecesLength(pieces) < SMALL_BODY ? Buffer.concat(pieces) : null;
  res.cork(() => {
    res.writeStatus(statusLine(status));
    for (const [k, v] of headers) res.writeHeader(k, v);
    // Only 204 and 304 are bodiless by definition; a bodiless 302/303 still needs
    // Content-Length: 0, or the client waits for a body until the connection closes.
    if (pieces === null && flat === null) { if (status === 204 || status === 304) res.endWithoutBody(); else res.end(''); return; }
    if (flat !== null && (typeof flat === 'string' || flat.byteLength < SMALL_BODY)) { res.end(flat, opts.closeConnection); return; }
    streaming = !streamLarge(res, pieces ?? [flat as Uint8Array], opts.onSent);
  });
  if (!streaming) opts.onSent?.();
  return true;
}

// Large bodies go out with backpressure, in slices, with a bound on the bytes sent per turn
// of the event loop across all responses. tryEnd(slice, total) hands uWS no copy: it sends
// what the socket takes now and leaves the rest in `body`. Handing it the whole remainder
// at once let one send run for 10-12 ms on loopback (the kernel keeps copying while the
// reader drains on the other core), and slicing per response alone still let four large
// responses send 2 MiB each in one turn (16-19 ms of sends back to back in the main
// thread's profile of bench/storage.ts, 2026-11-21): time in which no other request,
// timer or worker result is served. So a response writes its first slice when it is
// answered; the rest goes through one queue, drained from setImmediate round-robin, at
// most TURN_BYTES per turn in all (2-4 ms of copying here at 0.25-0.5 ms per MB); a
// response whose socket is full leaves the queue until onWritable puts it back. With 2 MiB
// a turn in 512 KiB slices the big-series JSON rate was 4-7 % lower (A/B, 3 + 3 runs):
// with the HTTP thread often waiting for a core, the sockets ran dry between turns.
// Since 2026-11-26 a turn also ends after TURN_MS of sending, in 256 KiB slices: measured
// on a busy box, the byte bound alone let turns run 24-62 ms (decisions.md).
// Offsets are relative to the write offset taken before the first try (getWriteOffset
// counts what uWS wrote of this response).
const SLICE_BYTES = 256 << 10;
const TURN_BYTES = 8 << 20;
/**
 * A turn also ends once it has sent for this long. 8 MiB turns measured 24-62 ms on this
 * 2-core box during bench:storage's reads (93 of 2,552 turns over 10 ms, 2026-11-26): a
 * loopback send also runs the receiving side's TCP work, at 3-7 ms per MB when both cores
 * are busy, not the 0.25-0.5 measured on a quiet one.
 */
const TURN_MS = 3;

type Pumped = 'done' | 'full' | 'more';

/** A large body being sent, from its pieces in order. */
class BodyStream {
  private readonly total: number;
  private readonly base: number;
  /** The piece the next byte comes from, and the body offset it starts at. */
  private piece = 0;
  private pieceStart = 0;
  finished = false;
  queued = false;

  constructor(private readonly res: LiveResponse, private readonly pieces: readonly Uint8Array[], private readonly onSent: (() => void) | undefined) {
    this.total = piecesLength(pieces);
    this.base = res.getWriteOffset();
  }

  /** Offers uWS up to `max` more bytes, from one piece at most (the caller corks); returns what happened and the bytes taken. */
  step(max: number): [Pumped, number] {
    const res = this.res;
    const sent = res.getWriteOffset() - this.base;
    // pieces only advance: skip those written whole (and empty ones)
    while (this.piece < this.pieces.length - 1 && this.pieceStart + this.pieces[this.piece].byteLength <= sent) {
      this.pieceStart += this.pieces[this.piece].byteLength;
      this.piece++;
    }
    const body = this.pieces[this.piece];
    const from = sent - this.pieceStart;
    const to = Math.min(body.byteLength, from + max);
    const [ok, done] = res.tryEnd(body.subarray(from, to), this.total);
    if (done) { this.finished = true; return ['done', to - from]; }
    return [ok ? 'more' : 'full', res.getWriteOffset() - this.base - sent];
  }

  get gone(): boolean {
    return this.finished || this.res.aborted === true;
  }

  /** One corked step from outside a uWS callback; runs onSent when it finished the body. */
  stepCorked(max: number): [Pumped, number] {
    let r: [Pumped, number] = ['full', 0];
    this.res.cork(() => { r = this.step(max); });
    if (r[0] === 'done') this.onSent?.();
    return r;
  }
}

const sendQueue: BodyStream[] = [];
let turnScheduled = false;

function enqueue(s: BodyStream): void {
  if (s.queued || s.gone) return;
  s.queued = true;
  sendQueue.push(s);
  if (!turnScheduled) { turnScheduled = true; setImmediate(sendTurn); }
}

/** One turn: round-robin slices over the queued bodies until TURN_BYTES are sent, TURN_MS have passed, or none can take more. */
function sendTurn(): void {
  turnScheduled = false;
  let budget = TURN_BYTES;
  const until = performance.now() + TURN_MS;
  while (budget > 0 && sendQueue.length > 0 && (budget === TURN_BYTES || performance.now() < until)) {
    const s = sendQueue.shift() as BodyStream;
    s.queued = false;
    if (s.gone) continue;
    const [r, taken] = s.stepCorked(Math.min(SLICE_BYTES, budget));
    budget -= taken;
    if (r === 'more') { s.queued = true; sendQueue.push(s); }
  }
  if (sendQueue.length > 0 && !turnScheduled) { turnScheduled = true; setImmediate(sendTurn); }
}

/** Returns true when the whole body was written now (no later callback will read `pieces`). */
function streamLarge(res: LiveResponse, pieces: readonly Uint8Array[], onSent?: () => void): boolean {
  const s = new BodyStream(res, pieces, onSent);
  const [first] = s.step(SLICE_BYTES); // inside writeResponse's cork
  if (first === 'done') return true;
  // A drained socket puts the body back in the queue; the write happens in a later turn.
  res.onWritable(() => { enqueue(s); return true; });
  if (first === 'more') enqueue(s);
  return false;
}

/** Starts a chunked streaming response (SSE) and returns nothing; later writes must cork. */
export function startStream(res: LiveResponse, status: number, headers: Headers): void {
  res.cork(() => {
    res.writeStatus(statusLine(status));
    for (const [k, v] of headers) res.writeHeader(k, v);
  });
}
