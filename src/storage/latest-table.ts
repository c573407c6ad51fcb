// The latest point of each series, in shared memory, so a resolved snapshot is answered on
// the HTTP thread without a worker hop or a head read (issue 26: 1,000 attributes < 5 ms).
//
// One SharedArrayBuffer holds a fixed open-addressing table of slots keyed by the series
// UUID (16 bytes); every thread that writes points (the ingest worker, the main thread's
// engine: calculation outputs, backfill commits, lifecycle enforcement) and every thread
// that reads (the HTTP thread, read-pool workers) sees the same memory. A slot says one of:
//   UNKNOWN  nothing known (a fresh slot, after a restart, after an edit of the latest point
//            or after lifecycle enforcement): the reader takes the stored path;
//   NONE     the series holds no point;
//   POINT    its latest point by timestamp: ts, value, quality.
// Exactness rests on three rules:
//   1. A writer updates the slot after its transaction is durable and before the write
//      resolves (so before any acknowledgement), and only with what it can prove from its
//      own batch: a point later than the slot's replaces it, an earlier one changes
//      nothing (a late point), one at the same instant with a different value or quality
//      (an edit, or two writers racing at one instant) makes the slot UNKNOWN; from UNKNOWN
//      a write cannot know the latest and leaves it so. Max by timestamp does not depend
//      on the order in which two threads' updates land.
//   2. Every writer's touch moves the slot's sequence (a seqlock, odd while written), even
//      when it leaves the slot UNKNOWN.
//   3. Only a reader fills an UNKNOWN slot, from a read transaction begun after it read the
//      slot's sequence, and only if the sequence has not moved since (compare-and-swap): a
//      write that committed after the reader's snapshot moved it after its commit, so a
//      stale fill can never land.
// A string value is kept when its UTF-8 form fits STRING_BYTES (states, batch ids, modes:
// what string series hold); a longer one leaves the slot UNKNOWN (the stored path).
// The table never moves a claimed slot (series ids are never reused); when a probe finds no
// free slot within MAX_PROBE the series has none and reads take the stored path.
//
// Layout: a header, an index of keys (open addressing by the UUID's hash, 32 bytes an entry)
// and the slots' data (96 bytes each) handed out in claim order, so series written together
// (a collector's tags, a bulk load) lie side by side and a snapshot of them reads a few
// contiguous pages. With the data in the hashed entries themselves (before 2026-11-28) each
// of a 1,000-attribute snapshot's slots was a cache and TLB miss of its own in a 28 MiB
// table: 343 us to read 1,000 slots with cold caches against 95 us for adjacent ones (micro,
// load ~14), about a quarter of the HTTP thread's time on a kept-plan snapshot (profile).
import type { PointValue } from './point-runs.js';
import type { ValueType } from './encoding/chunk-types.js';
import type { PointBatch } from './write-batch.js';
import type { BatchResult } from './write-apply.js';

/** Slots by default: 262,144 series (32 MiB, touched only as series are written). */
export const DEFAULT_LATEST_SLOTS = 1 << 18;
/** Slots probed at most for one series. */
const MAX_PROBE = 64;
/** Int32 words of the header (NEXT: the data slots handed out), of an index entry and of a data slot. */
const HEADER = 16, IW = 8, DW = 24;
const NEXT = 0;
/** Longest string value kept (UTF-8 bytes). */
export const STRING_BYTES = 56;
// word offsets in an index entry (DATA: the word where its slot's data starts)
const KEY_STATE = 0, KEY = 1, DATA = 5;
// word offsets in a data slot (STR_LEN: a string value's byte length, its bytes in the words
// after); the words a read takes (SEQ..VALUE, 28 bytes) share one cache line: slots start
// 64-byte aligned or half way
const SEQ = 0, STATE = 1, QUALITY = 2, TS = 3, VALUE = 5, STR_LEN = 7, STR = 8;
// key states
const FREE = 0, CLAIMING = 1, READY = 2;
export const UNKNOWN = 0, NONE = 1, POINT = 2;
export type LatestState = typeof UNKNOWN | typeof NONE | typeof POINT;
// value kinds (the slot's STATE word holds the state in its low byte and the kind above it)
const F64 = 1, I64 = 2, BOOL = 3, ENUM = 4, STRING = 5;
const KINDS: Record<ValueType, number> = { float64: F64, int64: I64, boolean: BOOL, enum: ENUM, string: STRING };
const utf8In = new TextEncoder();
const utf8Out = new TextDecoder();

/** A consistent read of one slot. `seq` is what a fill must find unchanged (odd: the slot was being written, no fill). */
export interface LatestRead {
  state: LatestState;
  seq: number;
  ts: bigint;
  value: PointValue;
  quality: number;
}

