// GET /v1/series/{uuid}/render in a worker: the engine's renderSeries (M4 significant
// points, or a per-column min/max band with an optional stat), serialised from its typed
// columns into JSON or msgpack. Every answer is arrays of numbers: a band leaves out the
// pixel columns that hold no point (the engine marks them NaN), so t_ms, v_min, v_max
// and v_stat have one entry per column with data, and percent_good is always a number
// (0 for a range that covers no time; docs/decisions.md, 2026-11-27). Transitions mark where the meaning of the line changes inside the range:
// declared gaps ('gap-start'/'gap-end'), swinging-door lossy ranges ('lossy-start'/
// 'lossy-end') and the finalised watermark ('finalised').
import { renderSeries, type MinMaxBand, type SignificantPoints } from '../../storage/series-store.js';
import { readMeta, type SeriesMeta } from '../../storage/series-store.js';
import { type BodySink } from '../../body-sink.js';
import { writeDouble } from '../../json/digits.js';
import { putUint53 } from '../../json/fast-digits.js';
import { mpArrayHeader, mpFloat64, mpKey, mpMapHeader, mpNil, mpString, mpUint } from '../msgpack-bytes.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type RenderTask, type TaskOutcome } from '../task-protocol.js';

export interface Transition { tMs: number; kind: string }

const NS_PER_MS = 1_000_000;

/** Float ms of an ns time, exact to the ns where the double allows. */
function toMs(ns: bigint): number {
  const ms = ns / 1_000_000n;
  return Number(ms) + Number(ns - ms * 1_000_000n) / NS_PER_MS;
}

export function transitionsOf(meta: SeriesMeta | undefined, startNs: bigint, endNs: bigint): Transition[] {
  if (!meta) return [];
  const out: Transition[] = [];
  const inside = (t: bigint) => t >= startNs && t < endNs;
  for (const g of meta.declaredGaps) {
    if (inside(g.startNs)) out.push({ tMs: toMs(g.startNs), kind: 'gap-start' });
    if (inside(g.endNs)) out.push({ tMs: toMs(g.endNs), kind: 'gap-end' });
  }
  for (const l of meta.lossyRanges) {
    if (inside(l.startNs)) out.push({ tMs: toMs(l.startNs), kind: 'lossy-start' });
    if (inside(l.endNs)) out.push({ tMs: toMs(l.endNs), kind: 'lossy-end' });
  }
  if (meta.finalisedNs !== null && inside(meta.finalisedNs)) out.push({ tMs: toMs(meta.finalisedNs), kind: 'finalised' });
  return out.sort((a, b) => a.tMs - b.tMs);
}

// ---- JSON ----
function jNum(sink: BodySink, v: number): void {
  if (Number.isNaN(v)) sink.ascii('null'); else writeDouble(sink, v);
}
function jArray(sink: BodySink, a: Float64Array, n: number): void {
  sink.ascii('[');
  for (let i = 0; i < n; i++) {
    if (i > 0) { sink.reserve(1); sink.buf[sink.pos++] = 44; }
    jNum(sink, a[i]);
  }
  sink.ascii(']');
}
/**
 * t_ms: a whole millisecond count (times on a millisecond grid: the common case) through
 * putUint53 (digits in int32 halves, two at a time, where a division compiles to a multiply); writeDouble's integer path divides the 13-digit double by 10 per digit
 * in floating point (3-4 % of the worker's render task in its profile, 2026-11-21). The
 * text is the same as writeDouble's. Anything else goes through jNum.
 */
function jTimes(sink: BodySink, a: Float64Array, n: number): void {
  sink.ascii('[');
  for (let i = 0; i < n; i++) {
    if (i > 0) { sink.reserve(1); sink.buf[sink.pos++] = 44; }
    const t = a[i];
    if (t >= 1e8 && t < 1e15 && Number.isInteger(t)) { sink.reserve(16); sink.pos = putUint53(sink.buf, sink.pos, t); }
    else jNum(sink, t);
  }
  sink.ascii(']');
}

/** a[cols[k]] for k < n: one band array at the columns that hold data. */
function jColumns(sink: BodySink, a: Float64Array, cols: Int32Array, n: number): void {
  sink.ascii('[');
  for (let k = 0; k < n; k++) {
    if (k > 0) { sink.reserve(1); sink.buf[sink.pos++] = 44; }
    jNum(sink, a[cols[k]]); // never NaN at a column with data; null would show a bug, not break the JSON
  }
  sink.ascii(']');
}

/** jTimes at the columns that hold data. */
function jColumnTimes(sink: BodySink, a: Float64Array, cols: Int32Array, n: number): void {
  sink.ascii('[');
  for (let k = 0; k < n; k++) {
    if (k > 0) { sink.reserve(1); sink.buf[sink.pos++] = 44; }
    const t = a[cols[k]];
    if (t >= 1e8 && t < 1e15 && Number.isInteger(t)) { sink.reserve(16); sink.pos = putUint53(sink.buf, sink.pos, t); }
    else jNum(sink, t);
  }
  sink.ascii(']');
}

/** Per-thread list of the band's columns that hold data, grown to the widest band seen. */
let columnScratch = new Int32Array(1024);

