// Server-Sent Events: a handler's `{kind: 'sse'}` reply takes the response over. Writes are
// corked and dropped once the client has left; a comment every 15 s keeps proxies from
// dropping an idle stream; the server's close() ends every open stream.
//
// Backpressure: once uWS refuses a write (the socket is full; uWS keeps that write's bytes),
// later events wait in the stream's own queue and go out from onWritable, so what uWS
// holds stays about one event. `backlogBytes` is the queue plus that event: a producer
// (live updates) cuts a slow client off past its limit instead of buffering without bound.
// With an onWritable handler registered uWS leaves draining its buffer to our writes, so a
// writable event with nothing queued writes an empty comment line (`:`) to drain it.
// Events come as text or as framed bytes (live updates' `points`, sendFrame): uWS copies
// what it cannot send at once, so the caller's bytes are copied only when queued here.
import type { Reply, SseSink } from './route.js';
import type { LiveResponse } from './respond.js';
import { startStream } from './respond.js';

export function openStream(res: LiveResponse, reply: Extract<Reply, { kind: 'sse' }>, correlationId: string, streams: Set<SseSink>): void {
  if (res.aborted || res.done) return;
  res.done = true; // the response is now owned by the stream
  const closeCallbacks: Array<() => void> = [];
  let closed = false;
  const shut = () => {
    if (closed) return;
    closed = true;
    clearInterval(ping);
    streams.delete(sink);
    for (const cb of closeCallbacks) { try { cb(); } catch { /* a subscriber's cleanup must not break the others */ } }
  };
  let queue: Array<string | Uint8Array> = [];
  let queuedBytes = 0;
  /** Bytes of the last write uWS refused (it holds them); 0 once a write went through. */
  let heldBytes = 0;
  let waiting = false;
  const push = (text: string | Uint8Array): boolean => {
    let ok = false;
    res.cork(() => { ok = res.write(text); });
    heldBytes = ok ? 0 : lengthOf(text);
    return ok;
  };
  const onWritable = (): boolean => {
    if (closed || res.aborted) return true;
    while (queue.length > 0) {
      const text = queue.shift() as string | Uint8Array;
      queuedBytes -= lengthOf(text);
      if (!push(text)) return true; // still full: the next writable event continues
    }
    if (heldBytes > 0 && !push(':\n')) return true;
    queue = [];
    waiting = false;
    return true;
  };
  const write = (text: string | Uint8Array): boolean => {
    if (closed || res.aborted) return false;
    if (waiting) { queue.push(typeof text === 'string' ? text : text.slice()); queuedBytes += lengthOf(text); return false; }
    if (push(text)) return true;
    waiting = true;
    res.onWritable(onWritable);
    return false;
  };
  const sink: SseSink = {
    send: (event, data, id) => write(frame(event, data, id)),
    sendFrame: (bytes) => write(bytes),
    comment: (text) => write(`: ${text}\n\n`),
    get closed() { return closed; },
    get backlogBytes() { return queuedBytes + heldBytes; },
    onClose: (cb) => { closeCallbacks.push(cb); },
    close: (final) => {
      if (!closed && !res.aborted) {
        queue = [];
        queuedBytes = 0;
        const last = final ? frame(final.event, final.data) : undefined;
        // Closing the connection too: a client that stopped reading must not hold it open.
        res.cork(() => {
          if (last !== undefined) res.write(last);
          res.end(undefined, final !== undefined);
        });
      }
      shut();
    },
  };
  res.onAborted(() => { res.aborted = true; shut(); }); // replaces the pipeline's handler: the stream owns the response now
  streams.add(sink);
  // Proxies drop idle streams; a comment every 15 s keeps them open.
  const ping = setInterval(() => { sink.comment('ping'); }, 15_000);
  ping.unref();
  startStream(res, 200, [['Content-Type', 'text/event-stream'], ['Cache-Control', 'no-cache'], ['X-Correlation-Id', correlationId], ...(reply.headers ?? [])]);
  write(': connected\n\n');
  reply.start(sink);
}

/** Bytes of a queued event (a string's UTF-16 length: the same for the ASCII of event frames). */
const lengthOf = (text: string | Uint8Array): number => (typeof text === 'string' ? text.length : text.byteLength);

function frame(event: string, data: string, id?: string): string {
  return `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${data.replaceAll('\n', '\ndata: ')}\n\n`;
}
