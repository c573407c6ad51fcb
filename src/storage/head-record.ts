// The head: a series' open, unsealed points. On disk it is a small record per series plus
// append-only head segments, so a commit writes only its NEW points (never rewrites old
// ones) and sealing deletes the segments it emptied:
//
//   heads    uuid16 -> record (42 bytes, little-endian)
//     byte 0      record version (2; version 1 was the whole head as one chunk, still read)
//     byte 1      flags: bit 0 = sealedEnd present
//     bytes 2-9   sealedEnd: time of the last sealed point, int64 (0 when absent)
//     bytes 10-17 lastWriteMs: wall-clock ms of the last write into the head, float64
//     bytes 18-21 generation writer id, uint32 (0: written by no head cache, see head-cache.ts)
//     bytes 22-29 generation counter, float64
//     bytes 30-37 next segment sequence number, float64 (an integer)
//     bytes 38-41 open points, uint32
//   head-segments  uuid16 + seq (8 bytes BE) -> one segment: a raw segment or an encoded
//     chunk (their codec and layout: head-segment.ts)
//
// An empty head keeps no record when its sealedEnd is the last point of the series' last
// chunk (2026-11-21): that is every head sealed whole (idle, shutdown), ~68 bytes of leaf
// page per idle series. Its absence says: no open point, no segment, sealedEnd = the last
// chunk's last time (null without chunks), and no cached head is trusted (a cache only
// trusts a record carrying its own generation), so the writer reloads it from storage.
// An empty head whose sealedEnd lies past the last chunk (lifecycle dropped its points,
// swinging-door dropped the last point) keeps its record.
//
// The head = every point of the series' segments, in sequence order, later than sealedEnd.
// Segments are disjoint and ascending in time (the writer appends only after the head's
// last point and rewrites the head as one new segment after any other change); a segment
// may still hold points sealed since, which readers skip by sealedEnd.
import type { PointColumns } from './encoding/chunk-types.js';
import { decodeColumns, floorChunk, headerOf } from './chunk-access.js';
import { INT64_MAX } from './keys.js';
import { decodeSegment } from './head-segment.js';
import { allocColumns, copyValue } from './point-runs.js';
import type { ReadView, SeriesEnv } from './series-env.js';

export const HEAD_RECORD_BYTES = 42;
const LEGACY_PREFIX = 18;

export interface Head {
  sealedEnd: bigint | null;
  lastWriteMs: number;
  cols: PointColumns | null;
}

export interface HeadRecord {
  sealedEnd: bigint | null;
  lastWriteMs: number;
  genWriter: number;
  genCounter: number;
  nextSeq: number;
  openPoints: number;
}

/** One stored segment as the writer tracks it: points still open in it, and its last time. */
export interface SegmentRef {
  seq: number;
  open: number;
  lastTs: bigint;
}

/** A head as loaded by the writer: the points plus where they sit on disk. */
export interface StoredHead extends Head {
  record: HeadRecord;
  segments: SegmentRef[];
  /** Loaded from a version-1 record: the next persist must rewrite it as segments. */
  legacy: boolean;
  /** Bytes of the stored segments (or of the version-1 record). */
  storedBytes: number;
}

export const EMPTY_RECORD: HeadRecord = { sealedEnd: null, lastWriteMs: 0, genWriter: 0, genCounter: 0, nextSeq: 0, openPoints: 0 };

export function segmentKey(series: Buffer, seq: number): Buffer {
  const k = Buffer.allocUnsafe(24);
  series.copy(k, 0);
  k.writeUInt32BE(Math.floor(seq / 4294967296), 16);
  k.writeUInt32BE(seq >>> 0, 20);
  return k;
}

function segmentSeq(key: Buffer): number {
  return key.readUInt32BE(16) * 4294967296 + key.readUInt32BE(20);
}

export function decodeHeadRecord(rec: Buffer): HeadRecord {
  const has = (rec[1] & 1) === 1;
  const sealedEnd = has ? rec.readBigInt64LE(2) : null;
  if (rec[0] !== 2) return { ...EMPTY_RECORD, sealedEnd, lastWriteMs: rec.readDoubleLE(10) };
  return {
    sealedEnd, lastWriteMs: rec.readDoubleLE(10), genWriter: rec.readUInt32LE(18), genCounter: rec.readDoubleLE(22),
    nextSeq: rec.readDoubleLE(30), openPoints: rec.readUInt32LE(38),
  };
}

