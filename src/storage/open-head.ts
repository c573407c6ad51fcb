// The writer's in-memory head of one series: its open points in growable typed columns,
// and which stored segments hold them. A commit appends its new points here, seals full
// chunks off the front, then persists only what changed: a segment for the new points
// still open, deletions of segments sealing emptied, and the small head record.
import type { PointColumns } from './encoding/chunk-types.js';
import { MIN_CHUNK_BYTES } from './encoding/chunk-header.js';
import { fitState, sampleNewest } from './chunk-fit.js';
import { offsetsFrom } from './int64-words.js';
import { allocColumns, copyValue, type TimedPoints } from './point-runs.js';
import { putHeadRecord, putSegment, removeAllSegments, removeSegment, type HeadRecord, type SegmentRef, type StoredHead } from './head-record.js';
import { encodeSegment } from './head-segment.js';
import type { SeriesEnv } from './series-env.js';
import type { ValueType } from './encoding/chunk-types.js';

/**
 * A new segment absorbs the newest stored segments while they hold fewer open points than
 * this and no more than twice its own: like a binary counter, tiny commits cost O(log)
 * segments and each point is rewritten O(log(SMALL_SEGMENT / commit size)) times, while
 * commits of >= 512 points per series never rewrite a point.
 */
const SMALL_SEGMENT = 512;
/** Columns grow by this factor (ensureCapacity)... */
const GROWTH = 1.25;
/** ...and by at least this many more commits of the size that made them grow. */
const ROOM_COMMITS = 4;
/** Calibrating bytes per point from a segment needs enough points to see past the header. */
export const CALIBRATE_MIN_POINTS = 64;

/**
 * Quality columns of heads whose open points all have one quality (what a collector sending
 * no qualities gives: 192, good) are views of one shared array filled with it, never written:
 * a bulk load's 950 heads held ~55 MB of one repeated value at 4 B a point (issue 33,
 * resident memory). A head gets a column of its own at its first point of another quality.
 * Larger heads (a big backfill batch) allocate their own rather than keep a big shared array
 * for good, and only a few quality values get a shared array.
 */
const SHARED_QUALITY_POINTS = 2 * 65536;
const MAX_SHARED_QUALITIES = 4;
const sharedQualities = new Map<number, Uint32Array>();

/** A never-written column of `quality` repeated, or null (too long, or too many values shared already). */
function sharedColumn(quality: number, capacity: number): Uint32Array | null {
  if (capacity > SHARED_QUALITY_POINTS) return null;
  let col = sharedQualities.get(quality);
  if (col === undefined) {
    if (sharedQualities.size >= MAX_SHARED_QUALITIES) return null;
    col = new Uint32Array(SHARED_QUALITY_POINTS).fill(quality);
    sharedQualities.set(quality, col);
  }
  return col.subarray(0, capacity);
}

/** The quality every point of q[from, to) has, or -1 when they differ (qualities are unsigned). */
function uniformQuality(q: Uint32Array, from: number, to: number): number {
  if (to <= from) return -1;
  const v = q[from];
  for (let i = from + 1; i < to; i++) if (q[i] !== v) return -1;
  return v;
}

/** Empty head columns of `capacity`; quality is left for the head to set (OpenHead.setQualityColumn). */
function headColumns(type: ValueType, capacity: number, tsBase: bigint): PointColumns {
  return allocColumns(type, capacity, tsBase, EMPTY_QUALITY);
}
const EMPTY_QUALITY = new Uint32Array(0);

export interface Generation {
  writer: number;
  counter: number;
}

export class OpenHead {
  cols: PointColumns;
  sealedEnd: bigint | null;
  lastWriteMs: number;
  genWriter: number;
  genCounter: number;
  nextSeq: number;
  /** Stored segments holding head points [0, pendingFrom), in order. */
  segments: SegmentRef[];
  /** Points from here on are in no stored segment yet. */
  pendingFrom: number;
  /** The stored segments no longer describe the head: persist replaces them all. */
  rewrite: boolean;
  /** Segments sealing emptied, deleted at the next persist. */
  private emptied: number[] = [];
  /** Encoded bytes per point of this series (NaN until measured); picks the sealing point count. */
  bytesPerPoint = NaN;
  /** bytesPerPoint came from a sealed chunk (segments only calibrate until one exists). */
  private calibratedByChunk = false;
  /**
   * Changes whenever the head's first points do (sealed off, merged, replaced): a chunk
   * encoded on the seal thread from a copy of them is stored only if it still matches.
   */
  frontVersion = 0;
  /** A copy of this head's points is on the seal thread (one request per head at a time). */
  sealPending = false;
  /** The seal thread failed this head's points: the writer seals it itself. */
  sealHere = false;
  /** Used since the head cache last passed it (head-cache.ts: its second chance at eviction). */
  cacheUsed = false;

