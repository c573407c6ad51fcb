// The raw pass of a summary piece in one walk: the point before the piece, its points and
// the point after it, from the chunks in time order, each chunk opened once.
//
// Why (2026-11-28, 1-minute averages over one hour of 950 attributes): the edge lookups
// (pointBefore, pointAtOrAfter) each seek the chunk table, copy a chunk out of LMDB and
// decode it whole into fresh columns, and the scan seeks again; a plant series sealed as one
// chunk of 10,000 points was decoded whole for the 3,600 an hour holds. Here a chunk with a
// group directory (decimal floats, int64: the usual plant signal) decodes only its
// 256-point groups the piece touches (ChunkGroups, as render
// does), and the point after the piece comes from the directory when it opens a group.
// Their quality column decodes alone (mostly one run of good quality; none when the header
// counts every point good). Other chunks (raw floats, booleans, enums, strings) and the
// open head decode whole into per-thread scratch, as the scan did.
import { decodeColumns, headerOf, chunksCovering } from './chunk-access.js';
import { ChunkGroups, ChunkSummary, readChunkSummary } from './encoding/chunk-range.js';
import { ChunkReader } from './encoding/byte-io.js';
import { finishSection, openVerified } from './encoding/chunk.js';
import { sectionOffsets } from './encoding/chunk-header.js';
import { decodeIntColumnTo } from './encoding/int-column-decode.js';
import type { PointColumns, ValueType } from './encoding/chunk-types.js';
import { readOpenColumns } from './head-record.js';
import { allocColumns, numericInto } from './point-runs.js';
import { lowerBoundCols, type EdgePoint } from './range-scan.js';
import { GOOD_QUALITY } from './rollup-row.js';
import type { ReadView } from './series-env.js';

/** What the walk hands its caller, in time order: before (at most once, first), runs, after. */
export interface WindowSink {
  before(ts: bigint, v: number, q: number): void;
  /** Points [0, n): times `base` + rel[i] ns, values v[i], qualities q[i] (q null: all good). */
  run(base: bigint, rel: Float64Array, v: Float64Array, q: Uint32Array | null, n: number): void;
}

const summary = new ChunkSummary();
const groups = new ChunkGroups();
let rel = new Float64Array(8192), vals = new Float64Array(8192);
/** Whole-decode scratch per value type (a fleet alternates types from attribute to attribute). */
const scratchByType = new Map<ValueType, PointColumns>();

/** Per-thread scratch for whole decodes, grown to the chunk (a smaller one makes decodeColumns allocate). */
function columnsFor(type: ValueType, count: number): PointColumns {
  let c = scratchByType.get(type);
  if (!c || c.tsOffset.length < count) { c = allocColumns(type, Math.max(8192, count)); scratchByType.set(type, c); }
  return c;
}

let qual = new Uint32Array(8192);

let alignedCopy = new Uint8Array(0);

/**
 * The quality column of a chunk alone, into per-thread scratch: after its CRC, like every
 * decoder, unless ChunkGroups.open just checked these bytes (`verified`).
 */
function qualityColumn(bytes: Uint8Array, count: number, verified = false): Uint32Array {
  let c: { bytes: Uint8Array; words: Uint32Array };
  if (!verified) c = openVerified(bytes);
  else {
    // openVerified's word view without its second CRC pass
    let b = bytes;
    if ((bytes.byteOffset & 3) !== 0) {
      if (alignedCopy.length < bytes.length) alignedCopy = new Uint8Array(Math.ceil((bytes.length * 1.5) / 8) * 8);
      alignedCopy.set(bytes);
      b = alignedCopy.subarray(0, bytes.length);
    }
    c = { bytes: b, words: new Uint32Array(b.buffer, b.byteOffset, b.length >>> 2) };
  }
  if (qual.length < count) qual = new Uint32Array(Math.max(count, 2 * qual.length));
  const s = sectionOffsets(c.bytes);
  const r = new ChunkReader(c.bytes, c.words, s.qualityAt, s.end);
  decodeIntColumnTo(r, count, qual);
  finishSection(r, 'quality');
  return qual;
}