/** The stored record, null when there is none (a new series, or an empty head: see the top of this file). */
export function readHeadRecord(view: ReadView, series: Buffer): HeadRecord | null {
  const rec = view.env.heads.get(series, { transaction: view.txn });
  return rec === undefined ? null : decodeHeadRecord(rec);
}

/** The last sealed point as the chunks say: the last time of the series' last chunk (null: no chunk). */
export function lastChunkEnd(view: ReadView, series: Buffer): bigint | null {
  const c = floorChunk(view, series, INT64_MAX);
  return c === null ? null : headerOf(series, c.start, c.bytes).lastTs;
}

function hasSegments(env: SeriesEnv, series: Buffer): boolean {
  for (const _ of env.segments.getKeys({ start: segmentKey(series, 0), end: segmentKey(series, 2 ** 53), limit: 1 })) return true;
  return false;
}

/** Whether an empty head's record says nothing the chunks do not (see the top of this file). */
function chunksSayAll(env: SeriesEnv, series: Buffer, r: HeadRecord): boolean {
  return r.openPoints === 0 && lastChunkEnd({ env, txn: undefined }, series) === r.sealedEnd && !hasSegments(env, series);
}

/**
 * Removes the record of a head sealed whole once its last chunk is in the table (inside
 * the write txn): a tail kept back for a pack was not there when the head was persisted.
 */
export function settleHeadRecord(env: SeriesEnv, series: Buffer): void {
  const raw = env.heads.get(series);
  if (raw !== undefined && chunksSayAll(env, series, decodeHeadRecord(raw))) env.heads.removeSync(series);
}

/**
 * Stores the record, or removes it when the head is empty and the chunks alone say the
 * same (see the top of this file). Inside the write txn (reads see its writes).
 */
export function putHeadRecord(env: SeriesEnv, series: Buffer, r: HeadRecord): void {
  if (chunksSayAll(env, series, r)) {
    env.heads.removeSync(series);
    return;
  }
  const b = Buffer.allocUnsafe(HEAD_RECORD_BYTES);
  b[0] = 2;
  b[1] = r.sealedEnd === null ? 0 : 1;
  b.writeBigInt64LE(r.sealedEnd ?? 0n, 2);
  b.writeDoubleLE(r.lastWriteMs, 10);
  b.writeUInt32LE(r.genWriter >>> 0, 18);
  b.writeDoubleLE(r.genCounter, 22);
  b.writeDoubleLE(r.nextSeq, 30);
  b.writeUInt32LE(r.openPoints, 38);
  env.heads.putSync(series, b);
}

export function putSegment(env: SeriesEnv, series: Buffer, seq: number, bytes: Buffer): void {
  env.segments.putSync(segmentKey(series, seq), bytes);
}

export function removeSegment(env: SeriesEnv, series: Buffer, seq: number): void {
  env.segments.removeSync(segmentKey(series, seq));
}

/** The bytes of the series' newest stored segment (the greatest sequence number), null when it has none. */
export function newestSegment(view: ReadView, series: Buffer): Buffer | null {
  for (const { value } of view.env.segments.getRange({ start: segmentKey(series, 2 ** 53), end: segmentKey(series, 0), inclusiveEnd: true, reverse: true, limit: 1, transaction: view.txn })) return value;
  return null;
}

/** Deletes every stored segment of the series (inside the write txn). */
export function removeAllSegments(env: SeriesEnv, series: Buffer): void {
  const keys = [...env.segments.getKeys({ start: segmentKey(series, 0), end: segmentKey(series, 2 ** 53) })];
  for (const k of keys) env.segments.removeSync(k);
}

/** Points of `c` later than `after` (null: all) appended to `out`, rebased on out.tsBase. */
function appendOpen(c: PointColumns, after: bigint | null, out: PointColumns): void {
  let i0 = 0;
  if (after !== null) {
    const d = after - c.tsBase;
    if (d >= 0n) { const x = Number(d); while (i0 < c.count && c.tsOffset[i0] <= x) i0++; }
  }
  if (i0 === c.count) return;
  if (out.count + c.count - i0 > out.tsOffset.length) throw new Error('BUG: a head holds more open points than its record says');
  if (out.count === 0) out.tsBase = c.tsBase + BigInt(c.tsOffset[i0]);
  // exact: both bases lie inside one head, which spans less than 2^50 ns
  const shift = Number(c.tsBase - out.tsBase);
  for (let i = i0, j = out.count; i < c.count; i++, j++) {
    out.tsOffset[j] = c.tsOffset[i] + shift;
    copyValue(c, i, out, j);
    out.quality[j] = c.quality[i];
  }
  out.count += c.count - i0;
}

