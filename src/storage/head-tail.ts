// The newest points of a series' open head, without decoding the rest of it. A live
// calculation window needs the points since its last evaluation and the one or few in force
// before them, but a head at 1 point a second holds one segment per commit until it is
// sealed (hundreds or thousands of them), and readOpenColumns decodes every one: at 10,000
// inputs a second that was most of the read workers' time (profile, 2026-11-28).
//
// Segments are disjoint and ascending in time (head-record.ts), so the head's last points
// are in its newest segments: they are read in reverse sequence order and decoded until the
// points before `from` number `pointsBefore`, or the head is exhausted. A segment may still
// hold points sealed since; they are skipped by sealedEnd as every reader does, and a
// segment holding one ends the walk (every older segment is sealed through).
//
// The series' record comes with it when asked (`record`), read with the caller's key: a live
// window read it through readMeta, which parses the id's text into a key again (a regular
// expression and a hex decode) and copies the stored bytes, for a record that is almost always
// the one it read a second earlier (profile, 2026-11-28).
//
// Every get here is lmdb-js's getBinaryFast (a view of its reused buffer, valid until the next
// get): each value is decoded into fresh columns or numbers before the next get.
import type { PointColumns } from './encoding/chunk-types.js';
import { decodeHeadRecord, readOpenColumns, segmentKey } from './head-record.js';
import { decodeSegment } from './head-segment.js';
import { fastGet, fastView, sameBytes } from './fast-get.js';
import { allocColumns, copyValue } from './point-runs.js';
import type { ReadView } from './series-env.js';
import { decodeMeta, type SeriesMeta } from './series-meta.js';

export interface OpenTail {
  /** The newest open points of the head, ascending (null when the head holds none). */
  cols: PointColumns | null;
  /** Whether `cols` is the whole open head (the walk reached its start, or the head was decoded whole). */
  whole: boolean;
}

/** Receives the series' stored record (undefined: no such series). */
export interface RecordSlot { meta: SeriesMeta | undefined }

const NONE: OpenTail = { cols: null, whole: true };

/** Older segments read by sequence number before a cursor takes over (readOpenTail). */
const CHAINED_GETS = 4;

/**
 * Records decoded per thread, by key object (a caller that keeps one key per series, as the
 * calculation workers do, hits): an entry is used only while the stored bytes equal its copy,
 * so a changed record (a new finalised watermark, a lifecycle policy) is decoded again, and a
 * caller with a fresh key each time only misses. Weak: the entries go with the caller's keys.
 */
const records = new WeakMap<Buffer, { bytes: Buffer; meta: SeriesMeta }>();

/** The series' record, decoded (shared: callers must not change it), read with its key. */
function recordOf(view: ReadView, series: Buffer): SeriesMeta | undefined {
  const bytes = fastGet(view.env.meta, series, view.txn);
  if (bytes === undefined) return undefined;
  const known = records.get(series);
  if (known !== undefined && sameBytes(bytes, known.bytes)) return known.meta;
  const copy = Buffer.from(bytes.subarray(0, bytes.length));
  const meta = decodeMeta(copy);
  records.set(series, { bytes: copy, meta });
  return meta;
}

/** How many points of `c` lie at or before `t` (0 when none), by binary search on offsets. */
function countThrough(c: PointColumns, t: bigint): number {
  const d = t - c.tsBase;
  if (d < 0n) return 0;
  const x = Number(d);
  let lo = 0, hi = c.count;
  while (lo < hi) { const mid = (lo + hi) >>> 1; if (c.tsOffset[mid] <= x) lo = mid + 1; else hi = mid; }
  return lo;
}

/** How many points of `c` lie before `t`. */
function countBefore(c: PointColumns, t: bigint): number {
  return countThrough(c, t - 1n);
}

/**
 * The open head's newest points: at least `pointsBefore` of them before `from` (>= 1) and all
 * after, or the whole open head when it has fewer. Same snapshot as the view's other reads.
 * With `slot`, the series' record too (no record: no series, and no points).
 */
