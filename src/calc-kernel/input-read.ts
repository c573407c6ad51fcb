// Reads one input of an evaluation: the points of a series in [from, to) plus the
// look-back the expression needs (the points in force before `from`), as one contiguous
// column set in the storage's own shape (PointColumns), which the compiled expression
// takes as is. Offsets are relative to the first point read, so a window must span under
// 2^53 ns (about 104 days); callers slice longer ranges.
import { allocColumns, lowerBoundCols, pointBefore, scanRange, seriesKey, readOpenTail, type ReadView, type SeriesMeta } from '../storage/series-store.js';
import type { PointColumns } from '../storage/encoding/chunk-types.js';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import { GridScratch } from './grid.js';
import type { EvaluationResult } from './evaluation.js';

interface Run { cols: PointColumns; i0: number; i1: number }

function copyRun(out: PointColumns, at: number, r: Run, base: bigint): void {
  const shift = Number(r.cols.tsBase - base);
  for (let i = r.i0, k = at; i < r.i1; i++, k++) {
    out.tsOffset[k] = r.cols.tsOffset[i] + shift;
    out.quality[k] = r.cols.quality[i];
  }
  const n = r.i1 - r.i0;
  switch (out.type) {
    case 'float64': out.f64!.set(r.cols.f64!.subarray(r.i0, r.i1), at); break;
    case 'int64': out.i64!.set(r.cols.i64!.subarray(r.i0, r.i1), at); break;
    case 'boolean': out.u8!.set(r.cols.u8!.subarray(r.i0, r.i1), at); break;
    case 'enum': out.ord!.set(r.cols.ord!.subarray(r.i0, r.i1), at); break;
    case 'string': for (let i = 0; i < n; i++) out.str![at + i] = r.cols.str![r.i0 + i]; break;
  }
}

/**
 * float64 column buffers a read fills instead of fresh arrays (a read worker keeps one per
 * input of a window): allocating and zeroing ~2 MB per input and backfill day was a fifth of a
 * window's input read (profile, 2026-11-28). Columns from it are views, valid until its next use.
 */
export class ColumnScratch {
  private ts = new Float64Array(0);
  private f64 = new Float64Array(0);
  private quality = new Uint32Array(0);
  columns(type: ValueType, n: number, base: bigint): PointColumns {
    if (type !== 'float64') return allocColumns(type, n, base);
    if (this.ts.length < n) {
      const size = Math.max(n, Math.ceil(this.ts.length * 1.5));
      this.ts = new Float64Array(size); this.f64 = new Float64Array(size); this.quality = new Uint32Array(size);
    }
    return { type, count: 0, tsBase: base, tsOffset: this.ts.subarray(0, n), f64: this.f64.subarray(0, n), i64: null, u8: null, ord: null, str: null, quality: this.quality.subarray(0, n) };
  }
}

/** A result's arrays reused across evaluations (views of at least n; valid until the next use). */
export class ResultScratch {
  private values = new Float64Array(0);
  private quality = new Uint32Array(0);
  private reason = new Uint8Array(0);
  result(n: number): EvaluationResult {
    if (this.values.length < n) {
      const size = Math.max(n, Math.ceil(this.values.length * 1.5));
      this.values = new Float64Array(size); this.quality = new Uint32Array(size); this.reason = new Uint8Array(size);
    }
    return { count: n, values: this.values, quality: this.quality, reason: this.reason };
  }
}

/** The buffers one thread reuses across window evaluations: the grid's, each input's, the stored outputs', the results'. */
export class EvaluationScratch {
  readonly grid = new GridScratch();
  readonly output = new ColumnScratch();
  /** The expression's result and the `when` condition's. */
  readonly result = new ResultScratch();
  readonly condition = new ResultScratch();
  private readonly inputs: ColumnScratch[] = [];
  input(k: number): ColumnScratch {
    while (this.inputs.length <= k) this.inputs.push(new ColumnScratch());
    return this.inputs[k];
  }
}

/** An empty column set of the type (a series with no points in the window). */
export function emptyColumns(type: ValueType, base: bigint): PointColumns {
  return allocColumns(type, 0, base);
}

