// Walking the points of one series over a time range, chunk by chunk then the head,
// inside a ReadView. The building block of raw reads, rollup repair, gaps and render.
import type { ChunkHeader, PointColumns } from './encoding/chunk-types.js';
import { chunksCovering, chunksCoveringNewestFirst, decodeColumns, floorChunk, headerOf, nextChunk, throwCorrupt } from './chunk-access.js';
import { ChunkCorruptError } from './encoding/chunk-types.js';
import type { ChunkWindow } from './encoding/chunk-window.js';
import { readOpenColumns } from './head-record.js';
import { allocTimed, copyValue, numericAt, timeAt, type TimedPoints } from './point-runs.js';
import type { ReadView } from './series-env.js';

const SAFE = 2 ** 53;

/** First index whose time is >= t. */
export function lowerBoundCols(c: PointColumns, t: bigint): number {
  const d = t - c.tsBase;
  if (d <= 0n) return 0;
  if (d >= BigInt(SAFE)) return c.count;
  const x = Number(d);
  let lo = 0, hi = c.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (c.tsOffset[mid] < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/**
 * Calls visit(cols, i0, i1) for each run holding points in [from, to), in time order;
 * points i0..i1-1 of cols are inside. visit returns false to stop early. With `scratch`,
 * sealed chunks decode into it (no allocation per chunk): cols is then only valid during
 * the visit, so a visitor that keeps runs must not pass one. `head`: the open head's
 * columns when the caller holds them (the writer's in-memory head; null: no head), so
 * they are not reloaded and decoded from LMDB; undefined reads the stored head.
 */
export function scanRange(view: ReadView, series: Buffer, from: bigint, to: bigint, visit: RunVisitor, scratch?: PointColumns, head?: HeadColumns, memo?: DecodedChunks): void {
  if (to <= from) return;
  const edge: RangeEdge = { passed: false };
  // a chunk starting at or past `to` means the head, after every chunk, is past it too: not read
  if (scanChunks(series, chunksIn(view, series, from, to, edge), from, to, visit, scratch, memo) && !edge.passed) visitHead(headOf(view, series, head), from, to, visit);
}

/** Set by chunksIn when it met a chunk starting at or after the range's end. */
export interface RangeEdge { passed: boolean }

export type RunVisitor = (cols: PointColumns, i0: number, i1: number) => boolean;

/** A stored chunk with its (checked) header. */
export interface HeadedChunk {
  start: bigint;
  bytes: Buffer;
  header: ChunkHeader;
}

/** The chunks holding points in [from, to), in time order, read lazily. Their bytes are copies (lmdb-js copies binary values), so they may be kept. */
export function* chunksIn(view: ReadView, series: Buffer, from: bigint, to: bigint, edge?: RangeEdge): Generator<HeadedChunk> {
  for (const c of chunksCovering(view, series, from, to - 1n)) {
    const header = headerOf(series, c.start, c.bytes);
    if (header.lastTs < from) continue;
    if (header.firstTs >= to) { if (edge) edge.passed = true; return; }
    yield { start: c.start, bytes: c.bytes, header };
  }
}

/**
 * Visits the runs of `chunks` inside [from, to) (see scanRange); false when the visitor
 * stopped. With `window` (and `scratch`), a chunk the range cuts decodes only its points in
 * the range when its layout allows (ChunkWindow): the run then starts at index 0.
 */
export function scanChunks(series: Buffer, chunks: Iterable<HeadedChunk>, from: bigint, to: bigint, visit: RunVisitor, scratch?: PointColumns, memo?: DecodedChunks, window?: ChunkWindow): boolean {
  for (const c of chunks) {
    if (window !== undefined && scratch !== undefined && memo === undefined && cutsChunk(c.header, from, to)) {
      const m = windowOf(window, series, c, from, to, scratch);
      if (m >= 0) {
        if (m > 0 && !visit(scratch, 0, m)) return false;
        continue;
      }
    }
    const cols = memo?.get(c.start) ?? decodeColumns(series, c.start, c.bytes, scratch, c.header);
    const i0 = lowerBoundCols(cols, from), i1 = lowerBoundCols(cols, to);
    if (i1 > i0 && !visit(cols, i0, i1)) return false;
  }
  return true;
}

/**
 * Whether [from, to) leaves out enough of the chunk's time span for a window decode to pay:
 * random access costs about twice the whole decoder per point (it reads block by block,
 * the whole decoder streams), so the window must hold less than ~70% of the span.
 */
function cutsChunk(h: ChunkHeader, from: bigint, to: bigint): boolean {
  if (h.firstTs >= from && h.lastTs < to) return false;
  const span = Number(h.lastTs - h.firstTs);
  const lo = from > h.firstTs ? from : h.firstTs, hi = to <= h.lastTs ? to : h.lastTs;
  return Number(hi - lo) < 0.7 * span;
}

function windowOf(window: ChunkWindow, series: Buffer, c: HeadedChunk, from: bigint, to: bigint, into: PointColumns): number {
  if (into.tsOffset.length < c.header.count || into.quality.length < c.header.count || into.type !== c.header.type) return -1;
  try {
    return window.decode(c.bytes, c.header, from, to, into);
  } catch (e) {
    if (e instanceof ChunkCorruptError) throwCorrupt(series, c.start, e);
    throw e;
  }
}

/** Visits the head's run inside [from, to), if any. */
export function visitHead(head: PointColumns | null, from: bigint, to: bigint, visit: RunVisitor): void {
  if (!head || head.count === 0) return;
  const i0 = lowerBoundCols(head, from), i1 = lowerBoundCols(head, to);
  if (i1 > i0) visit(head, i0, i1);
}

/** The chunks of a range listed ahead of its scan, with a bound on the points they and the head hold there. */
export interface RangeListing {
  chunks: HeadedChunk[];
  /** At most this many points in the range: whole chunk counts (exact when the range covers them whole) plus the head's points in it. */
  bound: number;
  /** Every chunk of the range is listed, so the head's points follow them; false: listing stopped past `enough` points. */
  whole: boolean;
}

/**
 * Lists the chunks of [from, to) from their headers, without decoding, for a writer that
 * must size its output before the scan (the columnar raw layout); stops once the chunks
 * wholly inside the range hold more than `enough` points, so a scan of the listing that
 * takes `enough` still meets a point beyond them (and knows more remain).
 */
export function listRange(view: ReadView, series: Buffer, from: bigint, to: bigint, head: PointColumns | null, enough: number): RangeListing {
  const chunks: HeadedChunk[] = [];
  let bound = 0;
  if (to > from) {
    const edge: RangeEdge = { passed: false };
    let inside = 0; // points of chunks wholly inside the range: the edge chunks' counts over-count it
    for (const c of chunksIn(view, series, from, to, edge)) {
      chunks.push(c);
      bound += c.header.count;
      if (c.header.firstTs >= from && c.header.lastTs < to) inside += c.header.count;
      if (inside > enough) return { chunks, bound, whole: false };
    }
    if (!edge.passed && head && head.count > 0) bound += lowerBoundCols(head, to) - lowerBoundCols(head, from);
  }
  return { chunks, bound, whole: true };
}

/** A whole range's listing, with the open head's columns when the range reaches the head (else null: not read). */
export interface WholeRangeListing extends RangeListing {
  head: PointColumns | null;
}

/**
 * listRange for a reader that only needs to know whether the range holds more than
 * `enough` points (it refuses the read then): the chunks are listed through one reverse
 * cursor (chunksCoveringNewestFirst). With whole false the listing is not a prefix of the
 * range (it holds its newest chunks) and must not be scanned. The open head is read (`head`
 * as in scanRange) only when no chunk lies past the range: a live series' head decodes its
 * segments, for nothing when the range ends before it.
 */
export function listWholeRange(view: ReadView, series: Buffer, from: bigint, to: bigint, head: HeadColumns, enough: number): WholeRangeListing {
  const chunks: HeadedChunk[] = [];
  let bound = 0;
  if (to <= from) return { chunks, bound, whole: true, head: null };
  let passed = false;
  let inside = 0;
  for (const c of chunksCoveringNewestFirst(view, series, from, to - 1n)) {
    const header = headerOf(series, c.start, c.bytes);
    if (header.lastTs < from) continue;
    // as chunksIn: a chunk whose first point is at or past `to` means the head is past it too
    if (header.firstTs >= to) { passed = true; continue; }
    chunks.push({ start: c.start, bytes: c.bytes, header });
    bound += header.count;
    if (header.firstTs >= from && header.lastTs < to) inside += header.count;
    if (inside > enough) return { chunks, bound, whole: false, head: null };
  }
  chunks.reverse();
  const open = passed ? null : headOf(view, series, head);
  if (open && open.count > 0) bound += lowerBoundCols(open, to) - lowerBoundCols(open, from);
  return { chunks, bound, whole: true, head: open };
}

/**
 * Chunks decoded by one operation's edge lookups (pointBefore, pointAtOrAfter), by chunk
 * start, reused by its later lookups and scans: a rollup repair's edges and its scan hit the
 * same chunks. Only edge lookups add to it, so it holds a few chunks, not a scanned range.
 */
export type DecodedChunks = Map<bigint, PointColumns>;

function decodeKept(series: Buffer, start: bigint, bytes: Buffer, memo: DecodedChunks | undefined): PointColumns {
  let cols = memo?.get(start);
  if (!cols) {
    cols = decodeColumns(series, start, bytes);
    memo?.set(start, cols);
  }
  return cols;
}

/** The open head's columns as a caller passes them (null: none), undefined: not known to the caller. */
export type HeadColumns = PointColumns | null | undefined;

export function headOf(view: ReadView, series: Buffer, head: HeadColumns): PointColumns | null {
  return head !== undefined ? head : readOpenColumns(view, series);
}

/** Every point in [from, to) with absolute times. */
export function collectTimed(view: ReadView, series: Buffer, type: TimedPoints['type'], from: bigint, to: bigint): TimedPoints {
  const runs: { cols: PointColumns; i0: number; i1: number }[] = [];
  let n = 0;
  scanRange(view, series, from, to, (cols, i0, i1) => { runs.push({ cols, i0, i1 }); n += i1 - i0; return true; });
  const out = allocTimed(type, n);
  let k = 0;
  for (const { cols, i0, i1 } of runs) {
    for (let i = i0; i < i1; i++, k++) {
      out.ts[k] = cols.tsBase + BigInt(cols.tsOffset[i]);
      copyValue(cols, i, out, k);
      out.quality[k] = cols.quality[i];
    }
  }
  out.count = n;
  return out;
}

/** One point in numeric view, for segment edges. */
export interface EdgePoint {
  ts: bigint;
  v: number;
  quality: number;
}

function edge(cols: PointColumns, i: number): EdgePoint {
  return { ts: timeAt(cols, i), v: numericAt(cols, i), quality: cols.quality[i] };
}

/** The latest point with time < t (`head` as in scanRange). */
export function pointBefore(view: ReadView, series: Buffer, t: bigint, headCols?: HeadColumns, memo?: DecodedChunks): EdgePoint | null {
  const head = headOf(view, series, headCols);
  if (head && head.count > 0 && head.tsBase < t) return edge(head, lowerBoundCols(head, t) - 1);
  const c = floorChunk(view, series, t - 1n);
  if (!c) return null;
  const cols = decodeKept(series, c.start, c.bytes, memo);
  return edge(cols, lowerBoundCols(cols, t) - 1);
}

/** The earliest point with time >= t (`head` as in scanRange). */
export function pointAtOrAfter(view: ReadView, series: Buffer, t: bigint, headCols?: HeadColumns, memo?: DecodedChunks): EdgePoint | null {
  const f = floorChunk(view, series, t);
  if (f && headerOf(series, f.start, f.bytes).lastTs >= t) {
    const cols = decodeKept(series, f.start, f.bytes, memo);
    return edge(cols, lowerBoundCols(cols, t));
  }
  const nx = nextChunk(view, series, t, true);
  if (nx) {
    const cols = decodeKept(series, nx.start, nx.bytes, memo);
    return edge(cols, 0);
  }
  const head = headOf(view, series, headCols);
  if (!head || head.count === 0) return null;
  const i = lowerBoundCols(head, t);
  return i < head.count ? edge(head, i) : null;
}
