// SUMMARY: per-interval statistics of one attribute's signal over a range, stitched across
// the series bound to it (a sensor swap gives one piece per series, in time order).
//
// The signal is the union point stream U: the points of each piece's series inside the
// piece, in time order. Between consecutive points of U the signal is a segment: 'stepped'
// holds the earlier value, 'continuous' interpolates linearly. Before the range's first
// point the segment starts at the last point before the range (of the series bound at the
// range start), so the value before each interval weights its start (InfluxDB #7445 and
// timescale-toolkit #46 weight an interval from its first point and get this wrong). Time
// is covered only between points, as in the rollups (rollups.ts) and render: after the
// last known point nothing is assumed. Time between pieces (unbound) is not covered.
//
// Aligned interior days and hours come from the rollups, edges from raw points: inside a
// piece, a bucket of its series is used when it lies inside one interval and strictly
// between the piece's first and last point of that series (then the segments entering and
// leaving the bucket are segments of U, so the stored areas are exactly U's); a whole UTC
// day from its stored day row when its block has one (rollup-block.ts, version 3), else
// its hours. Everything else is read raw, one walk per piece (summary-raw.ts). Rollups
// keep neither value sums nor the bad/uncertain split of non-good time, so a summary
// asking for mean, stddev or those durations reads every point (useRollups false): see
// docs/decisions.md (2026-11-27 and 2026-11-28, summary). The accumulator, with its exact
// ns offsets, is summary-accumulator.ts.
import { invalid } from '../errors.js';
import type { PointColumns, ValueType } from './encoding/chunk-types.js';
import { chunkKey, seriesKey } from './keys.js';
import { floorChunk, headerOf, nextChunk } from './chunk-access.js';
import { readOpenColumns } from './head-record.js';
import { allocColumns, numericInto } from './point-runs.js';
import { pointAtOrAfter, pointBefore, scanRange, type DecodedChunks, type EdgePoint } from './range-scan.js';
import { checkRange, requireMeta } from './read-raw.js';
import { coverBuckets, floorTo, HOUR_NS, type SpanBucket } from './rollup-read.js';
import { GOOD_QUALITY } from './rollup-row.js';
import { walkPiece, type WindowSink } from './summary-raw.js';
import { IntervalAccumulator, intervalOfNs, type SummaryColumns } from './summary-accumulator.js';

export type { SummaryColumns };
import type { Continuity } from './rollups.js';
import type { ReadView } from './series-env.js';

/** At most this many intervals per attribute in one summary. */
export const MAX_SUMMARY_INTERVALS = 100_000;
const DAY_NS = 24n * HOUR_NS;

/** type: the series' value type when the caller has read its meta (else it is read here). */
export interface SummaryPiece { series: string; fromNs: bigint; toNs: bigint; type?: ValueType }

export interface SummaryQuery {
  /** Interval boundaries, ascending: interval k is [boundaries[k], boundaries[k+1]). */
  boundaries: BigInt64Array;
  continuity: Continuity;
  /** Use hourly rollups for aligned interior hours (false: every point is read; forced false with a filter). */
  useRollups: boolean;
  /**
   * Lowest quality kept (0: all). Dropped points are as if not stored (the signal runs from
   * kept point to kept point); the time each held in the stored signal, until the next
   * stored point or its piece's end, is tallied in filteredNs.
   */
  minQuality?: number;
}


/** Boundaries of a uniform grid [start + k*interval) clipped to end (the last interval may be shorter). */
export function uniformBoundaries(startNs: bigint, endNs: bigint, intervalNs: bigint): BigInt64Array {
  if (intervalNs <= 0n) throw invalid('interval', 'must be a positive duration');
  const n = (endNs - startNs + intervalNs - 1n) / intervalNs;
  if (n > BigInt(MAX_SUMMARY_INTERVALS)) throw invalid('interval', `gives ${n} intervals over the range; at most ${MAX_SUMMARY_INTERVALS}`);
  const out = new BigInt64Array(Number(n) + 1);
  for (let k = 0; k < out.length - 1; k++) out[k] = startNs + BigInt(k) * intervalNs;
  out[out.length - 1] = endNs;
  return out;
}