/** Words of a UUID (any case), or null when `id` is not one. */
function uuidWords(id: string, out: Int32Array): boolean {
  if (id.length !== 36 || id.charCodeAt(8) !== 45 || id.charCodeAt(13) !== 45 || id.charCodeAt(18) !== 45 || id.charCodeAt(23) !== 45) return false;
  let w = 0, n = 0, k = 0;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (c === 45) continue;
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (d < 0) return false;
    w = (w << 4) | d;
    if (++n === 8) { out[k++] = w; w = 0; n = 0; }
  }
  return true;
}

export class LatestTable {
  private readonly words: Int32Array;
  private readonly mask: number;
  /** Word offsets of the index and of the data region. */
  private readonly index = HEADER;
  private readonly data: number;
  private readonly key = new Int32Array(4);
  // 8-byte words are read and written as two Int32 halves through this scratch
  private readonly scratch = new ArrayBuffer(8);
  private readonly s32 = new Int32Array(this.scratch);
  private readonly s64 = new BigInt64Array(this.scratch);
  private readonly sf64 = new Float64Array(this.scratch);
  // a string value's UTF-8 bytes (the last word is room to see that one did not fit)
  private readonly text = new Int32Array(STRING_BYTES / 4 + 1);
  private readonly text8 = new Uint8Array(this.text.buffer);
  /** Slot of each series id this thread has looked up (slots never move). */
  private readonly slots = new Map<string, number>();

