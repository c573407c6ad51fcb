// What the writer and the seal thread say to each other (seal-offload.ts, seal-thread.ts).
import type { SealBudget } from './chunk-fit.js';
import type { PointColumns } from './encoding/chunk-types.js';

export interface SealRequest {
  id: number;
  /** A copy of the head's open points (the thread may keep and slice it). */
  cols: PointColumns;
  /** The quality of every point when cols.quality is left empty (the thread fills its own), else -1. */
  quality: number;
  budget: SealBudget;
  /** The series' measured bytes per point (NaN: not measured; the thread samples the copy first). */
  bytesPerPoint: number;
  /** Seal every point, the last chunk short (a quiet seal), not only full chunks. */
  all: boolean;
}

export interface SealReply {
  id: number;
  /** Full chunks off the front of the copy, in order (with `all`, every point: the last one may be short); empty when it was not full after all. */
  chunks: { bytes: Uint8Array; n: number }[];
  encodes: number;
  /** The last encode, for the head's calibration (0 points: none). */
  lastBytes: number;
  lastPoints: number;
  /** That encode sealed a chunk, not a sample of a series not measured before. */
  lastFromChunk: boolean;
  /** The encoder refused the points: the writer seals that head itself from then on (counted in sealThreadStats().failures). */
  error: string | null;
}