export function checkBoundaries(b: BigInt64Array): void {
  if (b.length < 2) throw invalid('interval', 'gives no interval');
  checkRange(b[0], b[b.length - 1]);
  if (b.length - 1 > MAX_SUMMARY_INTERVALS) throw invalid('interval', `gives ${b.length - 1} intervals over the range; at most ${MAX_SUMMARY_INTERVALS}`);
  for (let k = 1; k < b.length; k++) {
    if (b[k] <= b[k - 1]) throw new Error('BUG: summary boundaries not ascending');
    if (b[k] - b[k - 1] >= 2n ** 52n) throw invalid('interval', 'must be shorter than 2^52 ns (52 days)');
  }
}


/** All-good quality for the runs summary-raw.ts passes without a quality column. */
let goodQ = new Uint32Array(0);

/** The accumulator as the receiver of a piece's walk: offsets from its base, exact (as rawRegion). */
function sinkOf(acc: IntervalAccumulator): WindowSink {
  return {
    before: (ts, v, q) => acc.setPrev(acc.edgeOffset(ts), v, q),
    run: (base, rel, v, q, n) => {
      const shift = acc.offsetOf(base + BigInt(rel[0])) - rel[0];
      for (let k = 0; k < n; k++) rel[k] += shift;
      if (q === null && goodQ.length < n) goodQ = new Uint32Array(Math.max(n, 8192)).fill(GOOD_QUALITY);
      acc.points(rel, v, q ?? goodQ, 0, n);
    },
  };
}

/** Per-thread decode scratch (one value type at a time) and offset/value columns for raw runs. */
let scratch: PointColumns | null = null;
let offs = new Float64Array(8192), vals = new Float64Array(8192);

function scratchFor(type: ValueType): PointColumns | undefined {
  // strings decode into fresh arrays (their scratch would hold references)
  if (type === 'string') return undefined;
  if (!scratch || scratch.type !== type) scratch = allocColumns(type, 8192);
  return scratch;
}

/** Offsets of the last stored point seen in a piece when it was dropped by the filter (NaN: it was kept, or none). */
let droppedAt = NaN;
let qs = new Uint32Array(8192);

/** The points of [from, to) of a series into the accumulator, with their segments; `keep`: lowest quality kept. */
function rawRegion(view: ReadView, series: Buffer, acc: IntervalAccumulator, from: bigint, to: bigint, type: ValueType, memo: DecodedChunks, keep = 0): void {
  if (to <= from) return;
  const isString = type === 'string';
  scanRange(view, series, from, to, (cols, i0, i1) => {
    const n = i1 - i0;
    if (offs.length < n) { offs = new Float64Array(n); vals = new Float64Array(n); qs = new Uint32Array(n); }
    const shift = acc.offsetOf(cols.tsBase + BigInt(cols.tsOffset[i0])) - cols.tsOffset[i0];
    const ts = cols.tsOffset;
    for (let k = 0; k < n; k++) offs[k] = ts[i0 + k] + shift;
    if (isString) vals.fill(NaN, 0, n); else numericInto(cols, i0, i1, vals);
    if (keep === 0) { acc.points(offs, vals, cols.quality.subarray(i0, i1), 0, n); return true; }
    // drop points below `keep` (compacting in place) and tally the time each dropped point held
    let m = 0;
    const q = cols.quality;
    for (let k = 0; k < n; k++) {
      const t = offs[k];
      if (!Number.isNaN(droppedAt)) { acc.filtered(droppedAt, t); droppedAt = NaN; }
      if (q[i0 + k] < keep) { droppedAt = t; continue; }
      offs[m] = t; vals[m] = vals[k]; qs[m] = q[i0 + k]; m++;
    }
    acc.points(offs, vals, qs, 0, m);
    return true;
  }, scratchFor(type), undefined, memo);
}

