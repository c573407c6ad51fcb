// Sealed chunks: encode a run of points of one series into a self-describing,
// checksummed byte string, and decode it back into caller-owned columns.
//
// Layout (FORMAT.md): a compact header (version 5, as 3 and 4) and the render summary under their own
// CRC32, then the time, value and quality sections, then a CRC32 of everything before it.
// Decoders verify the trailing CRC before reading any column, so a damaged chunk yields
// ChunkCorruptError and never a wrong value; header-only readers verify the header CRC only.

import { bug } from '../../errors.js';
import { ChunkReader, ChunkWriter } from './byte-io.js';
import {
  computeStats, MIN_CHUNK_BYTES, parseHeader, sectionOffsets, typeCode, verifyChunkChecksum, type HeaderStats,
} from './chunk-header.js';
import { assembleV3, writeV3Fields } from './chunk-header-v3.js';
import { encodeSummary } from './chunk-summary.js';
import type { ChunkHeader, PointColumns, ValueType } from './chunk-types.js';
import { encodeIntColumn, IntMode } from './int-column.js';
import { decodeIntColumnTo } from './int-column-decode.js';
import { scratchColumn, ScratchSlot } from './scratch.js';
import { decodeTimes, encodeTimes } from './time-column.js';
import { decodeValues, decodeValuesNumeric, encodeValues, intColumnSkip } from './value-columns.js';

export { FORMAT_VERSION, readInt64Extremes } from './chunk-header.js';

/**
 * Byte budget of one sealed chunk: one LMDB overflow page of a series env created with
 * 16 KiB pages (SERIES_PAGE_SIZE, series-env.ts). An overflow page holds its page size less
 * 24 bytes of value. Measured here (lmdb 3.5, binary key of 24 B and binary value): on 4 KiB
 * pages 4,072 B take one page and 4,076 take two (2026-11-21); on 16 KiB pages 16,360 B
 * take one and 16,361 two (2026-11-27). A store created before 2026-11-27 keeps its 4 KiB
 * pages and seals to 4,072 B (sealBudgetFor in seal.ts). Multi-page chunks were rejected:
 * see docs/decisions.md.
 */
export const CHUNK_BYTE_BUDGET = 16360;

/**
 * Upper bound on points per chunk, whatever the byte size: bounds decode scratch and the
 * work of a read that needs one point (16,384 points decode in ~0.15 ms, 65,536 in ~0.6).
 * It sits above the ~38,000 points that fill a 16 KiB budget for series that cost only
 * their timestamps (setpoints, states, enums at ~0.43 B/point), so those chunks also fill
 * their page; a 4 KiB budget fills at ~9,300 (the cap was 16,384 while every store had
 * 4 KiB pages; at 8,192 those chunks stopped at ~3,550 B and wasted 13% of each page).
 */
export const MAX_CHUNK_POINTS = 65536;

const MAX_OFFSET = 2 ** 53;
/** Points encoded first by encodeChunkPrefix to learn the series' bytes per point. */
const PROBE_POINTS = 512;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** With the u flag a class of surrogates matches only unpaired ones. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const writer = new ChunkWriter();
const headerWriter = new ChunkWriter(1024);
const stats: HeaderStats = { minIdx: 0, maxIdx: 0, good: 0, uncertain: 0, bad: 0 };

/** Length of the value column of `type` in cols, -1 when that column is missing. */
function valueColumnLength(cols: PointColumns, type: ValueType): number {
  switch (type) {
    case 'float64': return cols.f64 === null ? -1 : cols.f64.length;
    case 'int64': return cols.i64 === null ? -1 : cols.i64.length;
    case 'boolean': return cols.u8 === null ? -1 : cols.u8.length;
    case 'enum': return cols.ord === null ? -1 : cols.ord.length;
    case 'string': return cols.str === null ? -1 : cols.str.length;
  }
}

const COLUMN_NAME: Record<ValueType, string> = { float64: 'f64', int64: 'i64', boolean: 'u8', enum: 'ord', string: 'str' };

