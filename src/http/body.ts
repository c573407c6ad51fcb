// Request bodies are read with a size cap decided from Content-Length up front, or
// while reading a chunked upload: never after buffering it all. uWS neuters each chunk
// when its callback returns, so every chunk is copied.
import type { LiveResponse } from './respond.js';
import { ServiceError } from '../errors.js';

export interface BodyReader {
  /** Resolves with the whole body; rejects with ServiceError('body-too-large') past the limit. */
  readonly done: Promise<Buffer>;
}

/** Must be called synchronously inside the uWS handler (onData cannot be attached later). */
export function readBody(res: LiveResponse, declaredLength: string, limit: number): BodyReader {
  if (declaredLength !== '') {
    const n = Number(declaredLength);
    if (!Number.isSafeInteger(n) || n < 0) return refused(new ServiceError('invalid-request', 'content-length: not a valid length'));
    if (n > limit) return refused(new ServiceError('body-too-large', `the body of ${n} bytes exceeds the limit of ${limit} bytes`, { limit_bytes: limit }));
  }
  const done = new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let failed = false;
    res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > limit) {
        failed = true;
        reject(new ServiceError('body-too-large', `the body exceeds the limit of ${limit} bytes`, { limit_bytes: limit }));
        return;
      }
      if (chunk.byteLength > 0) parts.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(parts.length === 1 ? parts[0] : Buffer.concat(parts, size));
    });
  });
  // The pipeline may answer (401, 403) before it awaits the body; a late 413 must not become an unhandled rejection.
  done.catch(() => undefined);
  return { done };
}

function refused(e: ServiceError): BodyReader {
  const done = Promise.reject(e);
  done.catch(() => undefined);
  return { done };
}
