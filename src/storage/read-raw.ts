// Read algorithms over one ReadView (a snapshot): raw points, the audit of superseded
// values, the latest point, the chunk listing, the finalised watermark and gaps. Pure
// functions: worker tasks call them with their own read transaction.
import { ServiceError, invalid } from '../errors.js';
import { allChunks, chunksCovering, decodeColumns, floorChunk, headerOf, lastPointOfChunk } from './chunk-access.js';
import { auditKey, INT64_MAX, INT64_MIN, readTime, seriesKey } from './keys.js';
import { decodeHeadRecord, loadStoredHead, newestSegment, readOpenColumns } from './head-record.js';
import { lastPointOfSegment } from './head-segment.js';
import { allocTimed, copyValue, timeAt, valueAt, type PointValue, type TimedPoints } from './point-runs.js';
import { lowerBoundCols, scanRange } from './range-scan.js';
import { readMeta, recordPackr, type DeclaredGap, type SeriesMeta, type TimeRangeNs } from './series-meta.js';
import type { ReadView } from './series-env.js';

export const MAX_RAW_LIMIT = 10_000_000;

export function requireMeta(view: ReadView, id: string): SeriesMeta {
  const meta = readMeta(view, id);
  if (!meta) throw new ServiceError('not-found', `series ${id} not found`, { series: id });
  return meta;
}

export function checkRange(startNs: bigint, endNs: bigint): void {
  if (typeof startNs !== 'bigint' || startNs < INT64_MIN || startNs > INT64_MAX) throw invalid('start_ns', 'must be an int64');
  if (typeof endNs !== 'bigint' || endNs < INT64_MIN || endNs > INT64_MAX) throw invalid('end_ns', 'must be an int64');
  if (endNs <= startNs) throw invalid('end_ns', 'must be greater than start_ns');
}

function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RAW_LIMIT) throw invalid('limit', `must be an integer 1..${MAX_RAW_LIMIT}`);
}

export interface RawQuery {
  startNs: bigint;
  /** Exclusive. */
  endNs: bigint;
  limit: number;
  /** Cursor: the last time a previous page returned; this page starts after it. */
  afterNs?: bigint;
}

/** Points in exact types (see TimedPoints), and the cursor for the next page (null when done). */
export interface RawPage extends TimedPoints {
  nextCursor: bigint | null;
}

export function readRaw(view: ReadView, id: string, q: RawQuery): RawPage {
  checkRange(q.startNs, q.endNs);
  checkLimit(q.limit);
  const meta = requireMeta(view, id);
  const series = seriesKey(id);
  const from = q.afterNs !== undefined && q.afterNs >= q.startNs ? q.afterNs + 1n : q.startNs;
  const out = allocTimed(meta.type, Math.min(q.limit, 65_536)) as RawPage;
  let page: TimedPoints = out, n = 0, more = false;
  scanRange(view, series, from, q.endNs, (cols, i0, i1) => {
    for (let i = i0; i < i1; i++) {
      if (n === q.limit) { more = true; return false; }
      if (n === page.ts.length) page = grow(page, Math.min(q.limit, page.ts.length * 2));
      page.ts[n] = timeAt(cols, i);
      copyValue(cols, i, page, n);
      page.quality[n] = cols.quality[i];
      n++;
    }
    return true;
  });
  return { ...trimTimed(page, n), nextCursor: more ? page.ts[n - 1] : null };
}

/** Views of exactly n points (the arrays a caller hands on are exactly as long as count). */
function trimTimed(t: TimedPoints, n: number): TimedPoints {
  return {
    type: t.type, count: n, ts: t.ts.subarray(0, n), quality: t.quality.subarray(0, n),
    f64: t.f64 && t.f64.subarray(0, n), i64: t.i64 && t.i64.subarray(0, n), u8: t.u8 && t.u8.subarray(0, n),
    ord: t.ord && t.ord.subarray(0, n), str: t.str && t.str.slice(0, n),
  };
}

function grow(t: TimedPoints, capacity: number): TimedPoints {
  const g = allocTimed(t.type, capacity);
  g.ts.set(t.ts); g.quality.set(t.quality);
  for (let i = 0; i < t.ts.length; i++) copyValue(t, i, g, i);
  return g;
}

export interface AuditEntry {
  ts: bigint;
  supersededAtNs: bigint;
  value: PointValue;
  quality: number;
  principal: string;
}

/** Superseded values with time in [start, end), oldest time first, at most `limit`. */
export function readRawAudit(view: ReadView, id: string, q: { startNs: bigint; endNs: bigint; limit: number }): AuditEntry[] {
  checkRange(q.startNs, q.endNs);
  checkLimit(q.limit);
  requireMeta(view, id);
  const series = seriesKey(id);
  const out: AuditEntry[] = [];
  for (const { key, value } of view.env.audit.getRange({ start: auditKey(series, q.startNs, INT64_MIN), end: auditKey(series, q.endNs, INT64_MIN), limit: q.limit, transaction: view.txn })) {
    const rec = recordPackr.unpack(value) as { v: PointValue; q: number; who: string };
    out.push({ ts: readTime(key, 16), supersededAtNs: readTime(key, 24), value: rec.v, quality: rec.q, principal: rec.who });
  }
  return out;
}