/** Refuses columns a chunk cannot hold exactly; the write path refuses such points before this. */
function validate(cols: PointColumns, n: number): void {
  if (!Number.isInteger(n) || n < 1) throw bug('points.count', `must be an integer >= 1, got ${n}`);
  if (!(cols.type in COLUMN_NAME)) throw bug('points.type', `unknown value type ${String(cols.type)}`);
  const name = COLUMN_NAME[cols.type];
  const cap = valueColumnLength(cols, cols.type);
  if (cap < n) throw bug(`points.${name}`, cap < 0 ? `missing for type ${cols.type}` : `holds ${cap} values, count is ${n}`);
  if (cols.tsOffset.length < n) throw bug('points.tsOffset', `holds ${cols.tsOffset.length} values, count is ${n}`);
  if (cols.quality.length < n) throw bug('points.quality', `holds ${cols.quality.length} values, count is ${n}`);
  const o = cols.tsOffset;
  if (!Number.isSafeInteger(o[0])) throw bug('points.tsOffset[0]', `not an exact integer: ${o[0]}`);
  for (let i = 1; i < n; i++) {
    if (!Number.isSafeInteger(o[i]) || !(o[i] > o[i - 1])) {
      throw bug(`points.tsOffset[${i}]`, `must be an integer greater than the previous offset, got ${o[i]} after ${o[i - 1]}`);
    }
  }
  if (!(o[n - 1] - o[0] < MAX_OFFSET)) throw bug('points.tsOffset', 'a chunk must span less than 2^53 ns');
  const first = cols.tsBase + BigInt(o[0]);
  const last = cols.tsBase + BigInt(o[n - 1]);
  if (first < INT64_MIN || last > INT64_MAX) throw bug('points.tsBase', 'times fall outside the int64 range');
  if (cols.type === 'float64') {
    const f = cols.f64 as Float64Array;
    for (let i = 0; i < n; i++) if (!Number.isFinite(f[i])) throw bug(`points.f64[${i}]`, `non-finite value ${f[i]}`);
  } else if (cols.type === 'boolean') {
    const b = cols.u8 as Uint8Array;
    for (let i = 0; i < n; i++) if (b[i] > 1) throw bug(`points.u8[${i}]`, `boolean must be 0 or 1, got ${b[i]}`);
  } else if (cols.type === 'string') {
    const s = cols.str as string[];
    for (let i = 0; i < n; i++) {
      if (typeof s[i] !== 'string') throw bug(`points.str[${i}]`, 'not a string');
      // Lone surrogates have no UTF-8 form; storing them would not round-trip.
      if (LONE_SURROGATE.test(s[i])) throw bug(`points.str[${i}]`, 'contains a lone UTF-16 surrogate');
    }
  }
}

/** Encodes cols[0..count) as one sealed chunk (a fresh copy). */
export function encodeChunk(cols: PointColumns): Uint8Array {
  const n = cols.count;
  validate(cols, n);
  const w = writer;
  w.reset();
  computeStats(cols, n, stats);
  const o0 = cols.tsOffset[0];
  const rel = scratchColumn(ScratchSlot.TimeOffsets, n);
  // Offsets relative to the first point are exact: both are safe integers less than 2^53 apart.
  for (let i = 0; i < n; i++) rel[i] = cols.tsOffset[i] - o0;
  // The sections are written from offset 0 and land at timesAt, a multiple of 4: their
  // payload words keep the alignment they were written with.
  const unit = encodeTimes(w, rel, n);
  const valuesAt = w.pos;
  const k = encodeValues(w, cols, n);
  const qualityAt = w.pos;
  const q = scratchColumn(ScratchSlot.Quality, n);
  for (let i = 0; i < n; i++) q[i] = cols.quality[i];
  encodeIntColumn(w, q, n);
  // encodeValues left the value integers in ValueNumbers when k >= 0.
  const x = scratchColumn(ScratchSlot.ValueNumbers, n);
  const valueRle = k >= 0 && w.bytes[valuesAt + intColumnSkip(cols.type)] === IntMode.Rle;
  const h = headerWriter;
  h.reset();
  writeV3Fields(h, cols, n, rel, x, k, stats, valuesAt, qualityAt - valuesAt, w.pos - qualityAt);
  encodeSummary(h, rel, cols.quality, x, k, valueRle, unit, n);
  return assembleV3(typeCode(cols.type), cols.tsBase + BigInt(o0), h.bytes.subarray(0, h.pos), w.bytes.subarray(0, w.pos));
}

