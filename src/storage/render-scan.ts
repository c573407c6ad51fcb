// The chunk walk of render: every chunk of a series over a time range, without copying
// values and without a BigInt or an object per chunk.
//
// Measured on 3,785 chunks (bench/render.ts, series 6): getRange on the binary table
// costs ~9 ms of CPU, nearly all of it lmdb-js copying each ~4 KB value into a fresh
// Buffer; the same walk over a handle whose decoder takes lmdb-js's reused read buffer
// costs ~2.7 ms. That buffer is overwritten by the next entry, so visit() must finish
// with the bytes before it returns (render does: header, summary, the straddling
// group). The header is read here into one reused object, with times as doubles
// relative to the range start (exact below 2^53 ns, which render requires anyway).
// Version 3 and 4 headers (varints after firstTs) go through V3Header, which allocates nothing.
import { crc32 } from 'node:zlib';
import type { Database } from 'lmdb';
import { ServiceError } from '../errors.js';
import { chunkVersion, headerCrcAt, unknownVersion, HEADER_BYTES, TRAILER_BYTES, TYPE_CODES, type ChunkSections } from './encoding/chunk-header.js';
import { FIRST_TS_AT, RAW_SLOTS, V3Header } from './encoding/chunk-header-v3.js';
import type { ValueType } from './encoding/chunk-types.js';
import { chunkKey, INT64_MIN, uuidOf } from './keys.js';
import type { ReadView, SeriesEnv } from './series-env.js';
import { packedBytesKept, packedBytesShared, parsePackRef } from './tail-packs.js';

const TWO_32 = 4294967296;
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
const tables = new WeakMap<SeriesEnv, Database<Uint8Array, Buffer>>();

/** The chunks table through a decoder that hands out lmdb-js's reused read buffer (no copy). */
function zeroCopyChunks(env: SeriesEnv): Database<Uint8Array, Buffer> {
  let db = tables.get(env);
  if (!db) {
    const passThrough = { encode: (b: Uint8Array) => b, decode: (b: Uint8Array) => b, needsStableBuffer: false };
    // Same key encoding and bytes as SeriesEnv.chunks; only the JS-side decoding differs.
    db = env.root.openDB<Uint8Array, Buffer>({ name: 'chunks', keyEncoding: 'binary', encoder: passThrough } as Parameters<SeriesEnv['root']['openDB']>[0] & object) as unknown as Database<Uint8Array, Buffer>;
    tables.set(env, db);
  }
  return db;
}

/**
 * Calls visit(bytes) for the chunk before `from` (it may reach into the range) and every
 * chunk starting in [from, to], in time order, until visit returns false.
 */
export function forEachChunk(view: ReadView, series: Buffer, from: bigint, to: bigint, visit: (bytes: Uint8Array) => boolean): void {
  const db = zeroCopyChunks(view.env);
  const fromKey = chunkKey(series, from);
  let floorAtFrom = false;
  for (const { key, value } of db.getRange({ start: fromKey, end: chunkKey(series, INT64_MIN), inclusiveEnd: true, reverse: true, limit: 1, transaction: view.txn })) {
    floorAtFrom = Buffer.compare(key as Buffer, fromKey) === 0;
    if (!visit(unpacked(view, value))) return;
  }
  for (const { value } of db.getRange({ start: fromKey, end: chunkKey(series, to), inclusiveEnd: true, exclusiveStart: floorAtFrom, transaction: view.txn })) {
    if (!visit(unpacked(view, value))) return;
  }
}

/**
 * A packed tail's bytes, else the value itself: in a read snapshot the thread's kept copy
 * (tail-packs.ts), inside the write transaction a view of the pack in lmdb-js's reused buffer.
 */
function unpacked(view: ReadView, value: Uint8Array): Uint8Array {
  const ref = parsePackRef(value);
  if (ref === null) return value;
  return (view.txn === undefined ? packedBytesShared(view.env, ref, undefined) : packedBytesKept(view.env, ref, view.txn)) ?? value;
}

/**
 * One chunk's header, times relative to a base time, and where its summary and sections
 * lie (for readChunkSummary); refilled by read() for each chunk.
 */
