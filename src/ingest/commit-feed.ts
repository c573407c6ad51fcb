// The commit feed: which points of which series became durable, told to the main thread
// so live subscriptions (src/reads/live) can forward them. It runs on the ingest worker,
// after a group's transaction is durable and before its batches are acknowledged.
//
// Cost: the main thread names the series somebody watches (setWatched); with none
// watched, publish() returns at its first test, so ingest without subscribers pays
// nothing. With some watched, a group costs one Set lookup per batch, and one copy of the
// columns of each watched batch (the batch's arrays are views into gRPC message buffers
// and a shared all-good quality column, so they cannot be handed over), into a few
// buffers moved to the main thread in one postMessage per group (a transfer per column's
// array cost ~4x more per group; unpackCommits() gives the main thread views into them).
// The buffers are pieces of at most PIECE_BYTES, whole columns each: `npm start` runs the
// service with glibc's mmap threshold at 64 KB (scripts/start.mjs), and a group's columns
// in one buffer of a few hundred KB were then a fresh mapping each, whose pages faulted in
// as they were written (~240 µs a 300 KB group on the worker against ~110 in 60 KB pieces,
// and again when the main thread freed them).
// Refused points (unknown series, non-finite values, ...) are left out; identical
// re-sends, which the engine stores as no-ops, are included (the worker does not know
// which points of a batch were unchanged).
import type { PointBatch } from '../storage/series-store.js';
import type { StoredBatchResult } from './ingest-store.js';
import type { CommittedColumns, CommittedGroup, PackedCommits } from './thread-messages.js';

export type PostCommits = (group: PackedCommits, transfer: ArrayBuffer[]) => void;

/** Bytes of one piece of a group's columns at most (a larger column gets a piece of its own): below the 64 KB mmap threshold. */
export const PIECE_BYTES = 60 * 1024;

export class CommitFeed {
  private watched: ReadonlySet<string> = new Set();
  private seq = 0;
  /** Groups published and points forwarded (diagnostics and tests). */
  published = 0;
  pointsForwarded = 0;

  constructor(private readonly post: PostCommits) {}

  /** Replaces the set of watched series ids (lower-case UUIDs). */
  setWatched(ids: readonly string[]): void {
    this.watched = new Set(ids);
  }

  get watching(): number {
    return this.watched.size;
  }

  /** Called once per durable group, in commit order, with the batches written and their results. */
  publish(batches: readonly PointBatch[], results: readonly StoredBatchResult[]): void {
    if (this.watched.size === 0) return;
    // First pass: which batches go, and how many of their points (refusals left out).
    let picked: number[] | null = null;
    let keeps: Array<number[] | null> = [];
    /** Bytes of each picked column. */
    const sizes: number[] = [];
    for (let i = 0; i < batches.length; i++) {
      const b = batches[i];
      if (!this.watched.has(String(b.series).toLowerCase())) continue;
      const r = results[i];
      if (r && r.accepted + r.unchanged === 0) continue;
      const keep = kept(b.times.length, r?.refusals ?? []);
      const n = keep === null ? b.times.length : keep.length;
      if (n === 0) continue;
      (picked ??= []).push(i);
      keeps.push(keep);
      sizes.push(columnBytes(n, valueKind(b.values)));
    }
    if (picked === null) return;
    // Whole columns into pieces of at most PIECE_BYTES, in column order.
    const pieceOf = new Int32Array(picked.length);
    const pieceBytes: number[] = [];
    for (let k = 0; k < picked.length; k++) {
      const last = pieceBytes.length - 1;
      if (last >= 0 && pieceBytes[last] + sizes[k] <= PIECE_BYTES) { pieceBytes[last] += sizes[k]; pieceOf[k] = last; } else { pieceOf[k] = pieceBytes.length; pieceBytes.push(sizes[k]); }
    }
    const pieces = pieceBytes.map((n) => new ArrayBuffer(n));
    // Second pass: every column into its piece, all moved to the main thread in one message.
    const shape = new Int32Array(picked.length * 3);
    const series: string[] = [];
    const other: unknown[][] = [];
    let at = 0;
    for (let k = 0; k < picked.length; k++) {
      const b = batches[picked[k]];
      const keep = keeps[k];
      const n = keep === null ? b.times.length : keep.length;
      const kind = valueKind(b.values);
      series.push(String(b.series).toLowerCase());
      shape[3 * k] = n;
      shape[3 * k + 1] = kind;
      shape[3 * k + 2] = pieceOf[k];
      if (k > 0 && pieceOf[k] !== pieceOf[k - 1]) at = 0;
      const buf = pieces[pieceOf[k]];
      const times = new BigInt64Array(buf, at, n);
      at += 8 * n;
      copyInto(times, b.times, keep);
      if (kind === OTHER) {
        const v = b.values as readonly unknown[];
        other.push(keep === null ? v.slice() : keep.map((i) => v[i]));
      } else {
        const C = KIND_ARRAY[kind];
        copyInto(new C(buf, at, n), b.values as ArrayLike<number | bigint>, keep);
        at += align8(KIND_BYTES[kind] * n);
      }
      copyInto(new Uint32Array(buf, at, n), b.quality, keep);
      at += align8(4 * n);
      this.pointsForwarded += n;
    }
    keeps = [];
    this.published++;
    this.post({ seq: ++this.seq, durableMs: performance.timeOrigin + performance.now(), series, shape, bytes: pieces, other }, [...pieces, shape.buffer as ArrayBuffer]);
  }
}