  /** The quality of every open point when cols.quality is a shared column (never written), else -1. */
  private sharedQuality = -1;

  constructor(type: ValueType, stored: StoredHead | null) {
    const open = stored?.cols ?? null;
    this.cols = headColumns(type, Math.max(256, open?.count ?? 0), 0n);
    this.setQualityColumn(open === null ? -1 : uniformQuality(open.quality, 0, open.count), null);
    this.sealedEnd = stored?.sealedEnd ?? null;
    this.lastWriteMs = stored?.lastWriteMs ?? 0;
    this.genWriter = stored?.record.genWriter ?? 0;
    this.genCounter = stored?.record.genCounter ?? 0;
    this.nextSeq = stored?.record.nextSeq ?? 0;
    this.segments = [];
    for (const s of stored?.segments ?? []) {
      if (s.open > 0) this.segments.push({ ...s }); else this.emptied.push(s.seq);
    }
    this.rewrite = stored?.legacy ?? false;
    if (open && open.count > 0) {
      this.cols.tsBase = open.tsBase;
      this.cols.tsOffset.set(open.tsOffset.subarray(0, open.count));
      if (this.sharedQuality < 0) this.cols.quality.set(open.quality.subarray(0, open.count));
      for (let i = 0; i < open.count; i++) copyValue(open, i, this.cols, i);
      this.cols.count = open.count;
    }
    this.pendingFrom = this.rewrite ? 0 : this.cols.count;
  }

  /**
   * In memory the head now differs from every stored generation: until persist stamps a
   * new one, the cache must not trust it (a txn that throws before persisting leaves it so).
   */
  private unsettle(): void {
    this.genWriter = 0;
    this.genCounter = -1;
  }

  get count(): number { return this.cols.count; }

  /** Bytes of typed columns this head holds (a shared quality column not counted; strings: their slots' 8 B). */
  get columnBytes(): number {
    const c = this.cols;
    const value = c.f64?.byteLength ?? c.i64?.byteLength ?? c.u8?.byteLength ?? c.ord?.byteLength ?? 8 * (c.str?.length ?? 0);
    return c.tsOffset.byteLength + value + (this.sharedQuality >= 0 ? 0 : c.quality.byteLength);
  }
  get capacity(): number { return this.cols.tsOffset.length; }
  /** The quality every open point has when the head's quality column is a shared one, else -1 (a column of its own). */
  get commonQuality(): number { return this.sharedQuality; }

  firstTs(): bigint { return this.cols.tsBase + BigInt(this.cols.tsOffset[0]); }
  lastTs(): bigint | null { return this.cols.count === 0 ? null : this.cols.tsBase + BigInt(this.cols.tsOffset[this.cols.count - 1]); }

  /**
   * Room for n points. fullAt: the point count at which the head seals (NaN: not known
   * yet), k: the points being added. Columns grow by a quarter or by room for ROOM_COMMITS
   * more commits of k points, whichever is more, and never past what the head holds before it
   * seals (fullAt and the last batch: the seal thread takes a full head a commit later). The
   * commits' room (2026-11-28): a bulk load's heads fed 1,000 points a commit went 4,096 ->
   * 5,120 -> 6,400 -> 8,000 -> 10,000, and allocating those columns (fresh mappings past
   * glibc's 64 KB threshold, scripts/start.mjs) was the ingest thread's largest self time
   * (profile: 0.45 of 5.3 s); now 5,000 -> 10,000, at most four commits' room unwritten.
   * Until 2026-11-28 a head within 8 commits of fullAt took that room at
   * once (allocating and copying on the way had been ~8% of the ingest thread, profiled with
   * 1.5x steps): a bulk load's heads of ~9,900 points then sat in ~14,400-point columns,
   * ~70 MB of resident memory never written (issue 33); a quarter more a step keeps that to
   * an eighth on average for ~4 more copies of a head in its first fill, ~0.4 MB per series.
   * A slow head grows step by step, so 100,000 quiet series do not each hold a chunk's worth.
   */
  private ensureCapacity(n: number, fullAt = NaN, k = 0): void {
    if (n <= this.capacity) return;
    let capacity = Math.max(n + ROOM_COMMITS * k, Math.ceil(this.capacity * GROWTH), 4096);
    if (fullAt >= n && capacity > fullAt + k) capacity = Math.max(n, Math.ceil(fullAt) + k);
    this.resize(capacity);
  }

