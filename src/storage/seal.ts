// Turning points into sealed chunks. Chunks are filled to the codec's byte budget
// (CHUNK_BYTE_BUDGET: one 4 KiB LMDB overflow page, STACK-NOTES §3) and capped at a point
// count. The append path seals from the writer's open head with an estimate-first single
// encode (sealFromHead); merges of late data re-chunk a run with the codec's
// encodeChunkPrefix (sealRun). Optionally swinging-door first.
import type { PointColumns } from './encoding/chunk-types.js';
import { CHUNK_BYTE_BUDGET, MAX_CHUNK_POINTS, encodeChunk, encodeChunkPrefix } from './encoding/chunk.js';
import { MIN_CHUNK_BYTES } from './encoding/chunk-header.js';
import { slicePointColumns } from './encoding/point-columns.js';
import { putChunkInTxn } from './chunk-access.js';
import { timeAt } from './point-runs.js';
import type { SeriesMeta } from './series-meta.js';
import type { SeriesEnv } from './series-env.js';
import { swingingDoor } from './swinging-door.js';
import type { OpenHead } from './open-head.js';

export interface SealBudget {
  /** Most points per sealed chunk (MAX_CHUNK_POINTS unless a test wants tiny chunks). */
  chunkPoints: number;
  /** Largest encoded chunk in bytes. */
  chunkBytes: number;
}

export const DEFAULT_SEAL_BUDGET: SealBudget = { chunkPoints: MAX_CHUNK_POINTS, chunkBytes: CHUNK_BYTE_BUDGET };

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

/** Process-wide tallies of sealFromHead, for the benchmark: encodes per sealed chunk. */
export const sealTally = { chunks: 0, encodes: 0 };

/** A sealed chunk should fill at least this share of the byte budget (an LMDB page is paid whole). */
const FILL_LOW = 0.99;
/** The share of the budget a chunk is aimed at from the bytes-per-point estimate. */
const FILL_TARGET = 0.996;
const MAX_TRIES = 6;

/**
 * Seals full chunks off the front of an open head (inside the write txn). The point count
 * of each chunk comes from the series' measured bytes per point, so a chunk is usually
 * encoded once or twice; an estimate that misses the [99%, 100%] window of the budget is
 * corrected along the secant of the last two encodes (size is nearly linear in points).
 * A head is full once it holds budget.chunkPoints points or its estimated encoding
 * reaches the fill window; with `all`, every point is sealed (idle heads, shutdown).
 * Returns the points sealed; head.sealedEnd follows.
 */
export function sealFromHead(env: SeriesEnv, series: Buffer, meta: SeriesMeta, head: OpenHead, budget: SealBudget, all: boolean): { points: number; dropped: number } {
  const out = { points: 0, dropped: 0 };
  const maxBytes = budget.chunkBytes, aim = maxBytes * FILL_TARGET, target = aim - MIN_CHUNK_BYTES;
  while (head.count > 0) {
    const avail = Math.min(head.count, budget.chunkPoints);
    const full = head.count >= budget.chunkPoints;
    let bpp = head.bytesPerPoint;
    if (!all && !full && !(MIN_CHUNK_BYTES + head.count * bpp >= maxBytes * FILL_LOW)) break; // NaN: not measured yet
    let n = bpp > 0 ? Math.floor(target / bpp) : avail;
    let best: { bytes: Uint8Array; n: number } | null = null;
    let tooMany = avail + 1;
    let prevN = 0, prevBytes = MIN_CHUNK_BYTES;
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      n = Math.max(1, Math.min(n, avail, tooMany - 1));
      if (best !== null && n <= best.n) break;
      const bytes = encodeChunk(slicePointColumns(head.cols, 0, n));
      sealTally.encodes++;
      head.calibrate(bytes.byteLength, n, true);
      bpp = head.bytesPerPoint;
      // bytes per point at the margin: the secant through the previous encode, when sane
      const slope = prevN > 0 && n !== prevN ? (bytes.byteLength - prevBytes) / (n - prevN) : NaN;
      const step = slope > 0 && slope < 4 * bpp ? slope : bpp;
      prevN = n; prevBytes = bytes.byteLength;
      if (bytes.byteLength <= maxBytes || n === 1) {
        best = { bytes, n };
        if (n === avail || bytes.byteLength >= maxBytes * FILL_LOW) break;
        n = Math.max(n + 1, n + Math.floor((aim - bytes.byteLength) / step));
      } else {
        tooMany = n;
        n = Math.min(n - 1, n - Math.ceil((bytes.byteLength - aim) / step));
      }
    }
    // Size is not linear in points when a run turns from quiet to noisy inside the chunk
    // (a 128-value block widens, RLE gives way to FOR): the guesses above can stop far below
    // the budget. Bisect between the largest count that fits and the smallest that does not.
    while (best !== null && best.bytes.byteLength < maxBytes * FILL_LOW && tooMany - best.n > 1) {
      const mid = best.n + ((tooMany - best.n) >> 1);
      const bytes = encodeChunk(slicePointColumns(head.cols, 0, mid));
      sealTally.encodes++;
      if (bytes.byteLength <= maxBytes) best = { bytes, n: mid }; else tooMany = mid;
    }
    while (best === null) {
      n = Math.max(1, n >> 1);
      const bytes = encodeChunk(slicePointColumns(head.cols, 0, n));
      sealTally.encodes++;
      if (bytes.byteLength <= maxBytes || n === 1) best = { bytes, n };
    }
    // the whole head fits with room to spare: it is not full yet, keep it open
    if (!all && best.n === head.count && !full && best.bytes.byteLength < maxBytes * FILL_LOW) break;
    const sealed = slicePointColumns(head.cols, 0, best.n);
    const endNs = head.cols.tsBase + BigInt(head.cols.tsOffset[best.n - 1]);
    if (meta.lifecycle?.policy.swinging_door && meta.type === 'float64') out.dropped += sealRun(env, series, meta, sealed, budget, true).dropped;
    else putChunkInTxn(env, series, timeAt(head.cols, 0), best.bytes);
    sealTally.chunks++;
    head.sealedEnd = endNs;
    head.dropFront(best.n);
    out.points += best.n;
  }
  return out;
}