/** The head with where it is stored (the writer's view); cols null when the head is empty. */
export function loadStoredHead(view: ReadView, series: Buffer): StoredHead {
  const raw = view.env.heads.get(series, { transaction: view.txn });
  if (raw === undefined) {
    const sealedEnd = lastChunkEnd(view, series);
    return { sealedEnd, lastWriteMs: 0, cols: null, record: { ...EMPTY_RECORD, sealedEnd }, segments: [], legacy: false, storedBytes: 0 };
  }
  return storedHeadOf(view, series, raw);
}

/** A head from its stored record `raw` (see loadStoredHead). */
function storedHeadOf(view: ReadView, series: Buffer, raw: Buffer): StoredHead {
  const record = decodeHeadRecord(raw);
  if (raw[0] !== 2) {
    const cols = raw.length > LEGACY_PREFIX ? decodeColumns(series, null, raw.subarray(LEGACY_PREFIX)) : null;
    record.openPoints = cols?.count ?? 0;
    return { sealedEnd: record.sealedEnd, lastWriteMs: record.lastWriteMs, cols, record, segments: [], legacy: true, storedBytes: raw.length };
  }
  const segments: SegmentRef[] = [];
  if (record.openPoints === 0) return { sealedEnd: record.sealedEnd, lastWriteMs: record.lastWriteMs, cols: null, record, segments, legacy: false, storedBytes: 0 };
  let out: PointColumns | null = null, storedBytes = 0;
  for (const { key, value } of view.env.segments.getRange({ start: segmentKey(series, 0), end: segmentKey(series, 2 ** 53), transaction: view.txn })) {
    const c = decodeSegment(series, value);
    if (out === null) out = allocColumns(c.type, record.openPoints);
    const before = out.count;
    appendOpen(c, record.sealedEnd, out);
    storedBytes += value.length;
    segments.push({ seq: segmentSeq(key), open: out.count - before, lastTs: c.tsBase + BigInt(c.tsOffset[c.count - 1]) });
  }
  if (out === null || out.count !== record.openPoints) throw new Error(`BUG: head of ${series.toString('hex')} has ${out?.count ?? 0} open points, its record says ${record.openPoints}`);
  return { sealedEnd: record.sealedEnd, lastWriteMs: record.lastWriteMs, cols: out, record, segments, legacy: false, storedBytes };
}

/**
 * Empties a head outside the writer's cache (lifecycle enforcement), inside the write txn.
 * Generation 0 matches no cached head, so the writer reloads it.
 */
export function clearHeadInTxn(view: ReadView, series: Buffer, sealedEnd: bigint | null, lastWriteMs: number): void {
  const prev = readHeadRecord(view, series);
  removeAllSegments(view.env, series);
  putHeadRecord(view.env, series, { ...EMPTY_RECORD, sealedEnd, lastWriteMs, nextSeq: prev?.nextSeq ?? 0 });
}

/**
 * The open head's points alone (null: none), for a reader that needs no sealed end (raw
 * pages, render). A series without a stored record has no open points, and this skips what
 * loadStoredHead then does to find its sealed end: a reverse seek to the last chunk and a
 * parse of its header, a sixth of the columnar page writer's time on a whole-series read (profiled).
 */
export function readOpenColumns(view: ReadView, series: Buffer): PointColumns | null {
  const raw = view.env.heads.get(series, { transaction: view.txn });
  return raw === undefined ? null : storedHeadOf(view, series, raw).cols;
}

/** The head as readers need it (raw, snapshot, render, rollup repair): same snapshot as the chunks. */
export function readHead(view: ReadView, series: Buffer): Head {
  const h = loadStoredHead(view, series);
  return { sealedEnd: h.sealedEnd, lastWriteMs: h.lastWriteMs, cols: h.cols };
}