/** The latest point before t (and at or after floor) of quality >= keep, looking back past at most 64 dropped points. */
function keptBefore(view: ReadView, series: Buffer, t: bigint, keep: number, memo: DecodedChunks): EdgePoint | null {
  let at = t;
  for (let step = 0; step <= 64; step++) {
    const p = pointBefore(view, series, at, undefined, memo);
    if (p === null || p.quality >= keep) return p;
    at = p.ts;
  }
  return null;
}

/** The earliest point at or after t of quality >= keep, looking past at most 64 dropped points. */
function keptAtOrAfter(view: ReadView, series: Buffer, t: bigint, keep: number, memo?: DecodedChunks): EdgePoint | null {
  let at = t;
  for (let step = 0; step <= 64; step++) {
    const p = pointAtOrAfter(view, series, at, undefined, memo);
    if (p === null || p.quality >= keep) return p;
    at = p.ts + 1n;
  }
  return null;
}

/**
 * The time of the earliest point at or after t (pointAtOrAfter's answer), from the next
 * chunk's header when t lies in no chunk (the point lookup decoded that chunk whole).
 */
function firstTsAtOrAfter(view: ReadView, series: Buffer, t: bigint, memo: DecodedChunks): bigint | null {
  const f = floorChunk(view, series, t);
  if (f === null || headerOf(series, f.start, f.bytes).lastTs < t) {
    const nx = nextChunk(view, series, t, true);
    if (nx !== null) return headerOf(series, nx.start, nx.bytes).firstTs;
  }
  return pointAtOrAfter(view, series, t, undefined, memo)?.ts ?? null;
}

/** The time of the latest point before t (pointBefore's answer), from the floor chunk's header when t lies past its end. */
function lastTsBefore(view: ReadView, series: Buffer, t: bigint, memo: DecodedChunks): bigint | null {
  const head = readOpenColumns(view, series);
  if (head === null || head.count === 0 || head.tsBase >= t) {
    const c = floorChunk(view, series, t - 1n);
    if (c === null) return null;
    const h = headerOf(series, c.start, c.bytes);
    if (h.lastTs < t) return h.lastTs;
  }
  return pointBefore(view, series, t, head, memo)?.ts ?? null;
}

/**
 * Runs of rollup buckets usable inside [from, to): those strictly between the piece's first
 * and last point that lie inside one interval of the grid. Whole days come from the day
 * rows version-3 blocks store (one row instead of 24 hour rows to decode), hours elsewhere.
 */
