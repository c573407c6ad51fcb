// The seam between the pure chunk codecs (src/storage/encoding) and the storage engine.
// Codecs are bytes in, bytes out; the engine composes them. Hot paths avoid BigInt:
// inside a chunk, times are exact integer nanosecond offsets from the chunk's base time,
// held in a Float64Array (exact while a chunk spans less than 2^53 ns, about 104 days;
// the engine never builds a chunk that long).

export type ValueType = 'float64' | 'int64' | 'boolean' | 'string' | 'enum';

/**
 * Column buffers for a run of points of one series, times ascending and unique.
 * Only the value column of `type` is used: f64 (float64), i64 (int64), u8 (boolean 0/1),
 * ord (enum ordinals), str (string). Decoders fill caller-owned columns that are at
 * least `capacity` long and return the count; they allocate only for strings.
 */
export interface PointColumns {
  type: ValueType;
  /** Number of valid points. */
  count: number;
  /** Base time (ns since epoch) that tsOffset is relative to. */
  tsBase: bigint;
  /** ns offset from tsBase, exact integers, strictly increasing. */
  tsOffset: Float64Array;
  f64: Float64Array | null;
  i64: BigInt64Array | null;
  u8: Uint8Array | null;
  ord: Int32Array | null;
  str: string[] | null;
  /** Quality per point (OPC DA style: >=192 good, 64..191 uncertain, <64 bad). */
  quality: Uint32Array;
}

/** What a sealed chunk says about itself without decoding its columns. */
export interface ChunkHeader {
  formatVersion: number;
  type: ValueType;
  count: number;
  firstTs: bigint;
  lastTs: bigint;
  /** Numeric view of values (float64, int64 as number, boolean 0/1, enum ordinal); NaN for strings. */
  min: number;
  max: number;
  minTs: bigint;
  maxTs: bigint;
  first: number;
  last: number;
  /** Points whose quality is good / uncertain / bad. */
  goodCount: number;
  uncertainCount: number;
  badCount: number;
  /** Byte size of the whole chunk including header and checksum. */
  byteLength: number;
}

export class ChunkCorruptError extends Error {
  constructor(message: string, readonly byteLength: number) {
    super(message);
    this.name = 'ChunkCorruptError';
  }
}