export interface SnapshotPoint {
  ts: bigint;
  value: PointValue;
  quality: number;
}

/**
 * The latest point of the series, null when it has none. O(1) in the head: an open head's
 * newest point is the last point of its newest segment (segments are disjoint, ascending
 * and later than sealedEnd once the record counts open points; head-record.ts), so only
 * that segment is read (a raw one in place). An empty head: the last point of the last chunk.
 * `known`: the caller has checked that the series exists (its meta read).
 */
/**
 * The last points of head segments and last chunks this thread read, by series, with a
 * copy of the bytes they came from. A segment that is not a raw one is decoded whole to
 * find its last point (~100 µs for a 500-point segment on the loaded 2-core box, where
 * everything else a snapshot does costs ~25 µs), and a chunk's last point costs a header
 * parse and a CRC of the whole chunk; the newest segment or chunk is read by every
 * snapshot until the next write to that series, so the point is kept. It is used only when
 * the bytes read now are byte for byte the kept ones (a memcmp), so it can never be stale
 * whatever rewrote them (a late point, an edit, a seal). Bounded in bytes, oldest first.
 */
const keptLast = new Map<string, { bytes: Buffer; point: SnapshotPoint }>();
let keptBytes = 0;
const KEPT_BYTES = 32 * 1024 * 1024;
/** Larger segments are decoded each time (their copy would crowd out the others). */
const KEPT_SEGMENT_BYTES = 256 * 1024;

function lastPointOfSegmentKept(id: string, series: Buffer, seg: Buffer): SnapshotPoint {
  return keptPoint(`s${id}`, seg, () => lastPointOfSegment(series, seg));
}

function lastPointOfChunkKept(id: string, series: Buffer, start: bigint | null, bytes: Uint8Array): SnapshotPoint {
  return keptPoint(`c${id}:${start}`, bytes, () => lastPointOfChunk(series, start, bytes));
}

function keptPoint(id: string, seg: Uint8Array, read: () => SnapshotPoint): SnapshotPoint {
  const hit = keptLast.get(id);
  if (hit !== undefined && hit.bytes.length === seg.length && hit.bytes.equals(seg)) return hit.point;
  const point = read();
  if (seg.length > KEPT_SEGMENT_BYTES) return point;
  if (hit !== undefined) { keptBytes -= hit.bytes.length; keptLast.delete(id); }
  while (keptBytes + seg.length > KEPT_BYTES && keptLast.size > 0) {
    const [oldest, v] = keptLast.entries().next().value as [string, { bytes: Buffer }];
    keptBytes -= v.bytes.length;
    keptLast.delete(oldest);
  }
  keptLast.set(id, { bytes: Buffer.from(seg.buffer.slice(seg.byteOffset, seg.byteOffset + seg.byteLength)), point });
  keptBytes += seg.length;
  return point;
}

export function readSnapshot(view: ReadView, id: string, known = false): SnapshotPoint | null {
  if (!known) requireMeta(view, id);
  const series = seriesKey(id);
  const raw = view.env.heads.get(series, { transaction: view.txn });
  if (raw !== undefined && raw[0] !== 2) {
    // a version-1 record holds its head whole
    const cols = readOpenColumns(view, series);
    if (cols && cols.count > 0) return { ts: timeAt(cols, cols.count - 1), value: valueAt(cols, cols.count - 1), quality: cols.quality[cols.count - 1] };
  } else if (raw !== undefined) {
    const rec = decodeHeadRecord(raw);
    if (rec.openPoints > 0) {
      const seg = newestSegment(view, series);
      const p = seg === null ? null : lastPointOfSegmentKept(id, series, seg);
      if (p !== null && (rec.sealedEnd === null || p.ts > rec.sealedEnd)) return p;
      // never seen: the whole head decides (it refuses a head its record disagrees with)
      const cols = readOpenColumns(view, series);
      if (cols && cols.count > 0) return { ts: timeAt(cols, cols.count - 1), value: valueAt(cols, cols.count - 1), quality: cols.quality[cols.count - 1] };
    }
  }
  const last = allChunks(view, series, true, 1).next();
  if (last.done) return null;
  return lastPointOfChunkKept(id, series, last.value.start, last.value.bytes);
}

