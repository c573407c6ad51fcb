// What the resolved point reads (POST /v1/read/snapshot, raw, at, sampled, as-of,
// raw-audit) hand a read worker, and the pieces their tasks share: the plan of attributes
// and segments the HTTP thread resolved (src/reads), the quality filter, exact unit
// conversion, the exact point just before an instant, the per-attribute provenance tally
// and a small msgpack writer for the envelopes. The tasks (tasks/read-*-task.ts) write the
// finished body into the worker's slab like every other read task.
import type { PointColumns, ValueType } from '../storage/encoding/chunk-types.js';
import { pointBefore, scanRange, seriesKey, valueAt, type DecodedChunks, type PointValue, type ReadView } from '../storage/series-store.js';
import { readMeta } from '../storage/series-store.js';
import { add, fromDouble, mul, parseRatio, toDouble, type Ratio } from '../exact-ratio.js';
import { ServiceError } from '../errors.js';
import type { BodySink } from '../body-sink.js';
import { stringifyJson } from '../json/json.js';
import { mpArrayHeader, mpBool, mpFloat64, mpInt64Big, mpMapHeader, mpNil, mpString } from './msgpack-bytes.js';
import type { BodyFormat } from './task-protocol.js';
import type { EnumMemberNames } from './enum-member-text.js';
import type { SeriesMeta } from '../storage/series-store.js';

export type ReadContinuity = 'continuous' | 'stepped' | 'event';
export type ExcludeQuality = 'bad' | 'bad_and_uncertain' | null;

export interface PlanSegment {
  series: string;
  /** Clipped to the window (decimal ns). */
  startNs: string;
  endNs: string;
  /** The binding's own bounds (decimal ns; to null while open): where the value before the window may come from. */
  boundFromNs: string;
  boundToNs: string | null;
  /** The series' stored type and enum set as the HTTP thread knew them (a series keeps both for life): a snapshot needs no meta read. */
  valueType?: ValueType;
  enumSetId?: string | null;
}

export interface PlanAttribute {
  attributeId: string;
  path: string;
  /** The unit answered (after conversion). */
  unitId: string | null;
  continuity: ReadContinuity;
  /** Exact ratios as text: v_out = v * factor + offset; null: values as stored. */
  convert: { factor: string; offset: string } | null;
  segments: PlanSegment[];
}

/** Members every resolved point task carries. */
export interface ResolvedTaskBase {
  attributes: PlanAttribute[];
  windowStartNs: string;
  windowEndNs: string;
  modelAsOfNs: string;
  /** The service clock when the request came (points stamped after it make clock_suspect). */
  nowNs: string;
  excludeQuality: ExcludeQuality;
  format: BodyFormat;
  /** Most points (or entries) the whole answer may hold; past it the read is refused (read-too-large). */
  maxPoints: number;
  /** Write the items only, without the enclosing array: the HTTP thread joins the bodies of a sliced read (split-tasks.ts). */
  fragment?: boolean;
  /** Member names by enum set id ({set: {ordinal: name}}) of the enum series read, from the registry (workers have no model database). */
  members?: Record<string, EnumMemberNames>;
}

/** An enum series' set and the names of its members: enum values are shaped {enum_set, ordinal, member}. */
export interface EnumRef { id: string | null; names: EnumMemberNames }
const NO_NAMES: EnumMemberNames = {};

/** The enum set of a series as its values are shaped (the task's member names; none known: member null). */
export function enumRefOf(members: Record<string, EnumMemberNames> | undefined, meta: SeriesMeta | undefined | { enumSetId: string | null }): EnumRef {
  const id = meta === undefined ? null : 'enumSetId' in meta ? meta.enumSetId : meta.enumSet?.id ?? null;
  return { id, names: (id !== null && members?.[id]) || NO_NAMES };
}

/** An enum value as the rows carry it: the set, the ordinal and the member's name (null when the set does not name it). */
export const enumValue = (e: EnumRef, ordinal: unknown) => ({ enum_set: e.id, ordinal, member: e.names[String(ordinal)] ?? null });

/** OPC DA quality classes (ARCHITECTURE.md): good >= 192, uncertain 64..191, bad < 64. */
export const GOOD = 192;
export const UNCERTAIN = 64;

/** Lowest quality a read keeps. */
export const minQuality = (x: ExcludeQuality): number => (x === 'bad' ? UNCERTAIN : x === 'bad_and_uncertain' ? GOOD : 0);

/** How far back the "value before an instant" looks past points the quality filter drops. */
export const PRIOR_WALK = 64;

export const tooLarge = (limit: number, what = 'points', field = 'max_points') => new ServiceError('read-too-large',
  `the read holds more than ${limit} ${what} (${field}); narrow the window or the selection, or raise ${field}`, { limit, field });

