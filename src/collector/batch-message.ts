// A DataBatch as the bytes of its CollectorMessage (proto/collector.proto), written by hand:
// one Buffer sized up front, the header fields as varints and each column copied once from
// the caller's typed array. The generic path (an object of Buffers handed to protobufjs)
// built a message object, sized it field by field and copied every column again; this is
// the per-batch work of every collector, so it is done the short way. The columns are the
// machine's little-endian bytes, as the server reads them (batch-columns.ts).
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { BatchColumns } from '../ingest/batch-columns.js';
import { varintSize, writeVarint } from '../ingest/protobuf-varint.js';

export type WireLane = 'LIVE' | 'BACKFILL';

export interface BatchFields {
  stream: number;
  lane: WireLane;
  seq: number;
  type: ValueType;
  times: BigInt64Array;
  values: BatchColumns['values'];
  /** null: every point good (the field is left out). */
  quality: Uint32Array | null;
  receiptNs: bigint;
  /** A scan: the stream of each point (DataBatch.streams); `stream` is then not sent. */
  streams?: Uint32Array | null;
}

const LANE_NUMBER: Record<WireLane, number> = { LIVE: 1, BACKFILL: 2 };
/** Field numbers of the value columns in DataBatch. */
const VALUE_FIELD: Record<Exclude<ValueType, 'string'>, number> = { float64: 6, int64: 7, boolean: 8, enum: 9 };
const STR_FIELD = 10, QUALITY_FIELD = 11, STREAMS_FIELD = 13;

/** A signed int64 as protobuf writes it: two's complement, 10 bytes when negative. */
function int64Varint(v: bigint): bigint {
  return v < 0n ? v + (1n << 64n) : v;
}

function bigVarintSize(v: bigint): number {
  let n = 1;
  while (v >= 128n) { v >>= 7n; n++; }
  return n;
}

function writeBigVarint(buf: Buffer, at: number, v: bigint): number {
  while (v >= 128n) { buf[at++] = Number(v & 127n) | 128; v >>= 7n; }
  buf[at++] = Number(v);
  return at;
}

const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Length of a length-delimited field (tag, length, bytes) of `len` bytes. */
const delimited = (field: number, len: number) => varintSize(field << 3) + varintSize(len) + len;

/** The CollectorMessage { batch } bytes of one batch, in a Buffer of their own. */
export function encodeBatchMessage(b: BatchFields): Buffer {
  const { buf, bytes } = writeBatchMessage(b, (n) => Buffer.allocUnsafe(n), 0);
  return buf.subarray(0, bytes);
}

/**
 * Writes the CollectorMessage { batch } bytes of one batch at `offset` of the buffer that
 * `frame(bytes)` returns (it must hold offset + bytes): a transport's reusable frame.
 */
export function writeBatchMessage(b: BatchFields, frame: (bytes: number) => Buffer, offset: number): { buf: Buffer; bytes: number } {
  const n = b.times.length;
  const ts = bytesOf(b.times);
  const quality = b.quality === null ? null : bytesOf(b.quality);
  let strings: Buffer[] | null = null;
  let value: Uint8Array | null = null;
  if (b.type === 'string') strings = (b.values as string[]).map((s) => Buffer.from(s, 'utf8'));
  else value = bytesOf(b.values as Exclude<BatchColumns['values'], string[]>);
  const receipt = int64Varint(b.receiptNs);
  const streams = b.streams ? bytesOf(b.streams) : null;
  const stream = streams === null ? b.stream : 0;

  // DataBatch's own length first: the outer message's header depends on it
  let inner = 0;
  if (stream !== 0) inner += 1 + varintSize(stream);
  inner += 1 + varintSize(LANE_NUMBER[b.lane]);
  inner += 1 + varintSize(b.seq);
  inner += 1 + varintSize(n);
  inner += delimited(5, ts.byteLength);
  if (value !== null) inner += delimited(VALUE_FIELD[b.type as Exclude<ValueType, 'string'>], value.byteLength);
  if (strings !== null) for (const s of strings) inner += delimited(STR_FIELD, s.byteLength);
  if (quality !== null) inner += delimited(QUALITY_FIELD, quality.byteLength);
  if (receipt !== 0n) inner += 1 + bigVarintSize(receipt);
  if (streams !== null) inner += delimited(STREAMS_FIELD, streams.byteLength);

  const bytes = 1 + varintSize(inner) + inner;
  const buf = frame(bytes);
  let at = offset;
  buf[at++] = (2 << 3) | 2; // CollectorMessage.batch, length-delimited
  at = writeVarint(buf, at, inner);
  if (stream !== 0) { buf[at++] = (1 << 3) | 0; at = writeVarint(buf, at, stream); }
  buf[at++] = (2 << 3) | 0; at = writeVarint(buf, at, LANE_NUMBER[b.lane]);
  buf[at++] = (3 << 3) | 0; at = writeVarint(buf, at, b.seq);
  buf[at++] = (4 << 3) | 0; at = writeVarint(buf, at, n);
  const column = (field: number, src: Uint8Array) => {
    at = writeVarint(buf, at, (field << 3) | 2);
    at = writeVarint(buf, at, src.byteLength);
    buf.set(src, at);
    at += src.byteLength;
  };
  column(5, ts);
  if (value !== null) column(VALUE_FIELD[b.type as Exclude<ValueType, 'string'>], value);
  if (strings !== null) for (const s of strings) column(STR_FIELD, s);
  if (quality !== null) column(QUALITY_FIELD, quality);
  if (receipt !== 0n) { buf[at++] = (12 << 3) | 0; at = writeBigVarint(buf, at, receipt); }
  if (streams !== null) column(STREAMS_FIELD, streams);
  if (at !== offset + bytes) throw new Error(`BUG: batch message sized ${bytes} bytes, wrote ${at - offset}`);
  return { buf, bytes };
}
