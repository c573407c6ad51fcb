// A request body handed to the handler chunk by chunk instead of buffered whole: for
// uploads (annotation attachments) that may be far larger than memory should hold. A route
// asks for it with `streamBody` (route.ts); server.ts makes the BodyStream instead of a
// BodyReader, synchronously inside the uWS handler (onData cannot be attached later).
//
// The socket is paused at once (uWS res.pause) so nothing piles up while the pipeline
// authenticates and authorizes; the handler's pipe() resumes it and pauses it again
// whenever more than HIGH_WATER bytes wait for the handler's writes (a slow disk), so
// what the process holds stays bounded whatever the body's size.
//
// Past the limit the rest of the body is read and dropped up to DISCARD_BYTES, then 413, as
// body.ts does for buffered bodies (a client still sending should see the 413, not a reset).
import type { LiveResponse } from './respond.js';
import { ServiceError } from '../errors.js';
import { DISCARD_BYTES, refusedUnread } from './body.js';

/** Bytes received but not yet taken by the handler, above which the socket is paused. */
const HIGH_WATER = 1 << 20;
/** ... and below which it is resumed. */
const LOW_WATER = 256 << 10;
/**
 * Chunks are copied into slots of this size, reused once the handler's write of them
 * resolved: a 100 MB upload copied into fresh buffers grew the service's RSS by 34-37 MB
 * of garbage ArrayBuffers waiting for a GC; with reuse, by 1-3 MB (3 uploads each, loaded
 * 2-core box, 2026-11-27).
 */
const SLOT_BYTES = 256 << 10;
const SPARE_SLOTS = 8;

type Mode = 'waiting' | 'piping' | 'discarding' | 'done';

export class BodyStream {
  /** Copied chunks waiting for the handler: a slot and how many of its bytes are the body's. */
  private readonly queue: Array<{ slot: Buffer; length: number }> = [];
  private readonly spare: Buffer[] = [];
  private queued = 0;
  private size = 0;
  private ended = false;
  private paused = false;
  private mode: Mode = 'waiting';
  private wake: (() => void) | null = null;
  /** Settles a discard (the 413 waits for the client to finish sending). */
  private discardDone: ((e: ServiceError) => void) | null = null;

  /** `declared`: the Content-Length, or -1 when the body is chunked. */
  constructor(private readonly res: LiveResponse, readonly declared: number, private readonly limit: number) {
    res.onData((chunk, isLast) => this.onChunk(chunk, isLast));
    this.pause();
  }

  /** The refusal due before any byte is read (a declared length far past the limit), or null. */
  static refusalFor(declaredLength: string, limit: number): ServiceError | null {
    if (declaredLength === '') return null;
    const n = Number(declaredLength);
    if (!/^[0-9]+$/.test(declaredLength) || !Number.isSafeInteger(n)) return refusedUnread(new ServiceError('invalid-request', 'content-length: not a valid length'));
    if (n > limit + DISCARD_BYTES) return refusedUnread(tooLarge(limit, n));
    return null;
  }

  /**
   * Hands every chunk to `write`, in order, each awaited before the next; resolves with the
   * body's size. Rejects with body-too-large past the limit (after the client has finished
   * sending, within DISCARD_BYTES), or with an AbortError when the client leaves.
   */
  async pipe(write: (chunk: Buffer) => Promise<void>, signal: AbortSignal): Promise<number> {
    if (this.mode !== 'waiting') throw new ServiceError('internal', 'BodyStream.pipe: the body was already taken');
    if (this.declared > this.limit) return this.refuse();
    this.mode = 'piping';
    const aborted = () => { this.wake?.(); };
    signal.addEventListener('abort', aborted);
    try {
      this.resume();
      for (;;) {
        if (signal.aborted) throw Object.assign(new Error('the client left during the upload'), { name: 'AbortError' });
        if (this.size > this.limit) return await this.refuse();
        const next = this.queue.shift();
        if (next === undefined) {
          if (this.ended) return this.size;
          await new Promise<void>((r) => { this.wake = r; });
          this.wake = null;
          continue;
        }
        this.queued -= next.length;
        if (this.paused && this.queued < LOW_WATER) this.resume();
        await write(next.slot.subarray(0, next.length));
        if (this.spare.length < SPARE_SLOTS) this.spare.push(next.slot);
      }
    } finally {
      signal.removeEventListener('abort', aborted);
    }
  }

  /** Reads and drops whatever of the body is left (the request was answered without it). */
  discard(): void {
    if (this.mode === 'done' || this.mode === 'discarding') return;
    this.mode = 'discarding';
    this.queue.length = 0;
    this.spare.length = 0;
    this.queued = 0;
    this.resume();
  }

  private refuse(): Promise<number> {
    this.discard();
    return new Promise<number>((_ok, fail) => {
      if (this.ended) { fail(tooLarge(this.limit, this.size)); return; }
      this.discardDone = fail;
    });
  }

  private onChunk(chunk: ArrayBuffer, isLast: boolean): void {
    this.size += chunk.byteLength;
    if (isLast) this.ended = true;
    if (this.mode === 'discarding') {
      if (this.discardDone && isLast) { this.discardDone(tooLarge(this.limit, this.declared >= 0 ? this.declared : this.size)); this.discardDone = null; this.mode = 'done'; }
      else if (this.discardDone && this.size > this.limit + DISCARD_BYTES) { this.discardDone(refusedUnread(tooLarge(this.limit, null))); this.discardDone = null; this.mode = 'done'; }
      return;
    }
    if (this.mode === 'done') return;
    // uWS neuters the chunk when this callback returns: copy it, into reused slots
    if (chunk.byteLength > 0 && this.size <= this.limit) {
      const bytes = new Uint8Array(chunk);
      for (let at = 0; at < bytes.length; at += SLOT_BYTES) {
        const part = bytes.subarray(at, Math.min(bytes.length, at + SLOT_BYTES));
        const slot = this.spare.pop() ?? Buffer.allocUnsafeSlow(SLOT_BYTES);
        slot.set(part);
        this.queue.push({ slot, length: part.length });
      }
      this.queued += chunk.byteLength;
      if (this.queued > HIGH_WATER) this.pause();
    }
    this.wake?.();
  }

  private pause(): void {
    if (this.paused || this.res.aborted || this.res.done) return;
    this.res.pause();
    this.paused = true;
  }

  private resume(): void {
    if (!this.paused || this.res.aborted || this.res.done) return;
    this.res.resume();
    this.paused = false;
  }
}

function tooLarge(limit: number, size: number | null): ServiceError {
  const what = size === null ? 'the body' : `the body of ${size} bytes`;
  return new ServiceError('body-too-large', `${what} exceeds the limit of ${limit} bytes`, { limit_bytes: limit });
}