function rollupRuns(view: ReadView, series: Buffer, q: SummaryQuery, firstTs: bigint, lastTs: bigint): SpanBucket[][] {
  const b0 = floorTo(firstTs, HOUR_NS) + HOUR_NS, e0 = floorTo(lastTs, HOUR_NS);
  if (e0 <= b0) return [];
  // a bucket fits when no interval boundary lies strictly inside it
  const B = q.boundaries;
  const fits = (start: bigint, ns: bigint) => { const k = intervalOfNs(B, start); return k >= 0 && k < B.length - 1 && B[k + 1] >= start + ns; };
  const buckets = coverBuckets(view, series, b0, e0, (day) => fits(day, DAY_NS));
  const runs: SpanBucket[][] = [];
  let run: SpanBucket[] = [];
  let expect = -1n;
  for (const b of buckets) {
    const ok = fits(b.start, b.ns);
    if (!ok || (run.length > 0 && b.start !== expect)) { if (run.length > 0) runs.push(run); run = []; }
    if (ok) { run.push(b); expect = b.start + b.ns; }
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * The chunks lying wholly inside [rs, re), a span rollups answered, that no edge lookup
 * decoded (the scans read only outside such spans): counted from the chunk keys, natively,
 * without reading a chunk but the last one (its header says whether it reaches past re).
 */
function chunksSkipped(view: ReadView, series: Buffer, rs: bigint, re: bigint, memo: DecodedChunks): number {
  let n = view.env.chunks.getKeysCount({ start: chunkKey(series, rs), end: chunkKey(series, re), transaction: view.txn });
  if (n === 0) return 0;
  const lastChunk = floorChunk(view, series, re - 1n);
  if (lastChunk !== null && lastChunk.start >= rs && headerOf(series, lastChunk.start, lastChunk.bytes).lastTs >= re) n--;
  for (const [start, cols] of memo) {
    if (start >= rs && start < re && cols.count > 0 && cols.tsBase + BigInt(cols.tsOffset[cols.count - 1]) < re) n--;
  }
  return n;
}

/**
 * The per-interval accumulations of the union of `pieces` (time order, inside the range,
 * not overlapping) over the grid [start + k*interval, ...) clipped to the range end.
 */
/** Grids already checked: a task over many attributes checks its one grid once (BigInt compares, ~10 us an attribute). */
const checkedGrids = new WeakSet<BigInt64Array>();

export function summarizePieces(view: ReadView, pieces: readonly SummaryPiece[], q: SummaryQuery): SummaryColumns {
  if (!checkedGrids.has(q.boundaries)) { checkBoundaries(q.boundaries); checkedGrids.add(q.boundaries); }
  const startNs = q.boundaries[0], endNs = q.boundaries[q.boundaries.length - 1];
  const acc = new IntervalAccumulator(q.boundaries, q.continuity);
  const keep = q.minQuality ?? 0;
  // rollups only help when an hour can lie inside one interval
  let longest = 0n;
  for (let k = 1; k < q.boundaries.length; k++) if (q.boundaries[k] - q.boundaries[k - 1] > longest) longest = q.boundaries[k] - q.boundaries[k - 1];
  const useRollups = q.useRollups && keep === 0 && longest >= HOUR_NS;
  let prevTo: bigint | null = null;
  // chunks the edge lookups of the current piece decoded, reused by its scans (and the point after the range)
  let memo: DecodedChunks = new Map();
  let lastDone: SummaryPiece | null = null;
  let walked: { piece: SummaryPiece; after: EdgePoint | null } | null = null;
  for (let p = 0; p < pieces.length; p++) {
    const piece = pieces[p];
    const from = piece.fromNs > startNs ? piece.fromNs : startNs, to = piece.toNs < endNs ? piece.toNs : endNs;
    if (to <= from) continue;
    const meta = piece.type !== undefined ? { type: piece.type } : requireMeta(view, piece.series);
    const isString = meta.type === 'string';
    const series = seriesKey(piece.series);
    memo = new Map();
    lastDone = piece;
    if (!useRollups && keep === 0 && !isString) {
      // the common raw case in one walk (summary-raw.ts): the edges come with the points
      if (prevTo !== null && from > prevTo && acc.hasPrev()) acc.unbound(acc.offsetOf(prevTo), acc.offsetOf(from));
      const wantBefore = prevTo === null && from === startNs;
      prevTo = to;
      walked = { piece, after: walkPiece(view, series, meta.type, from, to, wantBefore, to === endNs, sinkOf(acc)) };
      continue;
    }
    if (useRollups && !isString) {
      // rollups inside, the raw edges in walks (summary-raw.ts): the chunks an edge cuts
      // decode only the groups it needs, and first/last come from chunk headers where they can
      let wantBefore = false;
      if (prevTo === null) wantBefore = from === startNs;
      else if (from > prevTo && acc.hasPrev()) acc.unbound(acc.offsetOf(prevTo), acc.offsetOf(from));
      prevTo = to;
      const firstTs = firstTsAtOrAfter(view, series, from, memo), lastTs = lastTsBefore(view, series, to, memo);
      const sink = sinkOf(acc);
      if (firstTs === null || firstTs >= to || lastTs === null || lastTs < from) {
        // no point inside: only the value before the range, when it is wanted
        walked = { piece, after: walkPiece(view, series, meta.type, from, to, wantBefore, to === endNs, sink) };
        continue;
      }
      let at = from;
      const spans: Array<[bigint, bigint]> = [];
      for (const run of rollupRuns(view, series, q, firstTs, lastTs)) {
        const rs = run[0].start, re = run[run.length - 1].start + run[run.length - 1].ns;
        // the points before the run, and the first point at or after its start
        const next = walkPiece(view, series, meta.type, at, rs, wantBefore, true, sink)!;
        wantBefore = false;
        // the segment from the last raw point into the run: its part before the run
        acc.segmentTo(acc.offsetOf(next.ts), next.v, acc.offsetOf(rs));
        for (const b of run) acc.rollupBucket(acc.offsetOf(b.start), b);
        acc.countedUpTo(acc.offsetOf(re));
        spans.push([rs, re]);
        at = re;
      }
      walked = { piece, after: walkPiece(view, series, meta.type, at, to, wantBefore, to === endNs, sink) };
      for (const [rs, re] of spans) acc.c.chunksPruned += chunksSkipped(view, series, rs, re, memo);
      continue;
    }
    if (prevTo === null) {
      // the value before the range (only when this piece's series is bound at the range start)
      const before = from === startNs ? keptBefore(view, series, from, keep, memo) : null;
      if (before) acc.setPrev(acc.edgeOffset(before.ts), isString ? NaN : before.v, before.quality);
    } else if (from > prevTo && acc.hasPrev()) acc.unbound(acc.offsetOf(prevTo), acc.offsetOf(from));
    prevTo = to;
    if (!useRollups) {
      droppedAt = NaN;
      rawRegion(view, series, acc, from, to, meta.type, memo, keep);
      // a dropped last point holds until the piece's end
      if (!Number.isNaN(droppedAt)) acc.filtered(droppedAt, acc.offsetOf(to));
      droppedAt = NaN;
      continue;
    }
    const first = pointAtOrAfter(view, series, from, undefined, memo);
    const last = pointBefore(view, series, to, undefined, memo);
    if (!first || first.ts >= to || !last || last.ts < from) continue;
    let at = from;
    const spans: Array<[bigint, bigint]> = [];
    for (const run of rollupRuns(view, series, q, first.ts, last.ts)) {
      const rs = run[0].start, re = run[run.length - 1].start + run[run.length - 1].ns;
      rawRegion(view, series, acc, at, rs, meta.type, memo);
      // the segment from the last raw point into the run: its part before the run
      const next = pointAtOrAfter(view, series, rs, undefined, memo)!;
      acc.segmentTo(acc.offsetOf(next.ts), isString ? NaN : next.v, acc.offsetOf(rs));
      for (const b of run) acc.rollupBucket(acc.offsetOf(b.start), b);
      acc.countedUpTo(acc.offsetOf(re));
      spans.push([rs, re]);
      at = re;
    }
    rawRegion(view, series, acc, at, to, meta.type, memo);
    for (const [rs, re] of spans) acc.c.chunksPruned += chunksSkipped(view, series, rs, re, memo);
  }
  // the segment from the last point to the first point after the range, when the last piece reaches the end
  if (walked !== null && walked.piece === lastDone) {
    if (prevTo === endNs && acc.hasPrev() && walked.after) acc.segmentTo(acc.edgeOffset(walked.after.ts), walked.after.v);
  } else if (lastDone !== null && prevTo === endNs && acc.hasPrev()) {
    const meta = lastDone.type !== undefined ? { type: lastDone.type } : requireMeta(view, lastDone.series);
    const after = keptAtOrAfter(view, seriesKey(lastDone.series), endNs, keep, memo);
    if (after) acc.segmentTo(acc.edgeOffset(after.ts), meta.type === 'string' ? NaN : after.v);
  }
  return acc.c;
}
