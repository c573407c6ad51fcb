// Turning a run of points into sealed chunks. Chunks are filled to the codec's byte
// budget (CHUNK_BYTE_BUDGET, 4,000 B: one 4 KiB LMDB page, STACK-NOTES §3) and capped at
// a point count, using the codec's encodeChunkPrefix. Optionally swinging-door first.
import type { PointColumns } from './encoding/chunk-types.js';
import { CHUNK_BYTE_BUDGET, MAX_CHUNK_POINTS, encodeChunkPrefix } from './encoding/chunk.js';
import { slicePointColumns } from './encoding/point-columns.js';
import { putChunkInTxn } from './chunk-access.js';
import { timeAt } from './point-runs.js';
import type { SeriesMeta } from './series-meta.js';
import type { SeriesEnv } from './series-env.js';
import { swingingDoor } from './swinging-door.js';

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

export interface HeadSplit {
  /** Points that stay open (a view of cols), null when none. */
  rest: PointColumns | null;
  /** rest already encoded, to store as the head without encoding twice. */
  restBytes: Uint8Array | null;
  /** Time of the last point sealed here, null when nothing was sealed. */
  sealedEnd: bigint | null;
  dropped: number;
}

/** Seals full chunks off the front of a head until what remains fits one chunk below the point cap. */
export function sealFullPrefixes(env: SeriesEnv, series: Buffer, meta: SeriesMeta, cols: PointColumns, budget: SealBudget): HeadSplit {
  let from = 0, sealedEnd: bigint | null = null, dropped = 0;
  while (from < cols.count) {
    const view = capped(cols, from, budget);
    const p = encodeChunkPrefix(view, budget.chunkBytes);
    const remaining = cols.count - from;
    if (p.count === remaining && remaining < budget.chunkPoints) {
      return { rest: from === 0 ? cols : slicePointColumns(cols, from, remaining), restBytes: p.bytes, sealedEnd, dropped };
    }
    dropped += sealRun(env, series, meta, slicePointColumns(cols, from, p.count), budget, true).dropped;
    from += p.count;
    sealedEnd = timeAt(cols, from - 1);
  }
  return { rest: null, restBytes: null, sealedEnd, dropped };
}