/** Exact unit conversion of one attribute: v * factor + offset, rounded once (the registry's arithmetic). */
export class ValueConverter {
  private readonly factor: Ratio;
  private readonly offset: Ratio;
  constructor(spec: { factor: string; offset: string }) {
    const f = parseRatio(spec.factor), o = parseRatio(spec.offset);
    if (f === null || o === null) throw new Error(`BUG: unit conversion ratios ${spec.factor}, ${spec.offset} do not parse`);
    this.factor = f;
    this.offset = o;
  }
  apply(v: number): number {
    if (!Number.isFinite(v)) return v;
    return toDouble(add(mul(fromDouble(v), this.factor), this.offset));
  }
}

export const converterOf = (a: PlanAttribute): ValueConverter | null => (a.convert === null ? null : new ValueConverter(a.convert));

/** A point's value as the body carries it: int64 as bigint, enum as {enum_set, ordinal}; converted values are numbers. */
export function outValue(cols: PointColumns, i: number, enumSet: EnumRef, conv: ValueConverter | null): unknown {
  if (conv !== null && (cols.type === 'float64' || cols.type === 'int64')) return conv.apply(cols.type === 'float64' ? cols.f64![i] : Number(cols.i64![i]));
  const v = valueAt(cols, i);
  return cols.type === 'enum' ? enumValue(enumSet, v) : v;
}

/** A point value as the engine hands it (valueAt), shaped for the body like outValue. */
export function shapeValue(v: PointValue, type: ValueType, enumSet: EnumRef, conv: ValueConverter | null): unknown {
  if (conv !== null && (type === 'float64' || type === 'int64')) return conv.apply(Number(v));
  return type === 'enum' ? enumValue(enumSet, v) : v;
}

export interface ExactPoint { ts: bigint; value: unknown; quality: number; numeric: number }

/** The stored point at exactly `ts` (value in out form), or null. */
export function pointAt(view: ReadView, key: Buffer, ts: bigint, enumSet: EnumRef, conv: ValueConverter | null, head?: PointColumns | null): ExactPoint | null {
  let out: ExactPoint | null = null;
  scanRange(view, key, ts, ts + 1n, (cols, i0) => {
    const numeric = cols.type === 'float64' ? cols.f64![i0] : cols.type === 'int64' ? Number(cols.i64![i0]) : cols.type === 'boolean' ? cols.u8![i0] : cols.type === 'enum' ? cols.ord![i0] : NaN;
    out = { ts, value: outValue(cols, i0, enumSet, conv), quality: cols.quality[i0], numeric: conv !== null ? conv.apply(numeric) : numeric };
    return false;
  }, undefined, head);
  return out;
}

/**
 * The latest point with time < t and >= floor whose quality the read keeps, looking back
 * past at most PRIOR_WALK dropped points; null when none.
 */
export function priorPoint(view: ReadView, key: Buffer, t: bigint, floor: bigint, keep: number, enumSet: EnumRef, conv: ValueConverter | null, memo?: DecodedChunks, head?: PointColumns | null): ExactPoint | null {
  let at = t;
  for (let step = 0; step <= PRIOR_WALK; step++) {
    const p = pointBefore(view, key, at, head, memo);
    if (p === null || p.ts < floor) return null;
    if (p.quality >= keep) return pointAt(view, key, p.ts, enumSet, conv, head);
    at = p.ts;
  }
  return null;
}

export const keyOf = (series: string): Buffer => seriesKey(series);

/**
 * Provenance of one attribute's answer, tallied as points go by. Time weights: each point
 * holds from its time to the next point's (or its segment's end); time before a segment's
 * first point has no quality and counts nowhere.
 */
export class ProvenanceTally {
  /** ns held by good points, by any point, and by points the quality filter dropped. */
  goodNs = 0;
  heldNs = 0;
  filteredNs = 0;
  clockSuspect = false;
  touched = false;
  readonly lossy: Array<{ start_ns: bigint; end_ns: bigint; tag: string }> = [];
  private prevT = -1;
  private prevQ = 0;
  private segStart = 0n;

  constructor(private readonly keep: number, private readonly nowNs: bigint) {}

  /** A segment begins: its lossy ranges (swinging door) are noted. `meta`: the series' record when the caller has read it (one LMDB get fewer per segment). */
  beginSegment(view: ReadView, series: string, startNs: bigint, endNs: bigint, meta: SeriesMeta | undefined = readMeta(view, series)): void {
    this.prevT = -1;
    this.segStart = startNs;
    if (!meta) return;
    this.touched = true;
    for (const r of meta.lossyRanges) {
      if (r.endNs > startNs && r.startNs < endNs) this.lossy.push({ start_ns: r.startNs > startNs ? r.startNs : startNs, end_ns: r.endNs < endNs ? r.endNs : endNs, tag: r.tag });
    }
  }

