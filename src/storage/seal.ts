// Turning points into sealed chunks. Chunks are filled to the store's byte budget (one LMDB
// overflow page of its env: sealBudgetFor; STACK-NOTES §3) and capped at a point
// count. The append path seals from the writer's open head with an estimate-first single
// encode (sealFromHead); merges of late data re-chunk a run with the codec's
// encodeChunkPrefix (sealRun). Optionally swinging-door first.
import type { PointColumns } from './encoding/chunk-types.js';
import { MAX_CHUNK_POINTS, encodeChunkPrefix } from './encoding/chunk.js';
import { fitChunk, fitState, headIsFull, type SealBudget } from './chunk-fit.js';
import { slicePointColumns } from './encoding/point-columns.js';
import { decodeColumns, floorChunk, headerOf, isChunkCorrupt, putChunkInTxn, type StoredChunk } from './chunk-access.js';
import { MAX_CHUNK_SPAN_NS, appendTimed, timeAt, toTimed } from './point-runs.js';
import { chunkKey, INT64_MIN } from './keys.js';
import type { SeriesMeta } from './series-meta.js';
import { overflowCapacity, type SeriesEnv } from './series-env.js';
import { swingingDoor } from './swinging-door.js';
import { removeChunk, TAIL_PACK_SHARE, type TailToPack } from './tail-packs.js';
import type { OpenHead } from './open-head.js';

export type { SealBudget } from './chunk-fit.js';

/**
 * The seal budget of a store whose env has pages of `pageSize` bytes: a chunk fills one
 * overflow page (CHUNK_BYTE_BUDGET for new envs, 4,072 B for a store created with 4 KiB
 * pages, whose chunks then keep their size).
 */
export function sealBudgetFor(pageSize: number): SealBudget {
  return { chunkPoints: MAX_CHUNK_POINTS, chunkBytes: overflowCapacity(pageSize) };
}

export interface SealOutcome {
  chunks: number;
  bytes: number;
  /** Points removed by swinging-door compression. */
  dropped: number;
}

function capped(cols: PointColumns, from: number, budget: SealBudget): PointColumns {
  return slicePointColumns(cols, from, Math.min(cols.count - from, budget.chunkPoints));
}

function putPrefixes(env: SeriesEnv, series: Buffer, cols: PointColumns, budget: SealBudget, out: SealOutcome): void {
  for (let i = 0; i < cols.count;) {
    const p = encodeChunkPrefix(capped(cols, i, budget), budget.chunkBytes);
    putChunkInTxn(env, series, timeAt(cols, i), p.bytes);
    out.chunks++; out.bytes += p.bytes.byteLength;
    i += p.count;
  }
}

/**
 * Seals every point of `cols` (inside the write txn). With `lossy` and a swinging_door
 * policy on a float64 series, compresses first and records the range in meta.lossyRanges
 * (the caller writes meta back when `dropped` > 0).
 */
export function sealRun(env: SeriesEnv, series: Buffer, meta: SeriesMeta, cols: PointColumns, budget: SealBudget, lossy: boolean): SealOutcome {
  const out: SealOutcome = { chunks: 0, bytes: 0, dropped: 0 };
  if (cols.count === 0) return out;
  let run = cols;
  const sd = meta.lifecycle?.policy.swinging_door;
  if (lossy && sd && meta.type === 'float64') {
    run = swingingDoor(cols, (sd.maxdev_percent_of_range / 100) * (sd.range_max - sd.range_min));
    out.dropped = cols.count - run.count;
    if (out.dropped > 0) {
      const startNs = timeAt(cols, 0), endNs = timeAt(cols, cols.count - 1);
      const prev = meta.lossyRanges[meta.lossyRanges.length - 1];
      if (prev && prev.endNs >= startNs - 1n && prev.tag === 'swinging-door') prev.endNs = endNs;
      else meta.lossyRanges.push({ startNs, endNs, tag: 'swinging-door' });
    }
  }
  putPrefixes(env, series, run, budget, out);
  return out;
}

/** Process-wide tallies of sealing off heads, for the benchmark: encodes per sealed chunk. */
export const sealTally = { chunks: 0, encodes: 0 };

/**
 * Seals full chunks off the front of an open head (inside the write txn); fitChunk picks
 * each chunk's point count. A head is full once it holds budget.chunkPoints points or its
 * estimated encoding reaches the fill window; with `all`, every point is sealed (idle
 * heads, shutdown). Returns the points sealed; head.sealedEnd follows. With `tails`, the
 * chunk that empties a head sealed whole goes there instead of into the table, unless it
 * fills its page anyway: the caller stores it (storeTails in tail-packs.ts) before anything
 * else reads the series.
 */
export function sealFromHead(env: SeriesEnv, series: Buffer, meta: SeriesMeta, head: OpenHead, budget: SealBudget, all: boolean, tails: TailToPack[] | null = null): { points: number; dropped: number } {
  const out = { points: 0, dropped: 0 };
  if (all || headIsFull(head.count, head.bytesPerPoint, budget)) takeBackPartialTail(env, series, meta, head, budget);
  while (head.count > 0) {
    const st = fitState(head.bytesPerPoint);
    const best = fitChunk(head.cols, budget, all, st);
    sealTally.encodes += st.encodes;
    if (st.lastPoints > 0) head.calibrate(st.lastBytes, st.lastPoints, true);
    if (best === null) break;
    if (meta.lifecycle?.policy.swinging_door && meta.type === 'float64') {
      out.dropped += sealRun(env, series, meta, slicePointColumns(head.cols, 0, best.n), budget, true).dropped;
      dropSealed(head, best.n);
    } else if (all && tails !== null && best.n === head.count && packsBetter(best.bytes.byteLength, budget)) {
      tails.push({ key: chunkKey(series, timeAt(head.cols, 0)), bytes: best.bytes });
      dropSealed(head, best.n);
    } else installChunk(env, series, head, best.bytes, best.n);
    out.points += best.n;
  }
  return out;
}

