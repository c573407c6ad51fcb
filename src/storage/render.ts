// RENDER: what a line chart of width W needs, computed from chunk headers where possible.
//
// Pixel column of a point: col(t) = floor(rel * W / span), rel = t - start in ns as a
// double, span = end - start. 'significant-points' is M4 (Jugel et al., VLDB 2014): per
// column the first, last, min and max point, plus the last point before the range and
// the first at/after its end. Drawing those as a polyline with points snapped to pixel
// columns gives exactly the pixels of drawing every raw point: within one column all
// points share x, so every raw segment inside it is vertical and covered by [min, max],
// and the segments between columns join the same last/first points.
// A chunk whose first and last point fall in the same column is answered from its header
// (first, last, min, max with their times), without decoding: this is what keeps a
// 10-million-point render in milliseconds. 'minmax-band' gives per column min and max and
// optionally one `stat`; twa and percent_good need every point, so they decode.
// Exactness of col() needs rel exact: ranges shorter than 2^53 ns (104 days).
import { invalid, ServiceError } from '../errors.js';
import { decodeChunk, decodeNumericInto, MAX_CHUNK_POINTS } from './encoding/chunk.js';
import { ChunkGroups, ChunkSummary, readChunkSummary } from './encoding/chunk-range.js';
import { createPointColumns } from './encoding/point-columns.js';
import { ChunkCorruptError, type PointColumns, type ValueType } from './encoding/chunk-types.js';
import { forEachChunk, HeaderView } from './render-scan.js';
import { addRunLengthChunk, addStraddlingChunk } from './render-straddle.js';
import { readOpenColumns } from './head-record.js';
import { seriesKey } from './keys.js';
import { numericInto } from './point-runs.js';
import { lowerBoundCols, pointAtOrAfter, pointBefore, type EdgePoint } from './range-scan.js';
import { checkRange, requireMeta } from './read-raw.js';
import { GOOD_QUALITY } from './rollup-row.js';
import type { Continuity } from './rollups.js';
import type { ReadView } from './series-env.js';
import { ColumnSink } from './render-columns.js';

export type RenderMode = 'significant-points' | 'minmax-band';
export type RenderStat = 'count' | 'min' | 'max' | 'first' | 'last' | 'twa' | 'percent_good';
export const RENDER_STATS: readonly RenderStat[] = ['count', 'min', 'max', 'first', 'last', 'twa', 'percent_good'];
export const MAX_RENDER_WIDTH = 100_000;

export interface RenderQuery {
  startNs: bigint;
  endNs: bigint;
  width: number;
  mode: RenderMode;
  stat?: RenderStat;
  /** For twa: 'continuous' (linear, default) or 'stepped'. */
  continuity?: Continuity;
}

export interface SignificantPoints {
  mode: 'significant-points';
  count: number;
  /** Float milliseconds since the epoch. */
  tMs: Float64Array;
  /** Exact ns times of the same points. */
  tNs: BigInt64Array;
  v: Float64Array;
  percentGood: number;
  pointsScanned: number;
  chunksFromHeaders: number;
  chunksDecoded: number;
  /** Directory groups decoded in chunks that straddle column boundaries (chunk format v2). */
  groupsDecoded: number;
}

export interface MinMaxBand {
  mode: 'minmax-band';
  width: number;
  /** Start of each column, float ms. */
  tMs: Float64Array;
  /** Per column; NaN exactly where the column has no point (answers omit those columns). */
  vMin: Float64Array;
  vMax: Float64Array;
  stat: RenderStat | null;
  /** The requested stat per column (NaN exactly where the column has no point), null when none was asked. */
  vStat: Float64Array | null;
  percentGood: number;
  pointsScanned: number;
  chunksFromHeaders: number;
  chunksDecoded: number;
  /** Directory groups decoded in chunks that straddle column boundaries (chunk format v2). */
  groupsDecoded: number;
}

/** Per-thread summary and group reader, reused for every chunk. */
const summary = new ChunkSummary();
const groups = new ChunkGroups();
/** Per-thread decode scratch: one set per value type, at the codec's largest chunk. */
const scratchCols = new Map<ValueType, PointColumns>();
let scratchTs = new Float64Array(MAX_CHUNK_POINTS);
let scratchV = new Float64Array(MAX_CHUNK_POINTS);

function checkQuery(q: RenderQuery): void {
  checkRange(q.startNs, q.endNs);
  if (!Number.isInteger(q.width) || q.width < 0 || q.width > MAX_RENDER_WIDTH) throw invalid('width', `must be an integer 0..${MAX_RENDER_WIDTH}`);
  if (q.mode !== 'significant-points' && q.mode !== 'minmax-band') throw invalid('mode', "must be 'significant-points' or 'minmax-band'");
  if (q.stat !== undefined && !RENDER_STATS.includes(q.stat)) throw invalid('stat', `must be one of ${RENDER_STATS.join(', ')}`);
  if (q.continuity !== undefined && q.continuity !== 'continuous' && q.continuity !== 'stepped') throw invalid('continuity', "must be 'continuous' or 'stepped'");
}

