// Choosing how many of a head's points go into its next sealed chunk, and encoding them.
// Pure (no LMDB, no head object), so the writer's thread and the seal thread run the same
// code: the point count comes from the series' bytes per point, and an estimate that
// misses the [99%, 100%] window of the byte budget is corrected along the secant of the
// last two encodes (size is nearly linear in points).
import type { PointColumns } from './encoding/chunk-types.js';
import { encodeChunk } from './encoding/chunk.js';
import { MIN_CHUNK_BYTES } from './encoding/chunk-header.js';
import { slicePointColumns } from './encoding/point-columns.js';

export interface SealBudget {
  /** Most points per sealed chunk (MAX_CHUNK_POINTS unless a test wants tiny chunks). */
  chunkPoints: number;
  /** Largest encoded chunk in bytes. */
  chunkBytes: number;
}

/** A sealed chunk should fill at least this share of the byte budget (an LMDB page is paid whole). */
export const FILL_LOW = 0.99;
/** The share of the budget a chunk is aimed at from the bytes-per-point estimate. */
const FILL_TARGET = 0.996;
const MAX_TRIES = 6;

/** What fitting learns about the series: carried from chunk to chunk of one head. */
export interface FitState {
  /** Encoded bytes per point beyond the fixed chunk overhead (NaN: not measured yet). */
  bytesPerPoint: number;
  /** Encodes done (for the benchmark's encodes-per-chunk figure). */
  encodes: number;
  /** The last encode, for the head's calibration: bytes and points (0: none). */
  lastBytes: number;
  lastPoints: number;
}

export function fitState(bytesPerPoint: number): FitState {
  return { bytesPerPoint, encodes: 0, lastBytes: 0, lastPoints: 0 };
}

/** Points of the one sample encode that estimates a series' bytes per point before it has a chunk. */
export const SAMPLE_POINTS = 1024;

/** Whether a head of `count` points is worth sealing now (all: every point must go). */
export function headIsFull(count: number, bytesPerPoint: number, budget: SealBudget): boolean {
  return count >= budget.chunkPoints || MIN_CHUNK_BYTES + count * bytesPerPoint >= budget.chunkBytes * FILL_LOW; // NaN: false
}

/** The point count at which headIsFull turns true (NaN while bytesPerPoint is not known). */
export function pointsWhenFull(bytesPerPoint: number, budget: SealBudget): number {
  return Math.min(budget.chunkPoints, Math.ceil((budget.chunkBytes * FILL_LOW - MIN_CHUNK_BYTES) / bytesPerPoint));
}

/** Encodes cols[from, from+n) and learns bytes per point from it (not counted in st.encodes). */
function measure(cols: PointColumns, from: number, n: number, st: FitState): Uint8Array {
  const bytes = encodeChunk(slicePointColumns(cols, from, n));
  st.lastBytes = bytes.byteLength; st.lastPoints = n;
  st.bytesPerPoint = Math.max(1e-3, (bytes.byteLength - MIN_CHUNK_BYTES) / n);
  return bytes;
}

/** A series not measured yet: one encode of its newest SAMPLE_POINTS points gives the estimate. */
export function sampleNewest(cols: PointColumns, st: FitState): void {
  const k = Math.min(cols.count, SAMPLE_POINTS);
  measure(cols, cols.count - k, k, st);
}

function encodeCounted(cols: PointColumns, n: number, st: FitState): Uint8Array {
  st.encodes++;
  return measure(cols, 0, n, st);
}

/**
 * The next chunk off the front of cols[0..count): the longest prefix that fits the byte
 * budget, found in one or two encodes most of the time. null when the points are not
 * enough for a full chunk and `all` is false (they stay open).
 */
export function fitChunk(cols: PointColumns, budget: SealBudget, all: boolean, st: FitState): { bytes: Uint8Array; n: number } | null {
  const count = cols.count;
  if (count === 0) return null;
  const maxBytes = budget.chunkBytes, aim = maxBytes * FILL_TARGET, target = aim - MIN_CHUNK_BYTES;
  const avail = Math.min(count, budget.chunkPoints);
  const full = count >= budget.chunkPoints;
  let bpp = st.bytesPerPoint;
  if (!all && !headIsFull(count, bpp, budget)) return null;
  let n = bpp > 0 ? Math.floor(target / bpp) : avail;
  let best: { bytes: Uint8Array; n: number } | null = null;
  let tooMany = avail + 1;
  let prevN = 0, prevBytes = MIN_CHUNK_BYTES;
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    n = Math.max(1, Math.min(n, avail, tooMany - 1));
    if (best !== null && n <= best.n) break;
    const bytes = encodeCounted(cols, n, st);
    bpp = st.bytesPerPoint;
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
    const bytes = encodeCounted(cols, mid, st);
    if (bytes.byteLength <= maxBytes) best = { bytes, n: mid }; else tooMany = mid;
  }
  while (best === null) {
    n = Math.max(1, n >> 1);
    const bytes = encodeCounted(cols, n, st);
    if (bytes.byteLength <= maxBytes || n === 1) best = { bytes, n };
  }
  // the whole head fits with room to spare: it is not full yet, keep it open
  if (!all && best.n === count && !full && best.bytes.byteLength < maxBytes * FILL_LOW) return null;
  return best;
}
