// Timestamp column: exact nanosecond offsets from the chunk's first time.
//
// Collectors sample on a period with a little jitter (the shared dataset: 1 s or 0.1 s
// with 0..7 ms), so offsets are (a) all multiples of a unit far coarser than 1 ns and
// (b) close to a straight line. The encoder divides by the greatest common divisor of
// the offsets (the unit), estimates the period P in units, and hands the residuals
// r_i = u_i - i*P to the integer column. Within a 128-point block the residuals span only
// the jitter (8 values: 3 bits per point), where plain delta-of-delta spans 29 values
// (5 bits) and deltas 15 values (4 bits); measured on the dataset in bench/codec.ts.
// Irregular series fall back inside the integer column to FOR over differences, which
// does not depend on P. Chunks holding a collector gap use slots (encodeSlots). Offsets at or above 2^51 units (chunks spanning more than ~26
// days at 1 ns resolution, which the engine never builds) use plain delta varints.

import { ChunkReader, ChunkWriter } from './byte-io.js';
import { encodeIntColumn } from './int-column.js';
import { decodeGridColumn, decodeIntColumn } from './int-column-decode.js';
import { IntColumnIndex } from './int-column-range.js';
import { scratchColumn, ScratchSlot } from './scratch.js';

const TimeMode = { Grid: 0, DeltaVarint: 1, Slots: 2 } as const;
const GRID_LIMIT = 2 ** 51;
const PERIOD_SAMPLES = 63;