export class HeaderView implements ChunkSections {
  type: ValueType = 'float64';
  count = 0;
  firstRel = 0; lastRel = 0; minRel = 0; maxRel = 0;
  min = 0; max = 0; first = 0; last = 0;
  goodCount = 0;
  timesAt = 0; valuesAt = 0; qualityAt = 0; summaryAt = 0; summaryEnd = 0;
  /** A view of the ArrayBuffer under the last bytes: lmdb-js reuses one buffer, so this is built once. */
  private dv: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(8));
  private readonly v3 = new V3Header();

  constructor(private readonly series: Buffer, base: bigint) {
    const u = BigInt.asUintN(64, base);
    this.baseHi = Number(BigInt.asIntN(32, u >> 32n));
    this.baseLo = Number(u & 0xffffffffn);
  }
  private readonly baseHi: number;
  private readonly baseLo: number;

  /** Checks what the header alone proves (length, version, header CRC, counts) and reads it. */
  read(b: Uint8Array): void {
    const version = b.length === 0 ? 0 : chunkVersion(b);
    if (version >= 3) return this.readV3(b);
    if (version === 0) this.corrupt(b, unknownVersion(b[0]));
    if (b.length < HEADER_BYTES + TRAILER_BYTES) this.corrupt(b, `shorter than the ${HEADER_BYTES + TRAILER_BYTES}-byte minimum`);
    // Version 2: one CRC over the header and the summary after it.
    const crcAt = headerCrcAt(b);
    if (crcAt < 0) this.corrupt(b, 'time section offset out of bounds');
    if (crc32(b.subarray(0, crcAt)) !== u32(b, crcAt)) this.corrupt(b, 'header checksum mismatch');
    if (u32(b, 84) !== b.length) this.corrupt(b, `header says ${u32(b, 84)} bytes (truncated or padded)`);
    const type = TYPE_CODES[b[1]];
    if (type === undefined) this.corrupt(b, `unknown value type code ${b[1]}`);
    const count = u32(b, 4), good = u32(b, 72);
    if (count === 0 || good + u32(b, 76) + u32(b, 80) !== count) this.corrupt(b, `count ${count} disagrees with quality counts`);
    if (!(u32(b, 92) <= b.length - TRAILER_BYTES)) this.corrupt(b, 'section offsets out of order');
    const v1 = version === 1;
    this.timesAt = v1 ? HEADER_BYTES : crcAt + 4; this.valuesAt = u32(b, 88); this.qualityAt = u32(b, 92);
    this.summaryAt = v1 ? 0 : HEADER_BYTES; this.summaryEnd = v1 ? 0 : crcAt;
    this.type = type;
    this.count = count;
    this.goodCount = good;
    if (this.dv.buffer !== b.buffer) this.dv = new DataView(b.buffer);
    const o = b.byteOffset;
    this.firstRel = this.rel(o + 8); this.lastRel = this.rel(o + 16);
    this.minRel = this.rel(o + 24); this.maxRel = this.rel(o + 32);
    this.min = this.num(o + 40); this.max = this.num(o + 48);
    this.first = this.num(o + 56); this.last = this.num(o + 64);
  }

  /** Versions 3 and 4: firstTs at byte 1, the other times as offsets from it, values from their slots. */
  private readV3(b: Uint8Array): void {
    const h = this.v3;
    const why = h.read(b, true);
    if (why !== null) this.corrupt(b, why);
    const type = TYPE_CODES[h.typeCode];
    this.type = type;
    this.count = h.count;
    this.timesAt = h.timesAt; this.valuesAt = h.valuesAt; this.qualityAt = h.qualityAt;
    this.summaryAt = h.summaryAt; this.summaryEnd = h.crcAt;
    this.goodCount = h.count - h.uncertain - h.bad;
    if (this.dv.buffer !== b.buffer) this.dv = new DataView(b.buffer);
    const first = this.rel(b.byteOffset + FIRST_TS_AT);
    this.firstRel = first;
    this.lastRel = first + h.lastOff; this.minRel = first + h.minOff; this.maxRel = first + h.maxOff;
    if (type === 'string') {
      this.min = NaN; this.max = NaN; this.first = NaN; this.last = NaN;
    } else if (h.k !== RAW_SLOTS) {
      // x / 10^k is the value exactly (the encoder checked it for every point); k = 0: x.
      const d = POW10[h.k];
      this.min = h.xMin / d; this.max = h.xMax / d; this.first = h.xFirst / d; this.last = h.xLast / d;
    } else {
      const dv = this.dv;
      this.min = h.num(b, dv, 0); this.max = h.num(b, dv, 1); this.first = h.num(b, dv, 2); this.last = h.num(b, dv, 3);
    }
  }

  /** i64 at `at` minus the base, as a double: exact when the difference is below 2^53. */
  private rel(at: number): number {
    return (this.dv.getInt32(at + 4, true) - this.baseHi) * TWO_32 + (this.dv.getUint32(at, true) - this.baseLo);
  }

  /** A value slot in the numeric view (int64 slots hold an i64). */
  private num(at: number): number {
    if (this.type === 'int64') return this.dv.getInt32(at + 4, true) * TWO_32 + this.dv.getUint32(at, true);
    return this.dv.getFloat64(at, true);
  }

  private corrupt(b: Uint8Array, what: string): never {
    throw new ServiceError('chunk-corrupt', `series ${uuidOf(this.series)} chunk: chunk corrupt: ${what}`, {
      series: uuidOf(this.series), chunk_start_ns: null, byte_length: b.length,
    });
  }
}

function u32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

