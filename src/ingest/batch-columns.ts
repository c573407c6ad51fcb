// Turns the raw little-endian columns of a DataBatch into the write path's typed arrays,
// or names why the batch as a whole is malformed. Views are zero-copy when the bytes are
// 8-aligned in their buffer; protobuf decoding often slices at odd offsets, and then one
// memcpy per column into a shared slab is the whole cost (never a per-point object).
import type { ValueType } from '../storage/encoding/chunk-types.js';

/** The DataBatch fields as proto-loader hands them over (bytes as Buffer, int64 as string). */
export interface WireBatch {
  stream: number;
  lane: string;
  seq: string;
  count: number;
  ts_ns: Buffer;
  f64: Buffer;
  i64: Buffer;
  bool: Buffer;
  enum_ordinal: Buffer;
  str: string[];
  quality: Buffer;
  collector_receipt_ns: string;
  /** A scan's stream per point (count x uint32 LE); empty for a batch of one stream. */
  streams: Buffer;
}

export interface BatchColumns {
  times: BigInt64Array;
  values: Float64Array | BigInt64Array | Uint8Array | Int32Array | string[];
  quality: Uint32Array;
}

export type BatchFault = 'wrong-type' | 'bad-timestamps' | 'bad-columns' | 'too-large';

export type DecodeOutcome = { ok: true; cols: BatchColumns; maxTs: bigint } | { ok: false; reason: BatchFault; detail: string };

const GOOD = 192;
/**
 * Quality of batches that send none: views of one shared all-good column (the write path
 * never writes into a batch's columns), not a fresh filled array per batch.
 */
let allGood = new Uint32Array(0);
function goodQuality(n: number): Uint32Array {
  if (allGood.length < n) allGood = new Uint32Array(Math.max(n, 4096)).fill(GOOD);
  return allGood.subarray(0, n);
}

/**
 * Misaligned columns are copied into 8-aligned pieces of a shared slab, not each into an
 * ArrayBuffer of its own: two fresh (zero-filled, externally accounted, swept) ArrayBuffers
 * per 1,000-point batch cost about twice the copy itself. A piece is never handed out twice
 * (a full slab is left to the batches that view it and collected after them), so a batch
 * held longer (a slow group) only keeps its slab alive. Columns over half a slab get their
 * own buffer.
 * Why 60 KB, below glibc's mmap threshold (`npm start` sets it to 64 KB, scripts/start.mjs):
 * a 1 MB slab was a fresh mapping every ~65 batches, each page faulted in by the copy and
 * unmapped when V8 swept it, ~37,000 page faults a bulk load of 9.42 M points. 9,420
 * batches of 2 x 8 KB columns, 100 held (2026-11-28, load ~25, 3 runs each): 1 MB slabs
 * 0.76-0.86 CPU-s and ~37,000 faults, 56 KB slabs 0.06-0.20 CPU-s and 1,600-9,700 faults.
 */
const SLAB_BYTES = 60 * 1024;
let slab = new ArrayBuffer(SLAB_BYTES);
let slabUsed = 0;

function view<T>(buf: Buffer, width: number, make: (ab: ArrayBuffer, off: number, n: number) => T): T {
  const n = buf.byteLength / width;
  if (buf.byteOffset % width === 0) return make(buf.buffer as ArrayBuffer, buf.byteOffset, n);
  const bytes = buf.byteLength;
  if (bytes > SLAB_BYTES / 2) {
    const own = new Uint8Array(bytes);
    own.set(buf);
    return make(own.buffer, 0, n);
  }
  const need = (bytes + 7) & ~7;
  if (slabUsed + need > SLAB_BYTES) { slab = new ArrayBuffer(SLAB_BYTES); slabUsed = 0; }
  const at = slabUsed;
  slabUsed += need;
  new Uint8Array(slab, at, bytes).set(buf);
  return make(slab, at, n);
}

const VALUE_FIELD: Record<ValueType, 'f64' | 'i64' | 'bool' | 'enum_ordinal' | 'str'> = {
  float64: 'f64', int64: 'i64', boolean: 'bool', enum: 'enum_ordinal', string: 'str',
};

const WIDTH: Record<ValueType, number> = { float64: 8, int64: 8, boolean: 1, enum: 4, string: 0 };

function present(b: WireBatch, field: 'f64' | 'i64' | 'bool' | 'enum_ordinal' | 'str'): boolean {
  return field === 'str' ? b.str.length > 0 : b[field].byteLength > 0;
}

/** A scan's stream column (count x uint32), or a reason the batch is malformed. */
export function scanStreams(b: WireBatch): Uint32Array | { reason: BatchFault; detail: string } {
  if (b.streams.byteLength !== b.count * 4) return { reason: 'bad-columns', detail: `streams has ${b.streams.byteLength} bytes, expected ${b.count * 4} for ${b.count} points` };
  return view(b.streams, 4, (ab, off, len) => new Uint32Array(ab, off, len));
}