/**
 * Encodes a prefix of cols that fits in maxBytes, for sealing a head into chunks of at
 * most CHUNK_BYTE_BUDGET bytes: the whole run (up to MAX_CHUNK_POINTS) when it fits,
 * otherwise a prefix filling at least ~95% of the budget (or the longest found by halving
 * for tiny budgets). Always at least one point, even if that one point is larger.
 */
export function encodeChunkPrefix(cols: PointColumns, maxBytes: number = CHUNK_BYTE_BUDGET): { bytes: Uint8Array; count: number } {
  const total = Math.min(cols.count, MAX_CHUNK_POINTS);
  const view: PointColumns = { ...cols, count: Math.min(total, PROBE_POINTS) };
  // A short probe gives the bytes per point; size grows almost linearly with points, so a
  // proportional guess from it, corrected once or twice, lands near the budget.
  let bytes = encodeChunk(view);
  const fixed = MIN_CHUNK_BYTES;
  let count = view.count;
  let best: { bytes: Uint8Array; count: number } | null = bytes.length <= maxBytes ? { bytes, count } : null;
  if (count === total && best !== null) return best;
  let tooMany = best === null ? count : total + 1;
  let guess = Math.floor(((maxBytes * 0.98 - fixed) * count) / Math.max(1, bytes.length - fixed));
  for (let step = 0; step < 6; step++) {
    count = Math.max(1, Math.min(guess, total, tooMany - 1));
    if (best !== null && count <= best.count) break;
    view.count = count;
    bytes = encodeChunk(view);
    if (bytes.length <= maxBytes) {
      best = { bytes, count };
      if (count === total || bytes.length >= maxBytes * 0.95) break;
    } else tooMany = count;
    if (count === 1) break;
    guess = Math.floor(((maxBytes * 0.98 - fixed) * count) / Math.max(1, bytes.length - fixed));
  }
  // size is not linear in points when the run turns noisy (or a -0 forces the float split):
  // bisect between the largest count that fits and the smallest that does not
  while (best !== null && best.bytes.length < maxBytes * 0.95 && tooMany - best.count > 1) {
    view.count = best.count + ((tooMany - best.count) >> 1);
    bytes = encodeChunk(view);
    if (bytes.length <= maxBytes) best = { bytes, count: view.count }; else tooMany = view.count;
  }
  while (best === null) {
    count = Math.max(1, count >> 1);
    view.count = count;
    bytes = encodeChunk(view);
    if (bytes.length <= maxBytes || count === 1) best = { bytes, count };
  }
  return best;
}

/** O(1): the header, after checking its own checksum, version and the chunk's length. */
export function readChunkHeader(bytes: Uint8Array): ChunkHeader {
  return parseHeader(bytes);
}

export function chunkTimeRange(bytes: Uint8Array): { firstTs: bigint; lastTs: bigint } {
  const h = parseHeader(bytes);
  return { firstTs: h.firstTs, lastTs: h.lastTs };
}

let alignedCopy = new Uint8Array(8192);

/** A reader over the whole chunk with a word view; copies unaligned input into a reused buffer. */
export function openChunk(bytes: Uint8Array): { h: ChunkHeader; bytes: Uint8Array; words: Uint32Array } {
  const h = parseHeader(bytes);
  return { h, ...openVerified(bytes) };
}

/**
 * Checks the whole-chunk CRC and gives aligned bytes with their word view, for a caller
 * that has already checked the header (readChunkHeader or an equivalent).
 */
export function openVerified(bytes: Uint8Array): { bytes: Uint8Array; words: Uint32Array } {
  verifyChunkChecksum(bytes);
  let b = bytes;
  if ((bytes.byteOffset & 3) !== 0) {
    if (alignedCopy.length < bytes.length) alignedCopy = new Uint8Array(Math.ceil((bytes.length * 1.5) / 8) * 8);
    alignedCopy.set(bytes);
    b = alignedCopy.subarray(0, bytes.length);
  }
  return { bytes: b, words: new Uint32Array(b.buffer, b.byteOffset, b.length >>> 2) };
}

function sectionEnds(bytes: Uint8Array): { timesAt: number; valuesAt: number; qualityAt: number; end: number } {
  return sectionOffsets(bytes);
}

