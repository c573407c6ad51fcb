// Functions over time, applied to a stepped series (an input, or a sub-expression
// evaluated at its own inputs' timestamps) at each evaluation instant t. With j the last
// point at or before t and a = t − window:
//   prev: the point before j; delta: v[j] − v[j−1]; rate: delta per second between them;
//   integral: ∫ over [a, t] of the stepped signal (value·seconds), from the first point if
//     the series starts after a; avg: that integral over the time covered (v[j] when none);
//   min / max: over the points in force during [a, t] (the one in force at a included);
//   time_since: seconds since the current true stretch began; 'condition-false' when false,
//     'lookback-exceeded' when it began before t − window.
// Quality is the worst of the points used; any undefined point used makes the result undefined.
// Windows slide forward only, so one pass with monotonic deques serves min, max and quality.
import type { TimeFn } from './plan-tree.js';
import { CONDITION_FALSE, LOOKBACK_EXCEEDED, NO_VALUE } from './reasons.js';

/** A stepped series: ts + shift are exact ns offsets from the grid's base (may be negative). */
export interface SteppedSeries {
  count: number;
  ts: Float64Array;
  shift: number;
  v: Float64Array;
  q: Uint32Array;
  /** Reason flags per point; 0 when defined. */
  r: Uint8Array;
}

export interface TimeOutput { v: Float64Array; q: Uint32Array; r: Uint8Array }

/** Scratch reused across calls; grown when a longer series comes. */
export class WindowScratch {
  prefix = new Float64Array(0);
  undefinedBefore = new Int32Array(0);
  dequeA = new Int32Array(0);
  dequeB = new Int32Array(0);
  runStart = new Int32Array(0);
  ensure(n: number): void {
    if (this.prefix.length >= n + 1) return;
    const size = Math.max(n + 1, this.prefix.length * 2);
    this.prefix = new Float64Array(size);
    this.undefinedBefore = new Int32Array(size);
    this.dequeA = new Int32Array(size);
    this.dequeB = new Int32Array(size);
    this.runStart = new Int32Array(size);
  }
}

function firstReason(s: SteppedSeries, lo: number, hi: number): number {
  for (let k = lo; k <= hi; k++) if (s.r[k] !== 0) return s.r[k];
  return 0;
}

export function applyTimeFunction(fn: TimeFn, windowNs: number, s: SteppedSeries, instants: Float64Array, from: number, count: number,
  out: TimeOutput, scratch: WindowScratch): void {
  const { ts, v, q, r, shift } = s;
  const m = s.count;
  scratch.ensure(m);
  if (fn === 'prev' || fn === 'delta' || fn === 'rate') {
    let j = -1;
    for (let i = 0; i < count; i++) {
      const t = instants[from + i] - shift;
      j += j + 1 < m && ts[j + 1] <= t ? 1 : 0;
      while (j + 1 < m && ts[j + 1] <= t) j++;
      if (j < 1) {
        out.v[i] = 0; out.q[i] = 0; out.r[i] = NO_VALUE;
        continue;
      }
      if (fn === 'prev') {
        out.v[i] = v[j - 1]; out.q[i] = q[j - 1]; out.r[i] = r[j - 1];
      } else {
        const d = v[j] - v[j - 1];
        out.v[i] = fn === 'delta' ? d : (d * 1e9) / (ts[j] - ts[j - 1]);
        out.q[i] = q[j] < q[j - 1] ? q[j] : q[j - 1];
        out.r[i] = r[j] | r[j - 1];
      }
    }
    return;
  }
  if (fn === 'time_since') {
    const start = scratch.runStart;
    for (let k = 0; k < m; k++) {
      const on = v[k] !== 0 && r[k] === 0;
      start[k] = !on ? -1 : k > 0 && start[k - 1] >= 0 ? start[k - 1] : k;
    }
    let j = -1;
    for (let i = 0; i < count; i++) {
      const t = instants[from + i] - shift;
      j += j + 1 < m && ts[j + 1] <= t ? 1 : 0;
      while (j + 1 < m && ts[j + 1] <= t) j++;
      out.v[i] = 0; out.q[i] = 0;
      if (j < 0) { out.r[i] = NO_VALUE; continue; }
      if (r[j] !== 0) { out.r[i] = r[j]; continue; }
      if (start[j] < 0) { out.r[i] = CONDITION_FALSE; continue; }
      const began = ts[start[j]];
      if (began < t - windowNs) { out.r[i] = LOOKBACK_EXCEEDED; continue; }
      out.v[i] = (t - began) / 1e9; out.q[i] = q[j]; out.r[i] = 0;
    }
    return;
  }
  // Windowed: integral, avg, min, max.
  const prefix = scratch.prefix;
  const undef = scratch.undefinedBefore;
  const extremum = fn === 'min' || fn === 'max';
  // One quality throughout (the usual case) needs no deque for the window's worst.
  let q0 = m > 0 ? q[0] : 0;
  for (let k = 1; k < m; k++) if (q[k] !== q0) { q0 = -1; break; }
  prefix[0] = 0; undef[0] = 0;
  for (let k = 0; k < m; k++) undef[k + 1] = undef[k] + (r[k] !== 0 ? 1 : 0);
  if (!extremum) for (let k = 0; k < m; k++) prefix[k + 1] = k + 1 < m ? prefix[k] + v[k] * (ts[k + 1] - ts[k]) : prefix[k];
  const dv = scratch.dequeA; // indices with monotonic values (min or max)
  const dq = scratch.dequeB; // indices with increasing quality (for the worst)
  let vh = 0, vt = 0, qh = 0, qt = 0;
  const isMax = fn === 'max';
  let j = -1; // last point at or before t
  let lo = 0; // first point in force during [t − window, t]
  let pushed = -1;
  for (let i = 0; i < count; i++) {
    const t = instants[from + i] - shift;
    const a = t - windowNs;
    j += j + 1 < m && ts[j + 1] <= t ? 1 : 0;
    while (j + 1 < m && ts[j + 1] <= t) j++;
    while (lo + 1 <= j && ts[lo + 1] <= a) lo++;
    if (j < 0) { out.v[i] = 0; out.q[i] = 0; out.r[i] = NO_VALUE; continue; }
    while (pushed < j) {
      pushed++;
      if (extremum) {
        const x = v[pushed];
        while (vt > vh && (isMax ? v[dv[vt - 1]] <= x : v[dv[vt - 1]] >= x)) vt--;
        dv[vt++] = pushed;
      }
      if (q0 < 0) {
        while (qt > qh && q[dq[qt - 1]] >= q[pushed]) qt--;
        dq[qt++] = pushed;
      }
    }
    if (extremum) while (dv[vh] < lo) vh++;
    if (q0 < 0) while (dq[qh] < lo) qh++;
    if (undef[j + 1] - undef[lo] > 0) { out.v[i] = 0; out.q[i] = 0; out.r[i] = firstReason(s, lo, j); continue; }
    out.q[i] = q0 < 0 ? q[dq[qh]] : q0;
    out.r[i] = 0;
    if (extremum) { out.v[i] = v[dv[vh]]; continue; }
    // ∫ from max(a, ts[0]) to t of the stepped signal, in value·ns.
    const begin = a > ts[0] ? a : ts[0];
    const atEnd = prefix[j] + v[j] * (t - ts[j]);
    const k = a > ts[0] ? lo : 0;
    const atBegin = prefix[k] + v[k] * (begin - ts[k]);
    const area = atEnd - atBegin;
    const covered = t - begin;
    out.v[i] = fn === 'integral' ? area / 1e9 : covered > 0 ? area / covered : v[j];
  }
}