  /** Points i0..i1-1 of a run, all inside the segment. */
  run(cols: PointColumns, i0: number, i1: number): void {
    if (i1 <= i0) return;
    const shift = Number(cols.tsBase - this.segStart);
    const offs = cols.tsOffset, q = cols.quality;
    const floor = this.keep > GOOD ? this.keep : GOOD;
    let i = i0;
    if (this.prevT < 0) { this.prevT = shift + offs[i0]; this.prevQ = q[i0]; i = i0 + 1; }
    // Times are exact integers below 2^53 (a segment spans less than 104 days), so a stretch
    // held by good, kept points adds its span in one step, exactly what the per-point sums
    // give: the per-point loop was a tenth of a fleet raw read's worker time (2026-11-28).
    while (i < i1) {
      if (this.prevQ >= floor) {
        const j = firstBelow(q, i, i1, floor);
        // every interval up to point j starts at a good, kept point (the last one at j - 1)
        const end = j < i1 ? j : i1 - 1;
        const t = shift + offs[end];
        this.heldNs += t - this.prevT;
        this.goodNs += t - this.prevT;
        this.prevT = t;
        this.prevQ = q[end];
        i = end + 1;
      } else {
        const t = shift + offs[i];
        this.hold(t - this.prevT);
        this.prevT = t;
        this.prevQ = q[i];
        i++;
      }
    }
    if (cols.tsBase + BigInt(offs[i1 - 1]) > this.nowNs) this.clockSuspect = true;
  }

  endSegment(endNs: bigint): void {
    if (this.prevT >= 0) this.hold(Number(endNs - this.segStart) - this.prevT);
    this.prevT = -1;
  }

  private hold(ns: number): void {
    this.heldNs += ns;
    if (this.prevQ >= GOOD) this.goodNs += ns;
    if (this.prevQ < this.keep) this.filteredNs += ns;
  }

  /** The members this tally knows, over the window. */
  members(base: { windowStartNs: bigint; windowEndNs: bigint; modelAsOfNs: bigint; filtering: boolean }): Record<string, unknown> {
    const p: Record<string, unknown> = {
      window_resolved: { start_ns: base.windowStartNs, end_ns: base.windowEndNs },
      model_as_of_ns: base.modelAsOfNs,
    };
    if (this.heldNs > 0) p.percent_good = round6((100 * this.goodNs) / this.heldNs);
    if (base.filtering) p.percent_time_filtered = round6((100 * this.filteredNs) / Number(base.windowEndNs - base.windowStartNs));
    if (this.lossy.length > 0) p.lossy_ranges = this.lossy;
    if (this.clockSuspect) p.clock_suspect = true;
    if (this.touched) p.tiers_touched = ['hot'];
    return p;
  }
}

/** The first i in [i0, i1) with q[i] < floor, i1 when none. */
function firstBelow(q: Uint32Array, i0: number, i1: number, floor: number): number {
  let i = i0;
  while (i < i1 && q[i] >= floor) i++;
  return i;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** A small value of a body envelope as msgpack: null, boolean, number, bigint, string, arrays and plain objects. */
export function mpAny(sink: BodySink, v: unknown): void {
  if (v === null || v === undefined) { mpNil(sink); return; }
  switch (typeof v) {
    case 'boolean': mpBool(sink, v); return;
    case 'bigint': mpInt64Big(sink, v); return;
    case 'number':
      if (Number.isSafeInteger(v)) mpInt64Big(sink, BigInt(v)); else mpFloat64(sink, v);
      return;
    case 'string': mpString(sink, v); return;
  }
  if (Array.isArray(v)) {
    mpArrayHeader(sink, v.length);
    for (const x of v) mpAny(sink, x);
    return;
  }
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
  mpMapHeader(sink, entries.length);
  for (const [k, x] of entries) { mpString(sink, k); mpAny(sink, x); }
}

/** A whole body of plain values in the task's format. */
export function writeBody(sink: BodySink, format: BodyFormat, body: unknown): void {
  if (format === 'msgpack') mpAny(sink, body);
  else sink.utf8(stringifyJson(body));
}

/** The answer's items: a whole array body, or with `fragment` the items alone (JSON: comma-separated, msgpack: one after another). */
export function writeItems(sink: BodySink, format: BodyFormat, items: unknown[], fragment: boolean | undefined): void {
  if (!fragment) { writeBody(sink, format, items); return; }
  if (format === 'msgpack') { for (const it of items) mpAny(sink, it); return; }
  for (let i = 0; i < items.length; i++) {
    if (i > 0) sink.ascii(',');
    sink.utf8(stringifyJson(items[i]));
  }
}

export type { PointValue, ValueType };