  private constructor(readonly buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer);
    const slots = (buffer.byteLength / 4 - HEADER) / (IW + DW);
    if (!Number.isInteger(slots) || slots < 1 || (slots & (slots - 1)) !== 0) throw new Error('BUG: a latest table has a power-of-two count of slots');
    this.mask = slots - 1;
    this.data = HEADER + slots * IW;
  }

  static create(slots = DEFAULT_LATEST_SLOTS): LatestTable {
    return new LatestTable(new SharedArrayBuffer((HEADER + slots * (IW + DW)) * 4));
  }

  /** The same table over a buffer another thread created. */
  static attach(buffer: SharedArrayBuffer): LatestTable {
    return new LatestTable(buffer);
  }

  /** The slot of `id` (the first word of its data), claiming a free one when `claim`; -1 when it has none. */
  slotOf(id: string, claim: boolean): number {
    const known = this.slots.get(id);
    if (known !== undefined) return known;
    const key = this.key;
    if (!uuidWords(id, key)) return -1;
    const words = this.words;
    let i = (Math.imul(key[0] ^ key[3], 0x9e3779b1) >>> 0) & this.mask;
    for (let probe = 0; probe < MAX_PROBE; probe++, i = (i + 1) & this.mask) {
      const entry = this.index + i * IW;
      let ks = Atomics.load(words, entry + KEY_STATE);
      if (ks === FREE) {
        if (!claim) return -1;
        ks = Atomics.compareExchange(words, entry + KEY_STATE, FREE, CLAIMING);
        if (ks === FREE) {
          for (let k = 0; k < 4; k++) Atomics.store(words, entry + KEY + k, key[k]);
          // one data slot per index entry: never more than the table has
          const base = this.data + Atomics.add(words, NEXT, 1) * DW;
          Atomics.store(words, entry + DATA, base);
          Atomics.store(words, entry + KEY_STATE, READY);
          this.remember(id, base);
          return base;
        }
      }
      // another thread is writing this entry's key and slot: a few stores, wait for them
      while (ks === CLAIMING) ks = Atomics.load(words, entry + KEY_STATE);
      if (Atomics.load(words, entry + KEY) === key[0] && Atomics.load(words, entry + KEY + 1) === key[1]
        && Atomics.load(words, entry + KEY + 2) === key[2] && Atomics.load(words, entry + KEY + 3) === key[3]) {
        const base = Atomics.load(words, entry + DATA);
        this.remember(id, base);
        return base;
      }
    }
    return -1;
  }

  private remember(id: string, base: number): void {
    if (this.slots.size >= 4 * (this.mask + 1)) this.slots.clear();
    this.slots.set(id, base);
  }

  /** A consistent read of `id`'s slot into `out` (UNKNOWN, seq 0 when it has none). */
  read(id: string, out: LatestRead): LatestRead {
    const base = this.slotOf(id, false);
    out.state = UNKNOWN; out.seq = 0;
    if (base < 0) return out;
    const words = this.words, s32 = this.s32;
    for (let attempt = 0; attempt < 1000; attempt++) {
      const seq = Atomics.load(words, base + SEQ);
      if ((seq & 1) !== 0) continue;
      const st = Atomics.load(words, base + STATE);
      const q = Atomics.load(words, base + QUALITY);
      s32[0] = Atomics.load(words, base + TS); s32[1] = Atomics.load(words, base + TS + 1);
      const ts = this.s64[0];
      s32[0] = Atomics.load(words, base + VALUE); s32[1] = Atomics.load(words, base + VALUE + 1);
      const strLen = (st >>> 8) === STRING ? Atomics.load(words, base + STR_LEN) : 0;
      if (strLen > STRING_BYTES) continue;
      for (let w = 0; w < (strLen + 3) >> 2; w++) this.text[w] = Atomics.load(words, base + STR + w);
      if (Atomics.load(words, base + SEQ) !== seq) continue;
      out.seq = seq;
      out.state = (st & 0xff) as LatestState;
      if (out.state !== POINT) return out;
      const kind = st >>> 8;
      out.ts = ts;
      out.quality = q >>> 0;
      out.value = kind === I64 ? this.s64[0] : kind === BOOL ? this.sf64[0] !== 0 : kind === STRING ? utf8Out.decode(this.text8.subarray(0, strLen)) : this.sf64[0];
      return out;
    }
    out.seq = 1;
    return out;
  }

  /**
   * A consistent read of the slot at `base` (slotOf) that allocates nothing: its timestamp
   * and value words go to words[4k..4k+3] (ts low, ts high, value low, value high: read
   * them through BigInt64Array / Float64Array views of the same buffer), its quality to
   * quality[k]. Returns the state (UNKNOWN when the slot stayed busy). A string value is
   * not copied: read() it. For a snapshot over thousands of series (read-snapshot.ts):
   * no BigInt and no value object per series.
   */
  readAt(base: number, words: Int32Array, quality: Uint32Array, k: number): LatestState {
    const w = this.words;
    for (let attempt = 0; attempt < 1000; attempt++) {
      const seq = Atomics.load(w, base + SEQ);
      if ((seq & 1) !== 0) continue;
      const st = Atomics.load(w, base + STATE);
      const q = Atomics.load(w, base + QUALITY);
      const t0 = Atomics.load(w, base + TS), t1 = Atomics.load(w, base + TS + 1);
      const v0 = Atomics.load(w, base + VALUE), v1 = Atomics.load(w, base + VALUE + 1);
      if (Atomics.load(w, base + SEQ) !== seq) continue;
      const at = 4 * k;
      words[at] = t0; words[at + 1] = t1; words[at + 2] = v0; words[at + 3] = v1;
      quality[k] = q >>> 0;
      return (st & 0xff) as LatestState;
    }
    return UNKNOWN;
  }

  /**
   * A reader's fill of `id`'s slot with the latest point it read (null: none) from a
   * snapshot begun after it saw `seq` (rule 3 of the file header). False when the slot moved.
   */
  fill(id: string, seq: number, type: ValueType, p: { ts: bigint; value: PointValue; quality: number } | null): boolean {
    const kind = KINDS[type];
    if ((seq & 1) !== 0) return false;
    const base = this.slotOf(id, true);
    if (base < 0) return false;
    if (Atomics.compareExchange(this.words, base + SEQ, seq, seq + 1) !== seq) return false;
    if (p === null) Atomics.store(this.words, base + STATE, NONE);
    else this.put(base, kind, p.ts, p.value, p.quality);
    Atomics.store(this.words, base + SEQ, seq + 2);
    return true;
  }

  /**
   * After a durable write, before it resolves: each batch's latest accepted point (the last
   * one sent at the batch's latest instant; refused points skipped) applied by rule 1.
   * `typeOf` names the series' type when its values are a plain array.
   */
  noteWritten(batches: readonly PointBatch[], results: readonly BatchResult[], typeOf: (id: string) => ValueType | undefined): void {
    for (let b = 0; b < batches.length; b++) {
      const batch = batches[b], r = results[b];
      if (r === undefined || batch.times.length === 0 || r.refused === batch.times.length) continue;
      const kind = kindOf(batch, typeOf);
      if (kind === undefined) continue;
      const refused = r.refused === 0 ? null : new Set(r.refusals.map((x) => x.index));
      let at = -1, ts = 0n;
      const times = batch.times;
      for (let i = 0; i < times.length; i++) {
        if (refused !== null && refused.has(i)) continue;
        const t = times[i];
        if (at < 0 || t >= ts) { at = i; ts = t; }
      }
      if (at < 0) continue;
      const base = this.slotOf(batch.series, true);
      if (base < 0) continue;
      this.apply(base, kind, ts, batch.values[at] as PointValue, Number(batch.quality[at]));
    }
  }

  private apply(base: number, kind: number, ts: bigint, value: PointValue, quality: number): void {
    const words = this.words;
    const seq = this.lock(base);
    const st = Atomics.load(words, base + STATE);
    const state = st & 0xff;
    if (state === NONE) this.put(base, kind, ts, value, quality);
    else if (state === POINT) {
      const s32 = this.s32;
      s32[0] = Atomics.load(words, base + TS); s32[1] = Atomics.load(words, base + TS + 1);
      const held = this.s64[0];
      if (ts > held) this.put(base, kind, ts, value, quality);
      else if (ts === held && !this.holds(base, st, kind, value, quality)) Atomics.store(words, base + STATE, UNKNOWN);
    }
    Atomics.store(words, base + SEQ, seq + 2);
  }

  /** Whether the locked slot (state word `st`) holds exactly this value and quality. */
  private holds(base: number, st: number, kind: number, value: PointValue, quality: number): boolean {
    const words = this.words, s32 = this.s32;
    if (st >>> 8 !== kind || (Atomics.load(words, base + QUALITY) >>> 0) !== quality >>> 0) return false;
    if (kind === STRING) {
      const n = this.encodeText(value as string);
      if (n < 0 || Atomics.load(words, base + STR_LEN) !== n) return false;
      for (let w = 0; w < (n + 3) >> 2; w++) if (Atomics.load(words, base + STR + w) !== this.text[w]) return false;
      return true;
    }
    const v0 = Atomics.load(words, base + VALUE), v1 = Atomics.load(words, base + VALUE + 1);
    this.encode(kind, value);
    return s32[0] === v0 && s32[1] === v1;
  }

  /** A string's UTF-8 bytes into `text` (zero-padded to a word): its length, or -1 when longer than STRING_BYTES. */
  private encodeText(v: string): number {
    if (v.length > STRING_BYTES) return -1;
    this.text.fill(0);
    const r = utf8In.encodeInto(v, this.text8);
    return r.read < v.length || r.written > STRING_BYTES ? -1 : r.written;
  }

  /** Every slot to UNKNOWN (points were removed: lifecycle enforcement). */
  forgetAll(): void {
    const words = this.words;
    // every slot handed out; one being claimed now is fresh (UNKNOWN) already
    const used = Math.min(Atomics.load(words, NEXT), this.mask + 1);
    for (let base = this.data; base < this.data + used * DW; base += DW) {
      const seq = this.lock(base);
      Atomics.store(words, base + STATE, UNKNOWN);
      Atomics.store(words, base + SEQ, seq + 2);
    }
  }

  /** Takes the slot's seqlock (writers of several threads may meet on one slot); returns the even sequence it held. */
  private lock(base: number): number {
    const words = this.words;
    for (;;) {
      const seq = Atomics.load(words, base + SEQ);
      if ((seq & 1) === 0 && Atomics.compareExchange(words, base + SEQ, seq, seq + 1) === seq) return seq;
    }
  }

  private encode(kind: number, value: PointValue): void {
    if (kind === I64) this.s64[0] = typeof value === 'bigint' ? value : BigInt(value as number);
    else this.sf64[0] = kind === BOOL ? (value === true || value === 1 ? 1 : 0) : Number(value);
  }

  /** Writes a POINT into a locked slot (UNKNOWN for a string too long to keep). */
  private put(base: number, kind: number, ts: bigint, value: PointValue, quality: number): void {
    const words = this.words, s32 = this.s32;
    if (kind === STRING) {
      const n = this.encodeText(value as string);
      if (n < 0) { Atomics.store(words, base + STATE, UNKNOWN); return; }
      Atomics.store(words, base + STR_LEN, n);
      for (let w = 0; w < (n + 3) >> 2; w++) Atomics.store(words, base + STR + w, this.text[w]);
    }
    this.s64[0] = ts;
    Atomics.store(words, base + TS, s32[0]); Atomics.store(words, base + TS + 1, s32[1]);
    this.encode(kind, value);
    Atomics.store(words, base + VALUE, s32[0]); Atomics.store(words, base + VALUE + 1, s32[1]);
    Atomics.store(words, base + QUALITY, quality | 0);
    Atomics.store(words, base + STATE, POINT | (kind << 8));
  }
}

/** The batch's value kind: from its typed column, else from the series' type (undefined: unknown series). */
function kindOf(batch: PointBatch, typeOf: (id: string) => ValueType | undefined): number | undefined {
  const v = batch.values;
  if (v instanceof Float64Array) return F64;
  if (v instanceof BigInt64Array) return I64;
  if (v instanceof Uint8Array) return BOOL;
  if (v instanceof Int32Array) return ENUM;
  const type = typeOf(batch.series);
  return type === undefined ? undefined : KINDS[type];
}

