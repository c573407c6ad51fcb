// One window of a backfill: the rule evaluated over [from, to) on one asset, compared
// instant by instant with what the output series holds there. The preview counts points
// added (no stored point at the instant), changed (a different value or quality) and
// unchanged; commit writes the added ones (fill-gaps) or the added and changed ones
// (recalculate; the storage supersedes the old values and keeps them in its audit).
import type { ReadView, PointBatch } from '../storage/series-store.js';
import type { PointColumns } from '../storage/encoding/chunk-types.js';
import { evaluateWindow, type Target } from './window-eval.js';
import { readInput, type EvaluationScratch } from './input-read.js';

export interface WindowDiff {
  added: number;
  changed: number;
  unchanged: number;
  /** The points to write in this mode (null: none). */
  batch: PointBatch | null;
  /** A few differences for the preview's sample. */
  sample: Array<{ ts: bigint; old: number | boolean | null; new: number | boolean }>;
}

function valueOf(c: PointColumns, i: number): number {
  return c.f64 ? c.f64[i] : c.i64 ? Number(c.i64[i]) : c.u8 ? c.u8[i] : c.ord ? c.ord[i] : NaN;
}

function batchValue(b: PointBatch, k: number): number {
  const v = b.values as Float64Array | BigInt64Array | Uint8Array | Int32Array;
  return typeof v[k] === 'bigint' ? Number(v[k]) : (v[k] as number);
}

function pick(b: PointBatch, idx: Int32Array, n: number): PointBatch | null {
  if (n === 0) return null;
  const times = new BigInt64Array(n), quality = new Uint32Array(n);
  const src = b.values as Float64Array | BigInt64Array | Uint8Array | Int32Array;
  const values = new (src.constructor as { new(n: number): typeof src })(n);
  for (let k = 0; k < n; k++) {
    const i = idx[k];
    times[k] = (b.times as BigInt64Array)[i];
    quality[k] = (b.quality as Uint32Array)[i];
    (values as unknown as Array<number | bigint>)[k] = src[i];
  }
  return { series: b.series, times, values, quality };
}

export function diffWindow(view: ReadView, t: Target, from: bigint, to: bigint, mode: 'fill-gaps' | 'recalculate', sampleRoom: number, scratch?: EvaluationScratch): WindowDiff {
  const o = evaluateWindow(view, t, from, to, { trace: false, triggerName: 'backfill', ignoreBlock: true, scratch });
  const out: WindowDiff = { added: 0, changed: 0, unchanged: 0, batch: null, sample: [] };
  const b = o.batch;
  if (!b) return out;
  const have = readInput(view, t.outputSeries, from, to, 0, scratch?.output);
  // Stored and new instants compared as exact offsets from `from` (numbers, no BigInt per point).
  const shift = Number(have.tsBase - from);
  const off = o.offsets;
  const times = b.times as BigInt64Array;
  const quality = b.quality as Uint32Array;
  const n = off.length;
  const write = new Int32Array(n);
  let w = 0, j = 0;
  const isBool = t.outputType === 'boolean';
  for (let k = 0; k < n; k++) {
    const at = off[k];
    while (j < have.count && have.tsOffset[j] + shift < at) j++;
    const exists = j < have.count && have.tsOffset[j] + shift === at;
    if (!exists) {
      out.added++;
      write[w++] = k;
      if (out.sample.length < sampleRoom) { const nv = batchValue(b, k); out.sample.push({ ts: times[k], old: null, new: isBool ? nv !== 0 : nv }); }
      continue;
    }
    if (mode === 'fill-gaps') { out.unchanged++; continue; }
    const ov = valueOf(have, j), nv = batchValue(b, k);
    if ((ov === nv || (Number.isNaN(ov) && Number.isNaN(nv))) && have.quality[j] === quality[k]) { out.unchanged++; continue; }
    out.changed++;
    write[w++] = k;
    if (out.sample.length < sampleRoom) out.sample.push({ ts: times[k], old: isBool ? ov !== 0 : ov, new: isBool ? nv !== 0 : nv });
  }
  out.batch = w === n ? b : pick(b, write, w);
  return out;
}