/**
 * Before a head is sealed: the series' last chunk, when partial and continued by the head,
 * goes back into the head to be re-encoded with it (absorbTail). Inside the write txn; not
 * for swinging-door series, whose chunks were compressed. True when it did: the head holds
 * the chunk's points now and must be persisted in the same transaction.
 */
export function takeBackPartialTail(env: SeriesEnv, series: Buffer, meta: SeriesMeta, head: OpenHead, budget: SealBudget): boolean {
  if (head.count === 0 || (meta.lifecycle?.policy.swinging_door && meta.type === 'float64')) return false;
  const tail = partialTail(env, series, head, budget);
  if (tail === null) return false;
  const before = head.count;
  absorbTail(env, series, head, tail);
  return head.count !== before;
}

/** Whether a last chunk of this size leaves more of its own pages empty than a pack costs it. */
export function packsBetter(bytes: number, budget: SealBudget): boolean {
  return bytes < TAIL_PACK_SHARE * budget.chunkBytes;
}

/** A chunk below this share of the byte budget is partial: re-encoded with the points that follow it. */
export const PARTIAL_CHUNK_SHARE = 0.9;

const MAX_SPAN_BIG = BigInt(MAX_CHUNK_SPAN_NS);

/**
 * The series' last chunk when the head continues it and it is partial: sealed short by an
 * idle seal (a report-by-exception tag sealed after each of its rare points, a collector
 * outage) and able to take the head's points within one chunk's span. Else null.
 */
export function partialTail(env: SeriesEnv, series: Buffer, head: OpenHead, budget: SealBudget): StoredChunk | null {
  const sealedEnd = head.sealedEnd, last = head.lastTs();
  if (sealedEnd === null || last === null) return null;
  const tail = floorChunk({ env, txn: undefined }, series, sealedEnd);
  if (tail === null || last - tail.start >= MAX_SPAN_BIG) return null;
  const h = readable(() => headerOf(series, tail.start, tail.bytes));
  if (h === null || h.lastTs !== sealedEnd || h.count >= budget.chunkPoints || tail.bytes.byteLength >= PARTIAL_CHUNK_SHARE * budget.chunkBytes) return null;
  return tail;
}

/** f's result, or null when it finds a damaged chunk (which then stays as it is, for reads to report). */
function readable<T>(f: () => T): T | null {
  try {
    return f();
  } catch (e) {
    if (isChunkCorrupt(e)) return null;
    throw e;
  }
}

/**
 * Takes a partial last chunk back into the head (inside the write txn), so the seal that
 * follows re-encodes its points with the head's into full chunks. Without it every idle seal
 * left a chunk of its own: a tag writing one point per idle period paid a chunk header, a key
 * and a node per point (~100 B/pt), and a series resuming after an outage kept a half-empty
 * 4 KiB page. The head's segments are rewritten at the next persist (they do not hold the
 * chunk's points); sealedEnd steps back to the chunk before. Everything is read before
 * anything changes: a damaged chunk (this one or the one before) is left alone and the head
 * seals as it would have, so a damaged chunk never stops new points from being stored.
 */
function absorbTail(env: SeriesEnv, series: Buffer, head: OpenHead, tail: StoredChunk): void {
  const points = readable(() => decodeColumns(series, tail.start, tail.bytes));
  const before = tail.start === INT64_MIN ? null : floorChunk({ env, txn: undefined }, series, tail.start - 1n);
  const beforeEnd = before === null ? null : readable(() => headerOf(series, before.start, before.bytes).lastTs);
  if (points === null || (before !== null && beforeEnd === null)) return;
  removeChunk(env, tail.key);
  head.replace(appendTimed(points, toTimed(head.cols)));
  head.sealedEnd = beforeEnd;
}

/** Stores a chunk of the head's first n points and drops them from the head (inside the write txn). */
export function installChunk(env: SeriesEnv, series: Buffer, head: OpenHead, bytes: Uint8Array, n: number): void {
  putChunkInTxn(env, series, timeAt(head.cols, 0), bytes);
  dropSealed(head, n);
}

/**
 * Stores a chunk the seal thread encoded off the head's front (inside the write txn). With
 * `tails` (a quiet seal's reply), the chunk that empties the head goes there to be packed,
 * as sealFromHead does with a head sealed whole.
 */
export function installSealed(env: SeriesEnv, series: Buffer, head: OpenHead, bytes: Uint8Array, n: number, budget: SealBudget, tails: TailToPack[] | null): void {
  if (tails !== null && n === head.count && packsBetter(bytes.byteLength, budget)) {
    tails.push({ key: chunkKey(series, timeAt(head.cols, 0)), bytes });
    dropSealed(head, n);
  } else installChunk(env, series, head, bytes, n);
}

/** The head's first n points are sealed: sealedEnd moves past them and the head forgets them. */
function dropSealed(head: OpenHead, n: number): void {
  sealTally.chunks++;
  head.sealedEnd = timeAt(head.cols, n - 1);
  head.dropFront(n);
}