export function renderSeries(view: ReadView, id: string, q: RenderQuery): SignificantPoints | MinMaxBand {
  return renderPieces(view, [{ series: id, fromNs: q.startNs, toNs: q.endNs }], q);
}

/** A stretch of the range drawn from one series (a binding clipped to the range). */
export interface RenderPiece { series: string; fromNs: bigint; toNs: bigint }

/**
 * The render of the union of `pieces` (time order, inside the range, not overlapping): the
 * points of each piece's series inside the piece go into one pixel grid over the whole
 * range, so the result equals rendering one series holding exactly those points. The point
 * before the range comes from the first piece's series when it starts at the range start,
 * the point after from the last piece's when it reaches the end.
 */
export function renderPieces(view: ReadView, pieces: readonly RenderPiece[], q: RenderQuery): SignificantPoints | MinMaxBand {
  checkQuery(q);
  for (const p of pieces) {
    const meta = requireMeta(view, p.series);
    if (meta.type === 'string') throw invalid('series', 'a string series has no numeric view and cannot be rendered');
  }
  const perPoint = q.mode === 'minmax-band' && (q.stat === 'twa' || q.stat === 'percent_good');
  const sink = new ColumnSink(q.startNs, q.endNs, q.width, q.continuity === 'stepped', perPoint);
  if (q.width === 0) {
    return q.mode === 'significant-points'
      ? { mode: 'significant-points', count: 0, tMs: new Float64Array(0), tNs: new BigInt64Array(0), v: new Float64Array(0), percentGood: 0, pointsScanned: 0, chunksFromHeaders: 0, chunksDecoded: 0, groupsDecoded: 0 }
      : { mode: 'minmax-band', width: 0, tMs: new Float64Array(0), vMin: new Float64Array(0), vMax: new Float64Array(0), stat: q.stat ?? null, vStat: q.stat ? new Float64Array(0) : null, percentGood: 0, pointsScanned: 0, chunksFromHeaders: 0, chunksDecoded: 0, groupsDecoded: 0 };
  }
  const span = Number(q.endNs - q.startNs);
  const first = pieces.length > 0 && pieces[0].fromNs <= q.startNs ? pieces[0] : null;
  const last = pieces.length > 0 && pieces[pieces.length - 1].toNs >= q.endNs ? pieces[pieces.length - 1] : null;
  const before = first ? pointBefore(view, seriesKey(first.series), q.startNs) : null;
  if (before) sink.prevPoint(Number(before.ts - q.startNs), before.v, before.quality >= GOOD_QUALITY);
  let fromHeaders = 0, decoded = 0, groupsDecoded = 0;
  for (const p of pieces) {
    const fromNs = p.fromNs > q.startNs ? p.fromNs : q.startNs, toNs = p.toNs < q.endNs ? p.toNs : q.endNs;
    if (toNs <= fromNs) continue;
    const series = seriesKey(p.series);
    // the piece in rel: chunks wholly inside it may be answered from headers; a piece edge
    // inside the range cuts runs exactly (cutLo/cutHi), a range edge as before (segments clip)
    const lo = Number(fromNs - q.startNs), hi = Number(toNs - q.startNs);
    const cut: PieceCut = { lo, hi, cutLoNs: fromNs > q.startNs ? fromNs : null, cutHiNs: toNs < q.endNs ? toNs : null };
    const h = new HeaderView(series, q.startNs);
    forEachChunk(view, series, fromNs, toNs - 1n, (bytes) => {
      h.read(bytes);
      if (h.lastRel < lo) return true;
      if (h.firstRel >= hi) return false;
      try {
        const g = addChunk(sink, h, bytes, cut, perPoint);
        if (g < 0) fromHeaders++;
        else { decoded++; groupsDecoded += g; }
      } catch (e) {
        if (e instanceof ChunkCorruptError) throw new ServiceError('chunk-corrupt', `series ${p.series}: ${e.message}`, { series: p.series, chunk_start_ns: (q.startNs + BigInt(h.firstRel)).toString(), byte_length: e.byteLength });
        throw e;
      }
      return true;
    });
    const head = readOpenColumns(view, series);
    if (head && head.count > 0) {
      const i0 = lowerBoundCols(head, fromNs), i1 = lowerBoundCols(head, toNs);
      if (i1 > i0) addColumns(sink, head, q.startNs, i0, i1);
    }
  }
  const after = last ? pointAtOrAfter(view, seriesKey(last.series), q.endNs) : null;
  if (after) sink.nextPoint(Number(after.ts - q.startNs), after.v);
  return q.mode === 'significant-points'
    ? { mode: 'significant-points', ...sink.significantPoints(before, after), chunksFromHeaders: fromHeaders, chunksDecoded: decoded, groupsDecoded }
    : { mode: 'minmax-band', width: q.width, ...sink.band(q.stat ?? null), stat: q.stat ?? null, chunksFromHeaders: fromHeaders, chunksDecoded: decoded, groupsDecoded };
}

