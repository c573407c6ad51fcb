// The commit feed: which points of which series became durable, told to the main thread
// so live subscriptions (src/reads/live) can forward them. It runs on the ingest worker,
// after a group's transaction is durable and before its batches are acknowledged.
//
// Cost: the main thread names the series somebody watches (setWatched); with none
// watched, publish() returns at its first test, so ingest without subscribers pays
// nothing. With some watched, a group costs one Set lookup per batch, and one copy of the
// columns of each watched batch (the batch's arrays are views into gRPC message buffers
// and a shared all-good quality column, so they cannot be handed over), all moved to the
// main thread in one postMessage per group with the copies' buffers transferred.
// Refused points (unknown series, non-finite values, ...) are left out; identical
// re-sends, which the engine stores as no-ops, are included (the worker does not know
// which points of a batch were unchanged).
import type { PointBatch } from '../storage/series-store.js';
import type { StoredBatchResult } from './ingest-store.js';
import type { CommittedColumns, CommittedGroup } from './thread-messages.js';

export type PostCommits = (group: CommittedGroup, transfer: ArrayBuffer[]) => void;

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
    let out: CommittedColumns[] | null = null;
    const transfer: ArrayBuffer[] = [];
    for (let i = 0; i < batches.length; i++) {
      const b = batches[i];
      const series = String(b.series).toLowerCase();
      if (!this.watched.has(series)) continue;
      const r = results[i];
      if (r && r.accepted + r.unchanged === 0) continue;
      const cols = copyColumns(b, r?.refusals ?? [], transfer);
      if (cols.times.length === 0) continue;
      (out ??= []).push({ series, ...cols });
      this.pointsForwarded += cols.times.length;
    }
    if (out === null) return;
    this.published++;
    this.post({ seq: ++this.seq, durableMs: performance.timeOrigin + performance.now(), columns: out }, transfer);
  }
}

type Typed = Float64Array | BigInt64Array | Uint8Array | Int32Array;

function isTyped(v: unknown): v is Typed {
  return v instanceof Float64Array || v instanceof BigInt64Array || v instanceof Uint8Array || v instanceof Int32Array;
}

/** A fresh typed array of `src`'s elements at `keep` (all when null): slice() is one memcpy. */
function pick<T extends Typed | Uint32Array>(src: T, keep: number[] | null): T {
  if (keep === null) return src.slice() as T;
  const out = new (src.constructor as { new(n: number): T })(keep.length);
  for (let j = 0; j < keep.length; j++) (out as unknown as unknown[])[j] = src[keep[j]];
  return out;
}

/** Fresh arrays of the batch's points minus the refused ones; their buffers join `transfer`. */
function copyColumns(b: PointBatch, refusals: ReadonlyArray<{ index: number }>, transfer: ArrayBuffer[]): Omit<CommittedColumns, 'series'> {
  let keep: number[] | null = null;
  if (refusals.length > 0) {
    const refused = new Set(refusals.map((r) => r.index));
    keep = [];
    for (let i = 0; i < b.times.length; i++) if (!refused.has(i)) keep.push(i);
  }
  const times = b.times instanceof BigInt64Array ? pick(b.times, keep) : BigInt64Array.from(keep ? keep.map((i) => (b.times as readonly bigint[])[i]) : b.times);
  const quality = b.quality instanceof Uint32Array ? pick(b.quality, keep) : Uint32Array.from(keep ? keep.map((i) => (b.quality as readonly number[])[i]) : b.quality);
  transfer.push(times.buffer as ArrayBuffer, quality.buffer as ArrayBuffer);
  let values: CommittedColumns['values'];
  if (isTyped(b.values)) {
    values = pick(b.values, keep);
    transfer.push(values.buffer as ArrayBuffer);
  } else {
    const v = b.values;
    values = keep ? keep.map((i) => v[i]) : v.slice();
  }
  return { times, values, quality };
}
