// Finding and decoding a series' sealed chunks and its head inside a ReadView.
// A series' data = sealed chunks (disjoint, keyed by first time) followed by one head:
// the head holds every point later than the last sealed point (`sealedEnd`).
import { ServiceError } from '../errors.js';
import { decodeChunk, decodeLastQuality, readChunkHeader, readInt64Extremes } from './encoding/chunk.js';
import { ChunkCorruptError, type ChunkHeader, type PointColumns } from './encoding/chunk-types.js';
import { chunkKey, INT64_MAX, INT64_MIN, readTime, uuidOf } from './keys.js';
import { allocColumns, valueAt, type PointValue } from './point-runs.js';
import type { ReadView, SeriesEnv } from './series-env.js';
import { packedBytesKept, parsePackRef } from './tail-packs.js';

export interface StoredChunk {
  key: Buffer;
  start: bigint;
  bytes: Buffer;
}

/** The chunk-corrupt ServiceError of a damaged chunk of `series` (e: what the decoder threw). */
export function throwCorrupt(series: Buffer, start: bigint | null, e: unknown): never {
  corrupt(series, start, e);
}

function corrupt(series: Buffer, start: bigint | null, e: unknown): never {
  const byteLength = e instanceof ChunkCorruptError ? e.byteLength : 0;
  throw new ServiceError('chunk-corrupt', `series ${uuidOf(series)} chunk ${start ?? 'head'}: ${(e as Error).message}`, {
    series: uuidOf(series), chunk_start_ns: start === null ? null : start.toString(), byte_length: byteLength,
  });
}

/** Whether e is the chunk-corrupt error of a damaged chunk (corrupt() above) or head segment (head-record.ts). */
export function isChunkCorrupt(e: unknown): e is ServiceError {
  return e instanceof ServiceError && e.code === 'chunk-corrupt';
}

export function headerOf(series: Buffer, start: bigint | null, bytes: Uint8Array): ChunkHeader {
  try {
    return readChunkHeader(bytes);
  } catch (e) {
    corrupt(series, start, e);
  }
}

/**
 * Decodes a whole chunk into fresh columns (copies: the LMDB buffer may be reused), or into
 * `into` when given and large enough (a caller's scratch, overwritten by the next decode).
 * `header`: the chunk's header from headerOf, when the caller already read it.
 */
export function decodeColumns(series: Buffer, start: bigint | null, bytes: Uint8Array, into?: PointColumns, header?: ChunkHeader): PointColumns {
  const h = header ?? headerOf(series, start, bytes);
  const cols = into !== undefined && into.tsOffset.length >= h.count && into.quality.length >= h.count && fits(into, h.type, h.count) ? into : allocColumns(h.type, h.count);
  try {
    cols.count = decodeChunk(bytes, cols, h);
  } catch (e) {
    corrupt(series, start, e);
  }
  return cols;
}

/** Reused by lastPointOfChunk's whole decodes (one per thread; nothing keeps it past the call). */
let lastScratch: PointColumns | undefined;

/**
 * The last point of a stored chunk. Versions 3-5 carry its time and value exactly in the
 * header (x / 10^k as the value column decodes it, or raw slots; FORMAT.md), so only the
 * quality section is decoded, after the whole-chunk CRC; strings and versions 1-2 decode whole.
 */
export function lastPointOfChunk(series: Buffer, start: bigint | null, bytes: Uint8Array): { ts: bigint; value: PointValue; quality: number } {
  const h = headerOf(series, start, bytes);
  if (h.formatVersion >= 3 && h.type !== 'string') {
    let quality: number;
    try {
      quality = decodeLastQuality(bytes, h);
    } catch (e) {
      corrupt(series, start, e);
    }
    const value: PointValue = h.type === 'float64' || h.type === 'enum' ? h.last : h.type === 'boolean' ? h.last === 1 : readInt64Extremes(bytes).last;
    return { ts: h.lastTs, value, quality };
  }
  const cols = lastScratch = decodeColumns(series, start, bytes, lastScratch, h);
  const i = cols.count - 1;
  return { ts: cols.tsBase + BigInt(cols.tsOffset[i]), value: valueAt(cols, i), quality: cols.quality[i] };
}