/**
 * The main thread's side: the group as columns, each a view into its moved piece
 * (values of other kinds, strings say, came as arrays).
 */
export function unpackCommits(p: PackedCommits): CommittedGroup {
  const columns: CommittedColumns[] = [];
  let at = 0, o = 0;
  for (let k = 0; k < p.series.length; k++) {
    const n = p.shape[3 * k], kind = p.shape[3 * k + 1], piece = p.shape[3 * k + 2];
    if (k > 0 && piece !== p.shape[3 * k - 1]) at = 0;
    const buf = p.bytes[piece];
    const times = new BigInt64Array(buf, at, n);
    at += 8 * n;
    let values: CommittedColumns['values'];
    if (kind === OTHER) values = p.other[o++];
    else {
      values = new KIND_ARRAY[kind](buf, at, n);
      at += align8(KIND_BYTES[kind] * n);
    }
    const quality = new Uint32Array(buf, at, n);
    at += align8(4 * n);
    columns.push({ series: p.series[k], times, values, quality });
  }
  return { seq: p.seq, durableMs: p.durableMs, columns };
}

/** Value kinds of a packed column (PackedCommits.shape). */
const F64 = 0, I64 = 1, U8 = 2, I32 = 3, OTHER = 4;
const KIND_ARRAY = [Float64Array, BigInt64Array, Uint8Array, Int32Array] as const;
const KIND_BYTES = [8, 8, 1, 4];

function valueKind(v: PointBatch['values']): number {
  if (v instanceof Float64Array) return F64;
  if (v instanceof BigInt64Array) return I64;
  if (v instanceof Uint8Array) return U8;
  if (v instanceof Int32Array) return I32;
  return OTHER;
}

const align8 = (n: number) => (n + 7) & ~7;

/** Bytes of one column of n points in the packed buffer (every array starts 8-aligned). */
function columnBytes(n: number, kind: number): number {
  return 8 * n + (kind === OTHER ? 0 : align8(KIND_BYTES[kind] * n)) + align8(4 * n);
}

/** Indices of the points kept (null: all of them) once refused points are left out. */
function kept(n: number, refusals: ReadonlyArray<{ index: number }>): number[] | null {
  if (refusals.length === 0) return null;
  const refused = new Set(refusals.map((r) => r.index));
  const keep: number[] = [];
  for (let i = 0; i < n; i++) if (!refused.has(i)) keep.push(i);
  return keep;
}

type Column = { [i: number]: number | bigint; length: number };

/** `src`'s elements (those at `keep`, all when null) into `dst`: typed sources of the same kind are one memcpy. */
function copyInto(dst: Column & { set?: unknown }, src: ArrayLike<number | bigint>, keep: number[] | null): void {
  if (keep === null && ArrayBuffer.isView(src) && src.constructor === dst.constructor) {
    (dst as unknown as { set(a: ArrayLike<number | bigint>): void }).set(src);
    return;
  }
  if (keep === null) { for (let j = 0; j < dst.length; j++) dst[j] = src[j]; return; }
  for (let j = 0; j < keep.length; j++) dst[j] = src[keep[j]];
}