function room(n: number): void {
  if (rel.length < n) { rel = new Float64Array(n); vals = new Float64Array(n); }
}

/** Last index g in [0, groups) with firstRel[g] < x (-1: none). */
function lastGroupBelow(x: number): number {
  let lo = 0, hi = summary.groups;
  while (lo < hi) { const mid = (lo + hi) >>> 1; if (summary.firstRel[mid] < x) lo = mid + 1; else hi = mid; }
  return lo - 1;
}

/** Whether the walk is finished (the point after the piece is known, or not wanted and passed). */
interface WalkState {
  wantBefore: boolean; wantAfter: boolean; after: EdgePoint | null; done: boolean;
  /** The latest point before `from` so far: final once a point at or after `from` is met (the open head may hold a later one). */
  before: EdgePoint | null;
}

/** The point before the piece is final: hand it over (once) and stop looking. */
function settleBefore(st: WalkState, sink: WindowSink): void {
  if (st.wantBefore && st.before !== null) sink.before(st.before.ts, st.before.v, st.before.quality);
  st.wantBefore = false;
}

/**
 * The points of columns `c` (decoded whole) around [from, to): the last one before `from`
 * (when wanted), those inside, the first at or after `to` (when wanted).
 */
function visitColumns(c: PointColumns, from: bigint, to: bigint, st: WalkState, sink: WindowSink): void {
  if (c.count === 0) return;
  const i0 = lowerBoundCols(c, from), i1 = lowerBoundCols(c, to);
  if (st.wantBefore && i0 > 0) st.before = { ts: c.tsBase + BigInt(c.tsOffset[i0 - 1]), v: numericOf(c, i0 - 1), quality: c.quality[i0 - 1] };
  if (i0 < c.count) settleBefore(st, sink);
  if (i1 > i0) {
    room(i1 - i0);
    for (let i = i0; i < i1; i++) rel[i - i0] = c.tsOffset[i];
    numericInto(c, i0, i1, vals);
    sink.run(c.tsBase, rel, vals, c.quality.subarray(i0, i1), i1 - i0);
  }
  if (i1 < c.count) {
    if (st.wantAfter) st.after = { ts: c.tsBase + BigInt(c.tsOffset[i1]), v: numericOf(c, i1), quality: c.quality[i1] };
    st.done = true;
  }
}

const one = new Float64Array(1);
function numericOf(c: PointColumns, i: number): number {
  numericInto(c, i, i + 1, one);
  return one[0];
}

/**
 * A chunk of all-good points with a group directory, around [from, to): only the groups
 * holding the point before `from` (when wanted) and the points inside are decoded. False
 * when the chunk has no directory (the caller decodes it whole).
 */