/**
 * Checks the batch's shape against the stream's type and limits, and the time bounds:
 * every time must be in [0, maxTs] (a collector whose clock is wrong by years gets told
 * instead of filling the store with points nobody will find).
 */
export function decodeBatchColumns(b: WireBatch, type: ValueType, maxPoints: number, maxTs: bigint): DecodeOutcome {
  const n = b.count;
  if (!Number.isInteger(n) || n < 1) return { ok: false, reason: 'bad-columns', detail: `count must be at least 1, got ${n}` };
  if (n > maxPoints) return { ok: false, reason: 'too-large', detail: `count ${n} exceeds max_batch_points ${maxPoints}` };
  const field = VALUE_FIELD[type];
  for (const other of ['f64', 'i64', 'bool', 'enum_ordinal', 'str'] as const) {
    if (other !== field && present(b, other)) {
      return { ok: false, reason: 'wrong-type', detail: `stream is ${type}; column ${other} is not allowed (use ${field})` };
    }
  }
  if (!present(b, field)) return { ok: false, reason: 'wrong-type', detail: `stream is ${type}; column ${field} is missing` };
  if (b.ts_ns.byteLength !== n * 8) return { ok: false, reason: 'bad-columns', detail: `ts_ns has ${b.ts_ns.byteLength} bytes, expected ${n * 8} for ${n} points` };
  const width = WIDTH[type];
  if (type === 'string') {
    if (b.str.length !== n) return { ok: false, reason: 'bad-columns', detail: `str has ${b.str.length} values, expected ${n}` };
  } else {
    const bytes = b[field as Exclude<typeof field, 'str'>].byteLength;
    if (bytes !== n * width) return { ok: false, reason: 'bad-columns', detail: `${field} has ${bytes} bytes, expected ${n * width} for ${n} points` };
  }
  if (b.quality.byteLength !== 0 && b.quality.byteLength !== n * 4) {
    return { ok: false, reason: 'bad-columns', detail: `quality has ${b.quality.byteLength} bytes, expected 0 or ${n * 4}` };
  }

  const times = view(b.ts_ns, 8, (ab, off, len) => new BigInt64Array(ab, off, len));
  // The bounds check and the maximum on 32-bit words (little-endian: low word, then the
  // signed high word): no BigInt per point. maxTs is in [0, 2^63).
  const words = new Uint32Array(times.buffer, times.byteOffset, n * 2);
  const limitHi = Number(maxTs >> 32n), limitLo = Number(maxTs & 0xffffffffn);
  let topHi = -1, topLo = 0;
  for (let i = 0; i < n; i++) {
    const lo = words[2 * i], hi = words[2 * i + 1] | 0;
    if (hi < 0 || hi > limitHi || (hi === limitHi && lo > limitLo)) {
      return { ok: false, reason: 'bad-timestamps', detail: `point ${i} has ts_ns ${times[i]}, outside [0, ${maxTs}] (server clock + allowed skew)` };
    }
    if (hi > topHi || (hi === topHi && lo > topLo)) { topHi = hi; topLo = lo; }
  }
  let values: BatchColumns['values'];
  switch (type) {
    case 'float64': values = view(b.f64, 8, (ab, off, len) => new Float64Array(ab, off, len)); break;
    case 'int64': values = view(b.i64, 8, (ab, off, len) => new BigInt64Array(ab, off, len)); break;
    case 'boolean': values = new Uint8Array(b.bool.buffer, b.bool.byteOffset, n); break;
    case 'enum': values = view(b.enum_ordinal, 4, (ab, off, len) => new Int32Array(ab, off, len)); break;
    case 'string': values = b.str; break;
  }
  let quality: Uint32Array;
  if (b.quality.byteLength === 0) quality = goodQuality(n);
  else quality = view(b.quality, 4, (ab, off, len) => new Uint32Array(ab, off, len));
  return { ok: true, cols: { times, values, quality }, maxTs: (BigInt(topHi) << 32n) | BigInt(topLo) };
}

/** Builds the column bytes of a batch (the collector side of the same layout). */
export function encodeBatchColumns(type: ValueType, times: BigInt64Array, values: BatchColumns['values'], quality: Uint32Array | null): Partial<Record<'ts_ns' | 'f64' | 'i64' | 'bool' | 'enum_ordinal' | 'quality', Buffer>> & { str?: string[] } {
  const bytes = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const out: ReturnType<typeof encodeBatchColumns> = { ts_ns: bytes(times) };
  if (quality) out.quality = bytes(quality);
  switch (type) {
    case 'float64': out.f64 = bytes(values as Float64Array); break;
    case 'int64': out.i64 = bytes(values as BigInt64Array); break;
    case 'boolean': out.bool = bytes(values as Uint8Array); break;
    case 'enum': out.enum_ordinal = bytes(values as Int32Array); break;
    case 'string': out.str = values as string[]; break;
  }
  return out;
}