/**
 * The value as of an instant: the latest point with time <= asOfNs, or null when the
 * series has none by then. The open head holds the newest times (late points merge into
 * the chunks they fall in), so when its first point is at or before asOfNs the answer is
 * in the head; otherwise it is the last point at or before asOfNs of the chunk that
 * starts at or before it (a chunk's points all precede the next chunk's start).
 */
export function readSnapshotAt(view: ReadView, id: string, asOfNs: bigint): SnapshotPoint | null {
  requireMeta(view, id);
  const series = seriesKey(id);
  const head = readOpenColumns(view, series);
  if (head && head.count > 0 && timeAt(head, 0) <= asOfNs) {
    const i = lowerBoundCols(head, asOfNs + 1n) - 1;
    return { ts: timeAt(head, i), value: valueAt(head, i), quality: head.quality[i] };
  }
  const c = floorChunk(view, series, asOfNs);
  if (!c) return null;
  const cols = decodeColumns(series, c.start, c.bytes);
  const i = lowerBoundCols(cols, asOfNs + 1n) - 1;
  if (i < 0) return null;
  return { ts: timeAt(cols, i), value: valueAt(cols, i), quality: cols.quality[i] };
}

export interface ChunkInfo {
  startNs: bigint;
  endNs: bigint;
  count: number;
  bytes: number;
  /** false for the head (open points not yet sealed). */
  sealed: boolean;
}

/** Chunks (and the head) holding points in [start, end), in time order. */
export function listChunks(view: ReadView, id: string, q: { startNs: bigint; endNs: bigint; limit?: number }): ChunkInfo[] {
  checkRange(q.startNs, q.endNs);
  requireMeta(view, id);
  const series = seriesKey(id);
  const limit = q.limit ?? 100_000;
  const out: ChunkInfo[] = [];
  for (const c of chunksCovering(view, series, q.startNs, q.endNs - 1n)) {
    if (out.length >= limit) return out;
    const h = headerOf(series, c.start, c.bytes);
    if (h.lastTs < q.startNs) continue;
    out.push({ startNs: h.firstTs, endNs: h.lastTs, count: h.count, bytes: c.bytes.byteLength, sealed: true });
  }
  const stored = loadStoredHead(view, series);
  const head = stored.cols;
  if (head && head.count > 0 && out.length < limit) {
    const first = timeAt(head, 0), last = timeAt(head, head.count - 1);
    if (last >= q.startNs && first < q.endNs) out.push({ startNs: first, endNs: last, count: head.count, bytes: stored.storedBytes, sealed: false });
  }
  return out;
}

export function readFinalised(view: ReadView, id: string): bigint | null {
  return requireMeta(view, id).finalisedNs;
}

export interface GapReport {
  /** Gaps the collector declared, overlapping the range. */
  declared: DeclaredGap[];
  /** Intervals between consecutive points longer than 3x the median interval in the range. */
  detected: TimeRangeNs[];
  /** The median interval between points in the range (ns), null with fewer than 3 points. */
  cadenceNs: number | null;
}

/** Median sample size: beyond it, evenly spaced intervals stand for all (exact enough for a 3x threshold). */
const MEDIAN_SAMPLE = 100_001;

export function readGaps(view: ReadView, id: string, q: { startNs: bigint; endNs: bigint; limit?: number }): GapReport {
  checkRange(q.startNs, q.endNs);
  const meta = requireMeta(view, id);
  const series = seriesKey(id);
  const limit = q.limit ?? 10_000;
  const declared = meta.declaredGaps.filter((g) => g.endNs > q.startNs && g.startNs < q.endNs);
  // gather times as ns offsets from the range start; exact within 2^53 ns (104 days)
  let times = new Float64Array(4096), n = 0;
  scanRange(view, series, q.startNs, q.endNs, (cols, i0, i1) => {
    const shift = Number(cols.tsBase - q.startNs);
    if (n + (i1 - i0) > times.length) { const g = new Float64Array(Math.max(times.length * 2, n + i1 - i0)); g.set(times.subarray(0, n)); times = g; }
    for (let i = i0; i < i1; i++) times[n++] = shift + cols.tsOffset[i];
    return true;
  });
  if (n < 3) return { declared, detected: [], cadenceNs: null };
  const step = Math.max(1, Math.floor((n - 1) / MEDIAN_SAMPLE));
  const sample = new Float64Array(Math.ceil((n - 1) / step));
  for (let i = 1, k = 0; i < n && k < sample.length; i += step, k++) sample[k] = times[i] - times[i - 1];
  sample.sort();
  const cadence = sample[sample.length >>> 1];
  const threshold = 3 * cadence;
  const detected: TimeRangeNs[] = [];
  for (let i = 1; i < n && detected.length < limit; i++) {
    if (times[i] - times[i - 1] > threshold) detected.push({ startNs: q.startNs + BigInt(times[i - 1]), endNs: q.startNs + BigInt(times[i]) });
  }
  return { declared, detected, cadenceNs: cadence };
}
