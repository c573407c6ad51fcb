// Request bodies are read with a size cap decided from Content-Length up front, or
// while reading a chunked upload: never after buffering it all. uWS neuters each chunk
// when its callback returns, so every chunk is copied.
//
// An oversize body is refused with 413 only once the client has finished sending it: the
// rest is read and thrown away, up to DISCARD_BYTES past the limit. Answering at once and
// closing the connection (before 2026-11-27) made a client that was still sending see a
// broken pipe instead of the 413 (1 in 12 with curl, 3 in 30 with Node's fetch, issue 25).
// Past the bound, or when Content-Length already says the body is past it, the 413 goes
// out at once and the connection is closed: such a client may see a reset.
import type { LiveResponse } from './respond.js';
import { ServiceError } from '../errors.js';

export interface BodyReader {
  /** Resolves with the whole body; rejects with ServiceError('body-too-large') past the limit. */
  readonly done: Promise<Buffer>;
}

/** Bytes past the limit read and discarded so that the 413 reaches the client on a usable connection. */
export const DISCARD_BYTES = 16 << 20;

/** Refusals sent before the body was read to its end: the connection must be closed after the answer. */
const unread = new WeakSet<ServiceError>();
export const leftUnread = (e: ServiceError): boolean => unread.has(e);

/** Must be called synchronously inside the uWS handler (onData cannot be attached later). */
export function readBody(res: LiveResponse, declaredLength: string, limit: number): BodyReader {
  let declared = -1;
  if (declaredLength !== '') {
    declared = Number(declaredLength);
    if (!/^[0-9]+$/.test(declaredLength) || !Number.isSafeInteger(declared)) {
      return refused(closing(new ServiceError('invalid-request', 'content-length: not a valid length')));
    }
    if (declared > limit + DISCARD_BYTES) return refused(closing(tooLarge(limit, declared)));
  }
  const done = new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let over = declared > limit;
    let settled = false;
    res.onData((chunk, isLast) => {
      if (settled) return;
      size += chunk.byteLength;
      if (!over && size > limit) { over = true; parts.length = 0; }
      if (over) {
        // Discard until the client is done, then answer on a connection that can be reused.
        if (isLast) { settled = true; reject(tooLarge(limit, declared >= 0 ? declared : size)); }
        else if (size > limit + DISCARD_BYTES) { settled = true; reject(closing(tooLarge(limit, declared >= 0 ? declared : null))); }
        return;
      }
      if (chunk.byteLength > 0) parts.push(Buffer.from(chunk.slice(0)));
      if (isLast) { settled = true; resolve(parts.length === 1 ? parts[0] : Buffer.concat(parts, size)); }
    });
  });
  // The pipeline may answer (401, 403) before it awaits the body; a late 413 must not become an unhandled rejection.
  done.catch(() => undefined);
  return { done };
}

function tooLarge(limit: number, size: number | null): ServiceError {
  const what = size === null ? 'the body' : `the body of ${size} bytes`;
  return new ServiceError('body-too-large', `${what} exceeds the limit of ${limit} bytes`, { limit_bytes: limit });
}

function closing(e: ServiceError): ServiceError {
  unread.add(e);
  return e;
}
/** Marks a refusal as sent before the body was read to its end (streamed bodies, body-stream.ts). */
export const refusedUnread = closing;

function refused(e: ServiceError): BodyReader {
  const done = Promise.reject(e);
  done.catch(() => undefined);
  return { done };
}