/**
 * Where a piece lies in rel: [lo, hi); cutLoNs/cutHiNs: a piece edge strictly inside the
 * range (points beyond it belong to another piece and are dropped), null at a range edge
 * (points beyond it feed the edge segments and fall outside every column, as for one series).
 */
interface PieceCut { lo: number; hi: number; cutLoNs: bigint | null; cutHiNs: bigint | null }

/**
 * One chunk into the sink, by the cheapest exact route: -1 when the header (and summary)
 * sufficed, else the directory groups decoded (0 for a whole-chunk decode). Per-point stats and chunks cut by the range ends take every point with its
 * quality. Otherwise a chunk inside one column is its header; a chunk across columns
 * decodes only its boundary groups when it has a group directory, else whole.
 */
function addChunk(sink: ColumnSink, h: HeaderView, bytes: Uint8Array, cut: PieceCut, perPoint: boolean): number {
  const inside = h.firstRel >= cut.lo && h.lastRel < cut.hi;
  const uniform = h.goodCount === h.count || h.goodCount === 0;
  // A uniform chunk inside one column needs nothing beyond its header.
  if (!perPoint && inside && uniform && sink.columnAt(h.firstRel) === sink.columnAt(h.lastRel)) {
    sink.addSummary(h, h.goodCount === h.count ? 0 : h.lastRel - h.firstRel, h.goodCount === h.count);
    return -1;
  }
  const hasSummary = !perPoint && inside && readChunkSummary(bytes, h.count, summary, h);
  if (!perPoint && inside && (hasSummary || uniform)) {
    const nonGood = hasSummary ? summary.nonGoodNs : h.goodCount === h.count ? 0 : h.lastRel - h.firstRel;
    const lastGood = hasSummary ? summary.lastGood : h.goodCount === h.count;
    if (sink.columnAt(h.firstRel) === sink.columnAt(h.lastRel)) {
      sink.addSummary(h, nonGood, lastGood);
      return -1;
    }
    if (hasSummary && summary.groups > 0) return addStraddlingChunk(sink, h, summary, groups, bytes);
    if (groups.openRuns(bytes, h.count, h.type, h)) {
      addRunLengthChunk(sink, h, groups, nonGood, lastGood);
      return 0;
    }
    const n = decodeNumericInto(bytes, scratchTs, scratchV);
    sink.enterChunk(h.firstRel, h.first);
    sink.addRun(h.firstRel, scratchTs, scratchV, 0, n);
    sink.chunkCoverage(h.firstRel, h.lastRel, nonGood, h.last, lastGood);
    return 0;
  }
  if (uniform) {
    const n = decodeNumericInto(bytes, scratchTs, scratchV);
    let i0 = 0, i1 = n;
    if (cut.cutLoNs !== null) while (i0 < n && h.firstRel + scratchTs[i0] < cut.lo) i0++;
    if (cut.cutHiNs !== null) while (i1 > i0 && h.firstRel + scratchTs[i1 - 1] >= cut.hi) i1--;
    sink.addPoints(h.firstRel, scratchTs, scratchV, null, h.goodCount === h.count, i0, i1);
  } else {
    const cols = scratchFor(h.type);
    decodeChunk(bytes, cols);
    const i0 = cut.cutLoNs === null ? 0 : lowerBoundCols(cols, cut.cutLoNs);
    const i1 = cut.cutHiNs === null ? cols.count : lowerBoundCols(cols, cut.cutHiNs);
    if (i1 > i0) addColumns(sink, cols, sink.startNs, i0, i1);
  }
  return 0;
}

function scratchFor(type: ValueType): PointColumns {
  let c = scratchCols.get(type);
  if (!c) { c = createPointColumns(type, MAX_CHUNK_POINTS); scratchCols.set(type, c); }
  return c;
}

/** Mixed-quality chunks and the head: numeric view plus per-point quality. */
function addColumns(sink: ColumnSink, cols: PointColumns, startNs: bigint, i0: number, i1: number): void {
  const n = i1 - i0;
  if (scratchTs.length < n) { scratchTs = new Float64Array(n); scratchV = new Float64Array(n); }
  const ts = cols.tsOffset, o0 = ts[i0];
  for (let k = 0; k < n; k++) scratchTs[k] = ts[i0 + k] - o0;
  numericInto(cols, i0, i1, scratchV);
  sink.addPoints(Number(cols.tsBase + BigInt(o0) - startNs), scratchTs, scratchV, cols.quality.subarray(i0, i1), false, 0, n);
}

export type { EdgePoint };