/**
 * Series keys by id, per thread: a live window reads each input once a second, and parsing
 * the UUID text (a regular expression and a hex decode) every time was ~5% of a worker's
 * window (profile, 2026-11-28). Keys are never written to, only read (a lookup key, copied
 * into segment keys). Cleared when it holds every series of a large plant several times over.
 */
const keys = new Map<string, Buffer>();
const KEYS_KEPT = 200_000;
function keyOf(seriesId: string): Buffer {
  let k = keys.get(seriesId);
  if (k === undefined) {
    if (keys.size >= KEYS_KEPT) keys.clear();
    k = seriesKey(seriesId);
    keys.set(seriesId, k);
  }
  return k;
}

/** What a read learnt of its series besides the points: its finalised watermark (undefined: no such series). */
export interface InputFacts { finalisedNs: bigint | null | undefined }

/**
 * The input's points in [from, to) and up to `lookbackPoints` points before `from`
 * (the value in force at `from`, and more for prev/delta/rate). A series the engine no
 * longer has (deleted meanwhile) reads as empty. `facts` receives the series' finalised
 * watermark from the same record (the window's provisional check needs no second read).
 */
export function readInput(view: ReadView, seriesId: string, from: bigint, to: bigint, lookbackPoints: number, scratch?: ColumnScratch, facts?: InputFacts): PointColumns {
  const key = keyOf(seriesId);
  // Only the head's newest segments are decoded, back to a point before `from` and the
  // look-back points (a live window's usual case); a tail that is not the whole head always
  // holds them. The whole head, when that is what it took, serves both walks below. The
  // series' record comes with it, read with the kept key.
  const slot: { meta: SeriesMeta | undefined } = { meta: undefined };
  const tail = readOpenTail(view, key, from, lookbackPoints, slot);
  const meta = slot.meta;
  if (facts) facts.finalisedNs = meta ? meta.finalisedNs : undefined;
  if (!meta) return emptyColumns('float64', from);
  const head = tail.cols;
  if (head !== null && head.count > 0) {
    // Every sealed point is at or before sealedEnd and every head point after it: when the
    // head holds a point before `from` and all the look-back points, the window is all in
    // the head and no chunk cursor is opened (a live window's usual case: most of its
    // input read went there, profile 2026-11-28).
    const i = lowerBoundCols(head, from);
    if (i >= 1 && i >= lookbackPoints) {
      const i0 = i - lookbackPoints, i1 = lowerBoundCols(head, to);
      const n = i1 - i0;
      const base = n > 0 ? head.tsBase + BigInt(head.tsOffset[i0]) : from;
      const out = scratch ? scratch.columns(meta.type, n, base) : allocColumns(meta.type, n, base);
      if (n > 0) copyRun(out, 0, { cols: head, i0, i1 }, base);
      out.count = n;
      return out;
    }
  }
  if (!tail.whole) throw new Error('BUG: a partial head tail without the points before its window');
  const before: bigint[] = [];
  let t = from;
  for (let i = 0; i < lookbackPoints; i++) {
    const p = pointBefore(view, key, t, head);
    if (!p) break;
    before.push(p.ts);
    t = p.ts;
  }
  const start = before.length > 0 ? before[before.length - 1] : from;
  const runs: Run[] = [];
  let n = 0;
  // The look-back points are re-read as a run from the earliest of them: one scan, exact values of every type.
  scanRange(view, key, start, to, (cols, i0, i1) => {
    // Chunk columns may be a reused scratch or a cached decode: keep views only for the copy below, done before the next read.
    runs.push({ cols, i0, i1 });
    n += i1 - i0;
    return true;
  }, undefined, head);
  const base = runs.length > 0 ? runs[0].cols.tsBase + BigInt(runs[0].cols.tsOffset[runs[0].i0]) : from;
  const out = scratch ? scratch.columns(meta.type, n, base) : allocColumns(meta.type, n, base);
  let at = 0;
  for (const r of runs) { copyRun(out, at, r, base); at += r.i1 - r.i0; }
  out.count = n;
  return out;
}
