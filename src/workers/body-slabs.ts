// Response bodies in SharedArrayBuffers that a read worker reuses across tasks. A task
// writes its body straight into a slab; the slab is lent to the HTTP thread, which sends
// the bytes from it and hands it back by storing FREE into the slab's state word once uWS
// no longer reads them (sent, copied or aborted). Nothing is copied between threads and,
// once warm, nothing is allocated: a fresh SharedArrayBuffer per response cost a copy of
// the whole body plus a page fault per 4 KiB on first touch, and its freeing fell to the
// main thread's garbage collector (bench/storage.ts, 2025-11-21).
//
// Layout of a slab: Int32 state at byte 0 (FREE | LENT), body from byte 8.
//
// A slab the worker keeps crosses to the HTTP thread once, then only as its id: every
// SharedArrayBuffer a thread receives is a new object there that counts its whole size
// as the thread's external memory, so the same slabs re-sent with every response grew
// the HTTP thread's count by up to 671 MB during bench:storage's reads, and V8 answers
// external-memory growth with major GCs on that thread (incremental marking steps of
// 12-23 ms there, event-loop stalls past 20 ms; --trace-gc). The HTTP thread keeps one
// object per kept slab (SlabDirectory); the worker names the slabs it stops keeping in
// its next outcome, and the directory lets them go.

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
  /** Sent to the HTTP thread already (it holds the slab under `id`). */
  announced = false;
  readonly state: Int32Array;
  /** The body region (after the header). */
  readonly body: Uint8Array;

  constructor(readonly id: number, bodyBytes: number) {
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
  private nextId: number;
  /** Ids of announced slabs no longer kept, not yet reported to the HTTP thread. */
  private retired: number[] = [];

  /** `idBase`: makes slab ids unique across the process's workers (the worker's thread id x 2^20). */
  constructor(idBase = 0) {
    this.nextId = idBase;
  }

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
    return this.add(new BodySlab(this.nextId++, Math.max(want, INITIAL_BYTES)));
  }

  /** A larger slab holding the first `used` bytes of `from`; `from` stays free for later tasks. */
  grow(from: BodySlab, used: number, need: number): BodySlab {
    const next = new BodySlab(this.nextId++, Math.ceil(need * 1.5));
    next.body.set(from.body.subarray(0, used));
    return this.add(next);
  }

  /** Marks the slab lent to the HTTP thread until it stores FREE again (releaseSlab); `used` is the body's length. */
  lend(slab: BodySlab, used: number): void {
    this.lastBody = used;
    Atomics.store(slab.state, 0, LENT);
    if (slab.body.byteLength > MAX_RETAINED_BYTES) this.drop(slab);
  }

  /**
   * What the outcome of a task that lent `slab` carries: the slab itself the first time a
   * kept slab crosses (and every time for one used once), else null; and the ids of slabs
   * the HTTP thread should forget.
   */
  handOff(slab: BodySlab): SlabHandOff {
    const kept = this.slabs.includes(slab);
    const body = kept && slab.announced ? null : slab.sab;
    if (kept) slab.announced = true;
    const retired = this.retired;
    if (retired.length > 0) this.retired = [];
    return { slab: slab.id, body, keep: kept, retired };
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
    if (smallest >= 0 && this.slabs[smallest].body.byteLength < slab.body.byteLength) {
      this.retire(this.slabs[smallest]);
      this.slabs[smallest] = slab;
    }
    return slab;
  }

  private drop(slab: BodySlab): void {
    const i = this.slabs.indexOf(slab);
    if (i >= 0) { this.slabs.splice(i, 1); this.retire(slab); }
  }

  private retire(slab: BodySlab): void {
    if (slab.announced) this.retired.push(slab.id);
  }
}

/** A lent slab as a task's outcome names it (see handOff). */
export interface SlabHandOff {
  slab: number;
  /** The slab, when the HTTP thread does not hold it under `slab` (null: it does). */
  body: SharedArrayBuffer | null;
  /** The worker keeps the slab for later bodies: hold it under its id. */
  keep: boolean;
  /** Slabs the worker no longer keeps: forget them. */
  retired: number[];
}

/**
 * On the HTTP thread: the slabs of the read workers by id, each received once. A worker
 * replaced after a crash leaves its few entries behind (they are not reused).
 */
export class SlabDirectory {
  private readonly slabs = new Map<number, SharedArrayBuffer>();

  /** The slab an outcome's body is in. */
  resolve(h: SlabHandOff): SharedArrayBuffer {
    for (const id of h.retired) this.slabs.delete(id);
    if (h.body !== null) {
      if (h.keep) this.slabs.set(h.slab, h.body);
      return h.body;
    }
    const sab = this.slabs.get(h.slab);
    if (sab === undefined) throw new Error(`BUG: read worker named slab ${h.slab}, never sent`);
    return sab;
  }

  /** Slabs held (for tests). */
  get size(): number {
    return this.slabs.size;
  }
}

/** On the HTTP thread: gives a lent slab back to its worker. Idempotent. */
export function releaseSlab(sab: SharedArrayBuffer): void {
  Atomics.store(new Int32Array(sab, 0, 1), 0, FREE);
}