/** The columns of a band that hold a point (v_min is NaN exactly where none does), into columnScratch; returns their count. */
function dataColumns(vMin: Float64Array): number {
  const w = vMin.length;
  if (columnScratch.length < w) columnScratch = new Int32Array(w);
  const cols = columnScratch;
  let n = 0;
  for (let c = 0; c < w; c++) if (vMin[c] === vMin[c]) cols[n++] = c;
  return n;
}

function jTransitions(sink: BodySink, ts: Transition[]): void {
  sink.ascii('[');
  ts.forEach((t, i) => { if (i > 0) sink.ascii(','); sink.ascii('{"t_ms":'); writeDouble(sink, t.tMs); sink.ascii(`,"kind":${JSON.stringify(t.kind)}}`); });
  sink.ascii(']');
}

// ---- msgpack ----
function mNum(sink: BodySink, v: number): void {
  if (Number.isNaN(v)) mpNil(sink); else mpFloat64(sink, v);
}
function mArray(sink: BodySink, a: Float64Array, n: number): void {
  mpArrayHeader(sink, n);
  for (let i = 0; i < n; i++) mNum(sink, a[i]);
}
function mColumns(sink: BodySink, a: Float64Array, cols: Int32Array, n: number): void {
  mpArrayHeader(sink, n);
  for (let k = 0; k < n; k++) mpFloat64(sink, a[cols[k]]);
}
function mTransitions(sink: BodySink, ts: Transition[]): void {
  mpArrayHeader(sink, ts.length);
  for (const t of ts) { mpMapHeader(sink, 2); sink.bytes(mpKey('t_ms')); mpFloat64(sink, t.tMs); sink.bytes(mpKey('kind')); mpString(sink, t.kind); }
}

export function renderTask(t: RenderTask): TaskOutcome {
  const json = t.format === 'json';
  return runTask(json ? JSON_TYPE : MSGPACK_TYPE, (view, sink) => {
    const startNs = BigInt(t.startNs), endNs = BigInt(t.endNs);
    const r = renderSeries(view, t.series, { startNs, endNs, width: t.width, mode: t.mode, stat: t.stat ?? undefined, continuity: t.continuity });
    writeRenderBody(sink, r, transitionsOf(readMeta(view, t.series), startNs, endNs), json);
    return r.pointsScanned;
  });
}

/** The series render body (both modes) of one render result; POST /v1/read/render writes the same per attribute. */
export function writeRenderBody(sink: BodySink, r: SignificantPoints | MinMaxBand, transitions: Transition[], json: boolean): void {
  if (r.mode === 'significant-points') {
    if (json) {
      sink.ascii('{"t_ms":'); jTimes(sink, r.tMs, r.count);
      sink.ascii(',"v":'); jArray(sink, r.v, r.count);
      sink.ascii(',"provenance":{"mode":"significant-points","percentGood":'); jNum(sink, r.percentGood);
      sink.ascii(`,"pointsScanned":${r.pointsScanned}},"transitions":`); jTransitions(sink, transitions);
      sink.ascii('}');
    } else {
      mpMapHeader(sink, 4);
      sink.bytes(mpKey('t_ms')); mArray(sink, r.tMs, r.count);
      sink.bytes(mpKey('v')); mArray(sink, r.v, r.count);
      sink.bytes(mpKey('provenance')); mpMapHeader(sink, 3);
      sink.bytes(mpKey('mode')); mpString(sink, 'significant-points');
      sink.bytes(mpKey('percentGood')); mNum(sink, r.percentGood);
      sink.bytes(mpKey('pointsScanned')); mpUint(sink, r.pointsScanned);
      sink.bytes(mpKey('transitions')); mTransitions(sink, transitions);
    }
    return;
  }
  const n = dataColumns(r.vMin), cols = columnScratch;
  if (json) {
    sink.ascii('{"t_ms":'); jColumnTimes(sink, r.tMs, cols, n);
    sink.ascii(',"v_min":'); jColumns(sink, r.vMin, cols, n);
    sink.ascii(',"v_max":'); jColumns(sink, r.vMax, cols, n);
    if (r.vStat) { sink.ascii(`,"stat":${JSON.stringify(r.stat)},"v_stat":`); jColumns(sink, r.vStat, cols, n); }
    sink.ascii(',"percent_good":'); jNum(sink, r.percentGood);
    sink.ascii(`,"points_scanned":${r.pointsScanned},"transitions":`); jTransitions(sink, transitions);
    sink.ascii('}');
  } else {
    mpMapHeader(sink, r.vStat ? 8 : 6);
    sink.bytes(mpKey('t_ms')); mColumns(sink, r.tMs, cols, n);
    sink.bytes(mpKey('v_min')); mColumns(sink, r.vMin, cols, n);
    sink.bytes(mpKey('v_max')); mColumns(sink, r.vMax, cols, n);
    if (r.vStat) { sink.bytes(mpKey('stat')); mpString(sink, r.stat ?? ''); sink.bytes(mpKey('v_stat')); mColumns(sink, r.vStat, cols, n); }
    sink.bytes(mpKey('percent_good')); mNum(sink, r.percentGood);
    sink.bytes(mpKey('points_scanned')); mpUint(sink, r.pointsScanned);
    sink.bytes(mpKey('transitions')); mTransitions(sink, transitions);
  }
}