function visitGroups(bytes: Buffer, count: number, allGood: boolean, type: ValueType, firstTs: bigint, from: bigint, to: bigint, st: WalkState, sink: WindowSink): boolean {
  if (!readChunkSummary(bytes, count, summary) || summary.groups === 0) return false;
  groups.open(bytes, summary, count, type);
  // the quality column decodes alone (mostly one run of good quality); none when all are good
  const q = allGood ? null : qualityColumn(bytes, count, true);
  const qAt = (i: number) => (q === null ? GOOD_QUALITY : q[i]);
  const G = 1 << summary.groupShift, n = count;
  // offsets from the chunk's first point; past 2^53 ns the clamps below still order correctly
  const fromRel = from <= firstTs ? 0 : Number(from - firstTs), toRel = Number(to - firstTs);
  const g0 = Math.max(0, lastGroupBelow(fromRel)), g1 = lastGroupBelow(toRel);
  if (g1 >= g0) {
    const a = g0 * G, b = Math.min(n, (g1 + 1) * G);
    room(b - a);
    groups.decode(a, b, rel, vals);
    // rel: offsets from the chunk's first point; find the piece's part of [a, b)
    let i0 = 0;
    while (i0 < b - a && rel[i0] < fromRel) i0++;
    let i1 = b - a;
    while (i1 > i0 && rel[i1 - 1] >= toRel) i1--;
    // the first point at or after `to`, when it lies in the decoded groups (read before the run moves them)
    const inside = i1 < b - a;
    if (inside && st.wantAfter) st.after = { ts: firstTs + BigInt(rel[i1]), v: vals[i1], quality: qAt(a + i1) };
    if (st.wantBefore && i0 > 0) st.before = { ts: firstTs + BigInt(rel[i0 - 1]), v: vals[i0 - 1], quality: qAt(a + i0 - 1) };
    // a point at or after `from` in these groups, or in a group after them: the before point is final
    if (i0 < b - a || b < n) settleBefore(st, sink);
    if (i1 > i0) {
      if (i0 > 0) { rel.copyWithin(0, i0, i1); vals.copyWithin(0, i0, i1); }
      sink.run(firstTs, rel, vals, q === null ? null : q.subarray(a + i0, a + i1), i1 - i0);
    }
    if (inside) { st.done = true; return true; }
  }
  const next = g1 + 1;
  if (next < summary.groups) {
    // the point after `to` opens the next group: its time and value are in the directory
    if (st.wantAfter) st.after = { ts: firstTs + BigInt(summary.firstRel[next]), v: summary.firstV[next], quality: qAt(next << summary.groupShift) };
    st.done = true;
  }
  return true;
}

/**
 * One walk over the chunks (then the open head) of `series` around [from, to): the last
 * point before `from` to sink.before when `wantBefore`, the points inside to sink.run, and
 * the first point at or after `to`, returned when `wantAfter` (null: none, or not wanted).
 * Equals pointBefore + scanRange + pointAtOrAfter over the same snapshot.
 */
export function walkPiece(view: ReadView, series: Buffer, type: ValueType, from: bigint, to: bigint, wantBefore: boolean, wantAfter: boolean, sink: WindowSink): EdgePoint | null {
  const st: WalkState = { wantBefore, wantAfter, after: null, done: false, before: null };
  // the chunk holding the point before `from` first (chunksCovering starts with the floor chunk)
  for (const c of chunksCovering(view, series, from - 1n, INT64_MAX_TS)) {
    const h = headerOf(series, c.start, c.bytes);
    const allGood = h.goodCount === h.count;
    if (h.lastTs < from) {
      if (!st.wantBefore) continue;
      // the point before the piece is this chunk's last: its header has it, its quality section the quality
      if (type !== 'string') { st.before = { ts: h.lastTs, v: h.last, quality: allGood ? GOOD_QUALITY : qualityColumn(c.bytes, h.count)[h.count - 1] }; continue; }
    } else if (h.firstTs >= to) {
      settleBefore(st, sink);
      if (!st.wantAfter) { st.done = true; break; }
      if (type !== 'string') { st.after = { ts: h.firstTs, v: h.first, quality: allGood ? GOOD_QUALITY : qualityColumn(c.bytes, h.count)[0] }; st.done = true; break; }
    }
    const partial = (type === 'float64' || type === 'int64') && h.firstTs < to
      && visitGroups(c.bytes, h.count, allGood, type, h.firstTs, from, to, st, sink);
    if (!partial) visitColumns(decodeColumns(series, c.start, c.bytes, type === 'string' ? undefined : columnsFor(type, h.count), h), from, to, st, sink);
    if (st.done) break;
  }
  if (!st.done) {
    const head = readOpenColumns(view, series);
    if (head) visitColumns(head, from, to, st, sink);
  }
  settleBefore(st, sink);
  return st.after;
}

/** chunksCovering's upper bound: every chunk from the floor on (the walk stops itself). */
const INT64_MAX_TS = 2n ** 63n - 1n;