/** Whether `c` has a value column of `type` with room for n points. */
function fits(c: PointColumns, type: PointColumns['type'], n: number): boolean {
  switch (type) {
    case 'float64': return c.f64 !== null && c.f64.length >= n;
    case 'int64': return c.i64 !== null && c.i64.length >= n;
    case 'boolean': return c.u8 !== null && c.u8.length >= n;
    case 'enum': return c.ord !== null && c.ord.length >= n;
    case 'string': return c.str !== null && c.str.length >= n;
  }
}

/**
 * A chunks-table entry as the chunk it stands for. A packed tail's reference resolves to a
 * copy of its bytes in the pack; one that does not resolve stays the reference, which every
 * header check refuses as a damaged chunk (chunk-header.ts names it).
 */
function entry(view: ReadView, key: Buffer, value: Buffer): StoredChunk {
  const ref = parsePackRef(value);
  if (ref !== null) value = packedBytesKept(view.env, ref, view.txn) ?? value;
  return { key, start: readTime(key, 16), bytes: value };
}

/** The chunk with the greatest start <= t. */
export function floorChunk(view: ReadView, series: Buffer, t: bigint): StoredChunk | null {
  for (const { key, value } of view.env.chunks.getRange({ start: chunkKey(series, t), end: chunkKey(series, INT64_MIN), inclusiveEnd: true, reverse: true, limit: 1, transaction: view.txn })) {
    return entry(view, key, value);
  }
  return null;
}

/** The first chunk with start > t (or >= t when inclusive). */
export function nextChunk(view: ReadView, series: Buffer, t: bigint, inclusive = false): StoredChunk | null {
  for (const { key, value } of view.env.chunks.getRange({ start: chunkKey(series, t), end: chunkKey(series, INT64_MAX), inclusiveEnd: true, exclusiveStart: !inclusive, limit: 1, transaction: view.txn })) {
    return entry(view, key, value);
  }
  return null;
}

/** Chunks whose start lies in [from, to] in time order, plus the chunk before `from` when it may reach into the range. */
export function* chunksCovering(view: ReadView, series: Buffer, from: bigint, to: bigint): Generator<StoredChunk> {
  const before = floorChunk(view, series, from);
  let startKey = chunkKey(series, from);
  if (before) {
    yield before;
    if (before.start === from) startKey = before.key;
  }
  for (const { key, value } of view.env.chunks.getRange({ start: startKey, end: chunkKey(series, to), inclusiveEnd: true, exclusiveStart: before !== null && before.start === from, transaction: view.txn })) {
    yield entry(view, key, value);
  }
}

/**
 * The chunks of chunksCovering(from, to) newest first, through one reverse cursor: those
 * starting in (from, to], then the one starting at or before `from` (the floor), then it
 * stops. chunksCovering's floor seek plus forward range were two cursors per call, a tenth
 * of a fleet raw read's worker time over 1,045 segments of one or two chunks (2026-11-28).
 */
export function* chunksCoveringNewestFirst(view: ReadView, series: Buffer, from: bigint, to: bigint): Generator<StoredChunk> {
  for (const { key, value } of view.env.chunks.getRange({ start: chunkKey(series, to), end: chunkKey(series, INT64_MIN), inclusiveEnd: true, reverse: true, transaction: view.txn })) {
    const c = entry(view, key, value);
    yield c;
    if (c.start <= from) return;
  }
}

/** Every chunk of a series in time order. */
export function* allChunks(view: ReadView, series: Buffer, reverse = false, limit?: number): Generator<StoredChunk> {
  const lo = chunkKey(series, INT64_MIN), hi = chunkKey(series, INT64_MAX);
  // `limit` when the caller takes only the first few (a snapshot takes one): lmdb-js then stops its cursor there
  for (const { key, value } of view.env.chunks.getRange({ start: reverse ? hi : lo, end: reverse ? lo : hi, inclusiveEnd: true, reverse, transaction: view.txn, ...(limit === undefined ? {} : { limit }) })) {
    yield entry(view, key, value);
  }
}

export function putChunkInTxn(env: SeriesEnv, series: Buffer, start: bigint, bytes: Uint8Array): void {
  env.chunks.putSync(chunkKey(series, start), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}