export function finishSection(r: ChunkReader, what: string): void {
  if (r.pos !== r.end) r.fail(`${what} section has ${r.end - r.pos} unread bytes`);
}

function checkCapacity(field: string, length: number, count: number): void {
  if (length < count) throw bug(field, `capacity ${length} is less than the chunk's ${count} points`);
}

/**
 * Fills out (capacity >= count) with the chunk's points; out.tsBase becomes the first time.
 * Returns count. `header`: this chunk's header as readChunkHeader gave it, when the caller
 * has it (a range listing reads every header first), so it is not parsed again.
 */
export function decodeChunk(bytes: Uint8Array, out: PointColumns, header?: ChunkHeader): number {
  const c = header === undefined ? openChunk(bytes) : { h: header, ...openVerified(bytes) };
  const n = c.h.count;
  checkCapacity('out.tsOffset', out.tsOffset.length, n);
  checkCapacity('out.quality', out.quality.length, n);
  const needed = c.h.type;
  const cap = valueColumnLength(out, needed);
  if (needed !== 'string') checkCapacity(`out.${COLUMN_NAME[needed]}`, cap, n);
  else if (out.str === null) throw bug('out.str', 'missing for a string chunk');
  const s = sectionEnds(c.bytes);
  let r = new ChunkReader(c.bytes, c.words, s.timesAt, s.valuesAt);
  decodeTimes(r, n, out.tsOffset);
  finishSection(r, 'time');
  r = new ChunkReader(c.bytes, c.words, s.valuesAt, s.qualityAt);
  decodeValues(r, needed, n, out);
  finishSection(r, 'value');
  r = new ChunkReader(c.bytes, c.words, s.qualityAt, s.end);
  decodeIntColumnTo(r, n, out.quality);
  finishSection(r, 'quality');
  out.type = needed;
  out.count = n;
  out.tsBase = c.h.firstTs;
  return n;
}

let qualityScratch = new Uint32Array(0);

/**
 * The quality of a chunk's last point, decoding the quality section only (after the
 * whole-chunk CRC, like every decoder). `header`: this chunk's, as readChunkHeader gave it.
 * With the header's lastTs and last value slot it is the chunk's last point (readSnapshot).
 */
export function decodeLastQuality(bytes: Uint8Array, header: ChunkHeader): number {
  const c = openVerified(bytes);
  const n = header.count;
  if (qualityScratch.length < n) qualityScratch = new Uint32Array(Math.max(n, 4096));
  const s = sectionEnds(c.bytes);
  const r = new ChunkReader(c.bytes, c.words, s.qualityAt, s.end);
  decodeIntColumnTo(r, n, qualityScratch);
  finishSection(r, 'quality');
  return qualityScratch[n - 1];
}

/** Fills tsOut with offsets from the chunk's first time (readChunkHeader(bytes).firstTs). Returns count. */
export function decodeTimesOnly(bytes: Uint8Array, tsOut: Float64Array): number {
  const c = openChunk(bytes);
  const n = c.h.count;
  checkCapacity('tsOut', tsOut.length, n);
  const s = sectionEnds(c.bytes);
  const r = new ChunkReader(c.bytes, c.words, s.timesAt, s.valuesAt);
  decodeTimes(r, n, tsOut);
  finishSection(r, 'time');
  return n;
}

/**
 * Times (offsets from the chunk's first time) and the numeric view of the values: int64
 * as the nearest double, boolean 0/1, enum ordinal. String chunks have no numeric view.
 */
export function decodeNumericInto(bytes: Uint8Array, tsOut: Float64Array, f64Out: Float64Array): number {
  const c = openChunk(bytes);
  const n = c.h.count;
  if (c.h.type === 'string') throw bug('chunk', 'a string chunk has no numeric view');
  checkCapacity('tsOut', tsOut.length, n);
  checkCapacity('f64Out', f64Out.length, n);
  const s = sectionEnds(c.bytes);
  let r = new ChunkReader(c.bytes, c.words, s.timesAt, s.valuesAt);
  decodeTimes(r, n, tsOut);
  finishSection(r, 'time');
  r = new ChunkReader(c.bytes, c.words, s.valuesAt, s.qualityAt);
  decodeValuesNumeric(r, c.h.type, n, f64Out);
  finishSection(r, 'value');
  return n;
}