  private resize(capacity: number): void {
    const c = this.cols, n = c.count;
    const g = headColumns(c.type, capacity, c.tsBase);
    g.tsOffset.set(c.tsOffset.subarray(0, n));
    const uniform = this.sharedQuality >= 0 ? this.sharedQuality : uniformQuality(c.quality, 0, n);
    this.cols = g;
    this.setQualityColumn(uniform, c.quality.subarray(0, n));
    switch (c.type) {
      case 'float64': g.f64!.set(c.f64!.subarray(0, n)); break;
      case 'int64': g.i64!.set(c.i64!.subarray(0, n)); break;
      case 'boolean': g.u8!.set(c.u8!.subarray(0, n)); break;
      case 'enum': g.ord!.set(c.ord!.subarray(0, n)); break;
      case 'string': for (let i = 0; i < n; i++) g.str![i] = c.str![i]; break;
    }
    g.count = n;
    this.cols = g;
  }

  /**
   * Gives cols a quality column of its capacity: the shared one of `uniform` (the quality of
   * every point, -1: mixed or none) when there is one, else its own holding `points`.
   */
  private setQualityColumn(uniform: number, points: Uint32Array | null): void {
    const shared = uniform >= 0 ? sharedColumn(uniform, this.capacity) : null;
    this.sharedQuality = shared === null ? -1 : uniform;
    if (shared !== null) { this.cols.quality = shared; return; }
    this.cols.quality = new Uint32Array(this.capacity);
    if (points !== null) this.cols.quality.set(points);
  }

  /**
   * Qualities q[from, to) are about to be written at the head's point `at` (the points
   * before it stay): true when the head's shared column already says them; otherwise the
   * head is on a column of its own and the caller writes them.
   */
  private qualityReady(q: Uint32Array, from: number, to: number, at: number): boolean {
    const shared = this.sharedQuality;
    const uniform = shared >= 0 || at === 0 ? uniformQuality(q, from, to) : -1;
    if (shared >= 0 && uniform === shared) return true;
    if (at === 0 && uniform >= 0) {
      this.setQualityColumn(uniform, null);
      if (this.sharedQuality >= 0) return true;
    } else if (shared >= 0) this.setQualityColumn(-1, this.cols.quality.subarray(0, at));
    return false;
  }

  /**
   * Appends points [from, to) of a sorted run, all later than the head's last point; the
   * caller guarantees the head then spans less than MAX_CHUNK_SPAN_NS, so offsets are exact.
   */
  append(t: TimedPoints, from: number, to: number, fullAt = NaN): void {
    this.unsettle();
    const k = to - from, c0 = this.cols.count;
    this.ensureCapacity(c0 + k, fullAt, k);
    const c = this.cols;
    if (c0 === 0) c.tsBase = t.ts[from];
    if (!offsetsFrom(t.ts, from, to, c.tsBase, c.tsOffset, c0)) throw new Error('BUG: head append beyond the exact span');
    switch (c.type) {
      case 'float64': c.f64!.set(t.f64!.subarray(from, to), c0); break;
      case 'int64': c.i64!.set(t.i64!.subarray(from, to), c0); break;
      case 'boolean': c.u8!.set(t.u8!.subarray(from, to), c0); break;
      case 'enum': c.ord!.set(t.ord!.subarray(from, to), c0); break;
      case 'string': for (let i = from, j = c0; i < to; i++, j++) c.str![j] = t.str![i]; break;
    }
    if (!this.qualityReady(t.quality, from, to, c0)) c.quality.set(t.quality.subarray(from, to), c0);
    c.count = c0 + k;
  }

  /** Replaces every open point (after a merge); persist rewrites the stored segments. */
  replace(cols: PointColumns | null): void {
    this.unsettle();
    this.frontVersion++;
    const n = cols?.count ?? 0;
    this.cols.count = 0;
    this.ensureCapacity(n);
    if (cols && n > 0) {
      const c = this.cols;
      c.tsBase = cols.tsBase;
      c.tsOffset.set(cols.tsOffset.subarray(0, n));
      if (!this.qualityReady(cols.quality, 0, n, 0)) c.quality.set(cols.quality.subarray(0, n));
      for (let i = 0; i < n; i++) copyValue(cols, i, c, i);
      c.count = n;
    }
    this.rewrite = true;
    this.pendingFrom = 0;
  }

