// Response bodies in SharedArrayBuffers that a read worker reuses across tasks. A task
// writes its body straight into a slab; the slab is lent to the HTTP thread, which sends
// the bytes from it and hands it back by storing FREE into the slab's state word once uWS
// no longer reads them (sent, copied or aborted). Nothing is copied between threads and,
// once warm, nothing is allocated: a fresh SharedArrayBuffer per response cost a copy of
// the whole body plus a page fault per 4 KiB on first touch, and its freeing fell to the
// main thread's garbage collector (bench/storage.ts, 2025-11-21).
//
// Layout of a slab: Int32 state at byte 0 (FREE | LENT), body from byte 8.

const FREE = 0;
const LENT = 1;
export const SLAB_HEADER_BYTES = 8;

const INITIAL_BYTES = 1 << 20;
/**
 * Slabs kept per worker. A worker runs one task at a time, but the HTTP thread may still
 * be sending earlier bodies to slow clients; beyond this many lent at once, a slab is
 * allocated for one use and left to the garbage collector.
 */
const MAX_SLABS = 3;
/** Larger slabs (a 10M-point page) are used once, not kept: memory over reuse. */
const MAX_RETAINED_BYTES = 96 * 2 ** 20;

export class BodySlab {
  readonly sab: SharedArrayBuffer;
  readonly state: Int32Array;
  /** The body region (after the header). */
  readonly body: Uint8Array;

  constructor(bodyBytes: number) {
    this.sab = new SharedArrayBuffer(SLAB_HEADER_BYTES + bodyBytes);
    this.state = new Int32Array(this.sab, 0, 1);
    this.body = new Uint8Array(this.sab, SLAB_HEADER_BYTES, bodyBytes);
  }

  get free(): boolean {
    return Atomics.load(this.state, 0) === FREE;
  }
}

/** The pool of one worker's slabs (not shared between workers: each thread owns its list). */
export class BodySlabs {
  private readonly slabs: BodySlab[] = [];
  /** Bytes of the last body lent: the guess for the next one's size. */
  private lastBody = 0;

  /**
   * A free slab of at least `bytes` body bytes, and of the last body's size plus a quarter
   * when one is free; else a new slab of that size. Starting a new slab at 1 MiB when the
   * kept ones were all lent (a slow client still reading 1M-point pages) grew it through
   * about ten slabs to a 56 MB JSON page: ~2x the body copied and ~3x allocated and faulted
   * in, 16 regrowths in one benchmark phase (bench/storage.ts, 2026-11-21).
   */
  acquire(bytes = INITIAL_BYTES): BodySlab {
    const want = Math.max(bytes, Math.ceil(this.lastBody * 1.25));
    let best: BodySlab | null = null;
    for (const s of this.slabs) {
      if (!s.free) continue;
      if (best === null || s.body.byteLength > best.body.byteLength) best = s; // the largest: fewest regrowths
    }
    if (best !== null && best.body.byteLength >= want) return best;
    return this.add(new BodySlab(Math.max(want, INITIAL_BYTES)));
  }

  /** A larger slab holding the first `used` bytes of `from`; `from` stays free for later tasks. */
  grow(from: BodySlab, used: number, need: number): BodySlab {
    const next = new BodySlab(Math.ceil(need * 1.5));
    next.body.set(from.body.subarray(0, used));
    return this.add(next);
  }

  /** Marks the slab lent to the HTTP thread until it stores FREE again (releaseSlab); `used` is the body's length. */
  lend(slab: BodySlab, used: number): void {
    this.lastBody = used;
    Atomics.store(slab.state, 0, LENT);
    if (slab.body.byteLength > MAX_RETAINED_BYTES) this.drop(slab);
  }

  /** Slabs held (for tests). */
  get size(): number {
    return this.slabs.length;
  }

  private add(slab: BodySlab): BodySlab {
    if (slab.body.byteLength > MAX_RETAINED_BYTES) return slab;
    if (this.slabs.length < MAX_SLABS) { this.slabs.push(slab); return slab; }
    // full: replace the smallest free slab, else use this one once
    let smallest = -1;
    for (let i = 0; i < this.slabs.length; i++) {
      const s = this.slabs[i];
      if (s.free && (smallest < 0 || s.body.byteLength < this.slabs[smallest].body.byteLength)) smallest = i;
    }
    if (smallest >= 0 && this.slabs[smallest].body.byteLength < slab.body.byteLength) this.slabs[smallest] = slab;
    return slab;
  }

  private drop(slab: BodySlab): void {
    const i = this.slabs.indexOf(slab);
    if (i >= 0) this.slabs.splice(i, 1);
  }
}

/** On the HTTP thread: gives a lent slab back to its worker. Idempotent. */
export function releaseSlab(sab: SharedArrayBuffer): void {
  Atomics.store(new Int32Array(sab, 0, 1), 0, FREE);
}