export function readOpenTail(view: ReadView, series: Buffer, from: bigint, pointsBefore: number, slot?: RecordSlot): OpenTail {
  if (slot !== undefined) {
    slot.meta = recordOf(view, series);
    if (slot.meta === undefined) return NONE;
  }
  const raw = fastView(view.env.heads, series, view.txn);
  if (raw === undefined) return NONE;
  // A version-1 record is the whole head in one value: decoded as it always was.
  if (raw[0] !== 2) { const cols = readOpenColumns(view, series); return { cols, whole: true }; }
  const record = decodeHeadRecord(raw);
  if (record.openPoints === 0) return NONE;
  const need = Math.max(1, pointsBefore);
  const parts: Array<{ cols: PointColumns; i0: number }> = [];
  let n = 0, before = 0, whole = true, sealedReached = false;
  /** Takes one segment's open points (segments come newest first). */
  const take = (value: Buffer): void => {
    const c = decodeSegment(series, value);
    const i0 = record.sealedEnd === null ? 0 : countThrough(c, record.sealedEnd);
    if (i0 < c.count) {
      parts.push({ cols: c, i0 });
      n += c.count - i0;
      before += Math.max(0, countBefore(c, from) - i0);
    }
    if (i0 > 0) sealedReached = true; // this segment reaches into the sealed points: every older one is sealed through
  };
  // The newest segment is the last sequence number given (the record's next one less one):
  // a get, where a reverse cursor cost ~3 times as much (profile, 2026-11-28); with commits
  // of a point or two it usually holds the window and the point before it (the writer's
  // segments merge like a binary counter, open-head.ts).
  //
  // Each persist takes the next sequence number, so the segment below one read is often the
  // sequence number below it (a newest segment of one commit merged nothing): a few gets walk
  // down while they find one, and the cursor starts only past a gap (a live window whose newest
  // segment held no point before it opened a cursor about every other second, profile 2026-11-28).
  let upper = 2 ** 53;
  const newest = record.nextSeq - 1;
  if (newest >= 0) {
    const value = fastView(view.env.segments, segmentKey(series, newest), view.txn);
    if (value !== undefined) {
      take(value);
      upper = newest - 1;
      for (let k = 0; k < CHAINED_GETS && !sealedReached && upper >= 0 && before < need; k++) {
        const older = fastView(view.env.segments, segmentKey(series, upper), view.txn);
        if (older === undefined) break;
        take(older);
        upper--;
      }
    }
  }
  if (!sealedReached && upper >= 0 && before >= need) whole = false;
  else if (!sealedReached && upper >= 0) {
    for (const { value } of view.env.segments.getRange({ start: segmentKey(series, upper), end: segmentKey(series, 0), inclusiveEnd: true, reverse: true, transaction: view.txn })) {
      if (before >= need) { whole = false; break; }
      take(value);
      if (sealedReached) break;
    }
  }
  if (n === 0) return NONE;
  if (whole && n !== record.openPoints) throw new Error(`BUG: head of ${series.toString('hex')} has ${n} open points, its record says ${record.openPoints}`);
  return { cols: joined(parts, n), whole };
}

/** The parts (newest first) as one column set, ascending; a single part whole is returned as is. */
function joined(parts: Array<{ cols: PointColumns; i0: number }>, n: number): PointColumns {
  if (parts.length === 1 && parts[0].i0 === 0) return parts[0].cols;
  const first = parts[parts.length - 1];
  const out = allocColumns(first.cols.type, n, first.cols.tsBase + BigInt(first.cols.tsOffset[first.i0]));
  let j = 0;
  for (let p = parts.length - 1; p >= 0; p--) {
    const { cols: c, i0 } = parts[p];
    // exact: both bases lie inside one head, which spans less than 2^50 ns
    const shift = Number(c.tsBase - out.tsBase);
    for (let i = i0; i < c.count; i++, j++) {
      out.tsOffset[j] = c.tsOffset[i] + shift;
      copyValue(c, i, out, j);
      out.quality[j] = c.quality[i];
    }
  }
  out.count = n;
  return out;
}