  /** Forgets the first n points (just sealed) and rebases the rest on their first time (exact shift). */
  dropFront(n: number): void {
    this.unsettle();
    this.frontVersion++;
    const c = this.cols, rest = c.count - n;
    c.tsOffset.copyWithin(0, n, c.count);
    if (this.sharedQuality < 0) c.quality.copyWithin(0, n, c.count);
    switch (c.type) {
      case 'float64': c.f64!.copyWithin(0, n, c.count); break;
      case 'int64': c.i64!.copyWithin(0, n, c.count); break;
      case 'boolean': c.u8!.copyWithin(0, n, c.count); break;
      case 'enum': c.ord!.copyWithin(0, n, c.count); break;
      case 'string': { const s = c.str!; for (let i = 0; i < rest; i++) s[i] = s[i + n]; for (let i = rest; i < c.count; i++) s[i] = ''; break; }
    }
    if (rest > 0) {
      const shift = c.tsOffset[0];
      if (shift !== 0) { for (let i = 0; i < rest; i++) c.tsOffset[i] -= shift; c.tsBase += BigInt(shift); }
    }
    c.count = rest;
    let left = n;
    while (left > 0 && this.segments.length > 0) {
      const s = this.segments[0];
      const take = Math.min(left, s.open);
      s.open -= take; left -= take;
      if (s.open === 0) { this.emptied.push(s.seq); this.segments.shift(); }
    }
    this.pendingFrom = Math.max(0, this.pendingFrom - n);
  }

  /** Records a measured encoding: `bytes` for n points of this series. */
  calibrate(bytes: number, n: number, fromChunk: boolean): void {
    if (n < CALIBRATE_MIN_POINTS && !fromChunk) return;
    if (!fromChunk && this.calibratedByChunk) return;
    this.bytesPerPoint = Math.max(1e-3, (bytes - MIN_CHUNK_BYTES) / n);
    if (fromChunk) this.calibratedByChunk = true;
  }

  /** Writes what changed since the last persist (inside the write txn) under generation g. */
  persist(env: SeriesEnv, series: Buffer, g: Generation, nowMs: number): void {
    const c = this.cols;
    if (this.rewrite) {
      removeAllSegments(env, series);
      this.segments = [];
      this.emptied = [];
      this.pendingFrom = 0;
    }
    for (const seq of this.emptied) removeSegment(env, series, seq);
    this.emptied = [];
    let p = c.count - this.pendingFrom;
    if (p > 0) {
      // the merged segment takes the key of the newest segment it absorbs (the greatest
      // sequence number in use, so still after the ones it leaves): one put over it instead
      // of a delete and a put under a new key, for a commit of a point or two a series
      let seq = -1;
      while (this.segments.length > 0) {
        const last = this.segments[this.segments.length - 1];
        if (last.open >= SMALL_SEGMENT || last.open > 2 * p) break;
        if (seq < 0) seq = last.seq; else removeSegment(env, series, last.seq);
        this.segments.pop();
        p += last.open;
      }
      const from = c.count - p;
      if (seq < 0) seq = this.nextSeq++;
      putSegment(env, series, seq, encodeSegment(c, from, p));
      this.segments.push({ seq, open: p, lastTs: c.tsBase + BigInt(c.tsOffset[c.count - 1]) });
      // segments are raw now, so they say nothing about the codec's size: until a sealed
      // chunk calibrates this series, one sample encode does (once per series and cache load)
      // (unless the seal thread has a copy of the head: it measures the series instead)
      if (Number.isNaN(this.bytesPerPoint) && !this.sealPending && p >= CALIBRATE_MIN_POINTS) {
        const st = fitState(NaN);
        sampleNewest(c, st);
        this.calibrate(st.lastBytes, st.lastPoints, false);
      }
    }
    this.pendingFrom = c.count;
    this.rewrite = false;
    this.genWriter = g.writer;
    this.genCounter = g.counter;
    this.lastWriteMs = nowMs;
    const rec: HeadRecord = { sealedEnd: this.sealedEnd, lastWriteMs: nowMs, genWriter: g.writer, genCounter: g.counter, nextSeq: this.nextSeq, openPoints: c.count };
    putHeadRecord(env, series, rec);
    // a big batch grows the columns far past what stays open; give the memory back (not
    // after every seal: a head refills to a chunk within a few commits)
    if (this.capacity > 65536 && this.capacity > 4 * c.count) this.resize(Math.ceil(1.5 * c.count) + 256);
  }
}