function gcd(a: number, b: number): number {
  while (b !== 0) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/** The sampling period in units: a sampled median, refined by the mean of the deltas near it. */
function estimatePeriod(u: Float64Array, n: number): number {
  if (n < 2) return 0;
  const step = Math.max(1, Math.floor((n - 1) / PERIOD_SAMPLES));
  const sample = new Float64Array(Math.ceil((n - 1) / step));
  let m = 0;
  for (let i = 1; i < n && m < sample.length; i += step) sample[m++] = u[i] - u[i - 1];
  const sorted = sample.subarray(0, m).sort();
  const rough = sorted[m >> 1];
  // Averaging the deltas near the rough period telescopes the jitter away; skipping the
  // far ones keeps gaps and bursts from pulling the estimate.
  let sum = 0;
  let count = 0;
  for (let i = 1; i < n; i++) {
    const d = u[i] - u[i - 1];
    if (d >= rough * 0.5 && d <= rough * 1.5) {
      sum += d;
      count++;
    }
  }
  return count === 0 ? rough : Math.round(sum / count);
}

/** Writes offsets o[0..n), o[0] = 0, strictly increasing exact integers below 2^53. Returns the unit. */
export function encodeTimes(w: ChunkWriter, o: Float64Array, n: number): number {
  let unit = 0;
  for (let i = 1; i < n; i++) unit = gcd(o[i], unit);
  if (unit === 0) unit = 1;
  const u = scratchColumn(ScratchSlot.TimeUnits, n);
  for (let i = 0; i < n; i++) u[i] = o[i] / unit;
  if (u[n - 1] >= GRID_LIMIT) {
    w.u8(TimeMode.DeltaVarint);
    w.varint(unit);
    for (let i = 1; i < n; i++) w.varint(u[i] - u[i - 1]);
    return unit;
  }
  let period = estimatePeriod(u, n);
  if (period * (n - 1) >= GRID_LIMIT) period = 0;
  if (period > 0 && encodeSlots(w, u, n, unit, period)) return unit;
  for (let i = 0; i < n; i++) u[i] -= i * period;
  w.u8(TimeMode.Grid);
  w.varint(unit);
  w.varint(period);
  encodeIntColumn(w, u, n);
  return unit;
}

/**
 * A regular series with collector gaps: each point's slot n_i = round(u_i / P) and its
 * residual u_i - n_i*P; the skipped slots n_i - i form a step function (a run per gap),
 * so a gap costs a few bytes instead of widening its whole 128-point block of residuals.
 * Used only when the chunk has a gap and every residual is within P/4 (jitter, not an
 * irregular series); returns false (nothing written) otherwise.
 */
function encodeSlots(w: ChunkWriter, u: Float64Array, n: number, unit: number, period: number): boolean {
  const skips = scratchColumn(ScratchSlot.TimeSkips, n);
  const resid = scratchColumn(ScratchSlot.TimeResiduals, n);
  const limit = period / 4;
  let gaps = false;
  for (let i = 0; i < n; i++) {
    const slot = Math.round(u[i] / period);
    const q = u[i] - slot * period;
    if (Math.abs(q) > limit) return false;
    skips[i] = slot - i;
    resid[i] = q;
    if (skips[i] !== 0) gaps = true;
  }
  if (!gaps) return false;
  w.u8(TimeMode.Slots);
  w.varint(unit);
  w.varint(period);
  encodeIntColumn(w, skips, n);
  encodeIntColumn(w, resid, n);
  return true;
}

/** Fills out[0..n) with the offsets from the chunk's first time. */
export function decodeTimes(r: ChunkReader, n: number, out: Float64Array): void {
  const mode = r.u8('time column mode');
  const unit = r.varint('time unit');
  if (unit === 0) r.fail('time unit 0');
  if (mode === TimeMode.DeltaVarint) {
    let acc = 0;
    out[0] = 0;
    for (let i = 1; i < n; i++) {
      acc += r.varint('time delta') * unit;
      out[i] = acc;
    }
    return;
  }
  if (mode !== TimeMode.Grid && mode !== TimeMode.Slots) r.fail(`unknown time column mode ${mode}`);
  const period = r.varint('time period');
  if (mode === TimeMode.Grid) {
    decodeGridColumn(r, n, out, period, unit);
    return;
  }
  const skips = scratchColumn(ScratchSlot.TimeSkips, n);
  decodeIntColumn(r, n, skips);
  // (q_i + i*P)*unit + (n_i - i)*P*unit = u_i*unit: integers below 2^53 throughout.
  decodeGridColumn(r, n, out, period, unit);
  const step = period * unit;
  for (let i = 0; i < n; i++) out[i] += skips[i] * step;
}

/**
 * Random access into a time column for render: parse() reads its layout once per chunk,
 * then range() and at() give offsets of some points, knowing the offset of a point
 * `anchor` at or before them (the chunk summary's group first time). GRID and SLOTS
 * columns decode only the blocks involved; DELTA_VARINT chunks (spans of more than
 * ~26 days at 1 ns, never built by the engine) are decoded whole at parse().
 */
export class TimeColumnIndex {
  private mode = 0;
  private unit = 1;
  private period = 0;
  private readonly residuals = new IntColumnIndex();
  private readonly skips = new IntColumnIndex();
  private all = new Float64Array(0);
  private readonly one = new Float64Array(1);

  parse(r: ChunkReader, n: number): void {
    const mode = r.u8('time column mode');
    const unit = r.varint('time unit');
    if (unit === 0) r.fail('time unit 0');
    this.mode = mode;
    this.unit = unit;
    if (mode === TimeMode.DeltaVarint) {
      if (this.all.length < n) this.all = new Float64Array(n);
      let acc = 0;
      this.all[0] = 0;
      for (let i = 1; i < n; i++) {
        acc += r.varint('time delta');
        this.all[i] = acc * unit;
      }
      return;
    }
    if (mode !== TimeMode.Grid && mode !== TimeMode.Slots) r.fail(`unknown time column mode ${mode}`);
    this.period = r.varint('time period');
    if (mode === TimeMode.Slots) {
      if (this.period === 0) r.fail('slot period 0');
      this.skips.parse(r, n);
    }
    this.residuals.parse(r, n);
  }

  /** Whether at() needs no anchor: no column of the layout is FOR_DELTA. */
  get anchorFree(): boolean {
    if (this.mode === TimeMode.DeltaVarint) return true;
    return this.residuals.anchorFree && (this.mode === TimeMode.Grid || this.skips.anchorFree);
  }

  /** out[j - from] = offset of point j, for j in [from, to). */
  range(from: number, to: number, out: Float64Array, anchor: number, anchorOffset: number): void {
    const len = to - from, unit = this.unit, P = this.period, uA = anchorOffset / unit;
    if (this.mode === TimeMode.DeltaVarint) {
      for (let j = 0; j < len; j++) out[j] = this.all[from + j];
    } else if (this.mode === TimeMode.Grid) {
      this.residuals.range(from, to, out, anchor, uA - anchor * P);
      for (let j = 0; j < len; j++) out[j] = (out[j] + (from + j) * P) * unit;
    } else {
      const slot = Math.round(uA / P);
      const skips = scratchColumn(ScratchSlot.TimeSkips, len);
      this.skips.range(from, to, skips, anchor, slot - anchor);
      this.residuals.range(from, to, out, anchor, uA - slot * P);
      for (let j = 0; j < len; j++) out[j] = (out[j] + (from + j + skips[j]) * P) * unit;
    }
  }

  at(i: number, anchor: number, anchorOffset: number): number {
    const unit = this.unit, P = this.period, uA = anchorOffset / unit;
    if (this.mode === TimeMode.DeltaVarint) return this.all[i];
    if (this.mode === TimeMode.Grid) return (this.residuals.at(i, anchor, uA - anchor * P) + i * P) * unit;
    const slot = Math.round(uA / P);
    const skip = this.skips.at(i, anchor, slot - anchor);
    return (this.residuals.at(i, anchor, uA - slot * P) + (i + skip) * P) * unit;
  }
}
