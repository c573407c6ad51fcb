// The resolved snapshot answered on the HTTP thread from the latest-point table
// (storage/latest-table.ts): per attribute, the slot of the series its binding puts behind it
// at the instant. The answer is the task's (workers/tasks/read-snapshot-task.ts) by the same
// rule, written by the same item writers, so the two paths give the same bytes:
//   - no binding at the instant: null, without tiers_touched;
//   - the series holds no point (NONE), or its latest is older than the binding: null;
//   - its latest lies inside the binding (and at or before as_of_ns) and passes the quality
//     filter: that point;
//   - otherwise (slot UNKNOWN, a latest past the binding's end or as_of_ns,
//     or one the filter drops, whose answer is an older point): the attribute is left for
//     the read pool, which reads storage and fills the slot.
//
//   answerFromLatest(table, r, units, o, out, from, to): fills out.points / out.pending
//   writeSnapshotBody(sink, r, units, o, answers): the array body; a JSON item answered from
//     the table is written straight into the sink (its attribute's fixed text kept as bytes
//     between reads), with no string per item
import type { ExcludeQuality } from '../workers/resolved-points.js';
import { ValueConverter, enumRefOf, minQuality, shapeValue } from '../workers/resolved-points.js';
import { snapshotBaseText, snapshotItemObject, type SnapshotItemPoint } from '../workers/tasks/read-snapshot-task.js';
import { mpAny } from '../workers/resolved-points.js';
import { mpArrayHeader } from '../workers/msgpack-bytes.js';
import { stringifyJson } from '../json/json.js';
import type { BodySink } from '../body-sink.js';
import { INT64_MAX, NONE, POINT, UNKNOWN, type LatestRead, type LatestTable } from '../storage/series-store.js';
import type { EnumMemberNames } from '../series/enum-members.js';
import type { ReadResolution } from './read-resolution.js';
import { answeredUnit, type UnitPlan } from './read-units.js';
import type { SnapshotPlan } from './snapshot-plan.js';
import { putNine, putUint31, putUint53 } from '../json/fast-digits.js';
import { putLiveDouble } from './live/live-format.js';

export interface LatestAnswerOptions {
  excludeQuality: ExcludeQuality;
  /** resolve.as_of_ns: points after it do not count; null: the latest. */
  upToNs: bigint | null;
  /** The service clock at the request (a later point is clock_suspect). */
  nowNs: bigint;
  format: 'json' | 'msgpack';
  members: Record<string, EnumMemberNames> | undefined;
}

export interface LatestAnswers {
  /** Per attribute in resolution order, answered from the table: its point (null: none); undefined when pending. */
  points: Array<SnapshotItemPoint | null | undefined>;
  /** Per attribute: 1 when a binding covers the instant (the item says tiers_touched). */
  bound: Uint8Array;
  /** The items of the pending attributes once read from storage: JSON text or plain values (this thread), or the read pool's item bytes. */
  items: Array<string | Record<string, unknown> | Uint8Array | undefined>;
  /** Indexes of the attributes the table cannot answer. */
  pending: number[];
}

export function latestAnswers(n: number): LatestAnswers {
  return { points: new Array(n), bound: new Uint8Array(n), items: new Array(n), pending: [] };
}

/** Attributes answered between two turns of the event loop (10,000 take a few ms). */
export const ANSWER_SLICE = 5_000;

/** Answers the attributes [from, to) of `r` into `out` (see the file header). */
export function answerFromLatest(table: LatestTable, r: ReadResolution, units: Map<string, UnitPlan>, o: LatestAnswerOptions, out: LatestAnswers, from: number, to: number): void {
  const keep = minQuality(o.excludeQuality);
  const upTo = o.upToNs === null ? null : o.upToNs + 1n;
  const slot: LatestRead = { state: UNKNOWN, seq: 0, ts: 0n, value: 0, quality: 0 };
  for (let k = from; k < to; k++) {
    const a = r.attributes[k];
    // as the plan does (read-plan.ts): a segment whose series has no storage record is skipped
    let seg = null;
    for (let i = a.segments.length - 1; i >= 0; i--) if (a.segments[i].valueType !== null) { seg = a.segments[i]; break; }
    if (seg === null) { out.points[k] = null; continue; }
    const u = units.size === 0 ? undefined : units.get(a.attributeId);
    const type = seg.valueType!;
    table.read(seg.seriesId, slot);
    let p: SnapshotItemPoint | null;
    if (slot.state === NONE) p = null;
    else if (slot.state !== POINT) { out.pending.push(k); continue; }
    else {
      let end = seg.boundToNs === null ? INT64_MAX : seg.boundToNs;
      if (upTo !== null && upTo < end) end = upTo;
      if (slot.ts < seg.boundFromNs) p = null;
      else if (slot.ts < end && slot.quality >= keep) {
        const conv = u === undefined || u.identity ? null : new ValueConverter({ factor: u.factor, offset: u.offset });
        p = { ts: slot.ts, value: type === 'float64' && conv === null ? slot.value : shapeValue(slot.value, type, enumRefOf(o.members, { enumSetId: seg.enumSetId }), conv), quality: slot.quality };
      } else { out.pending.push(k); continue; }
    }
    out.points[k] = p;
    out.bound[k] = 1;
  }
}

/**
 * Each attribute's fixed text, `{"attribute_id":…,"path":…,"unit_id":…,"snapshot":`, as
 * UTF-8, kept between reads while its path and unit stay the same.
 */
const heads = new Map<string, { path: string; unitId: string | null; bytes: Uint8Array }>();
const HEADS_KEPT = 1_000_000;

function headOf(attributeId: string, path: string, unitId: string | null): Uint8Array {
  const h = heads.get(attributeId);
  if (h !== undefined && h.path === path && h.unitId === unitId) return h.bytes;
  const bytes = Buffer.from(`{"attribute_id":"${attributeId}","path":${JSON.stringify(path)},"unit_id":${unitId === null ? 'null' : `"${unitId}"`},"snapshot":`, 'utf8');
  if (heads.size >= HEADS_KEPT) heads.clear();
  heads.set(attributeId, { path, unitId, bytes });
  return bytes;
}

/** A value as stringifyJson writes it, without a writer per value for the common kinds. */
function valueText(v: unknown): string {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return JSON.stringify(v);
  return stringifyJson(v);
}

/** The whole array body: the table's answers and the pending items, in resolution order. */
export function writeSnapshotBody(sink: BodySink, r: ReadResolution, units: Map<string, UnitPlan>, o: LatestAnswerOptions, answers: LatestAnswers): void {
  const n = r.attributes.length;
  if (o.format === 'msgpack') {
    const base = { window_resolved: { start_ns: r.window.startNs, end_ns: r.window.endNs }, model_as_of_ns: r.modelAsOfNs };
    mpArrayHeader(sink, n);
    for (let k = 0; k < n; k++) {
      const it = answers.items[k];
      if (it instanceof Uint8Array) { sink.bytes(it); continue; }
      if (it !== undefined) { mpAny(sink, it); continue; }
      const a = r.attributes[k];
      mpAny(sink, snapshotItemObject({ attributeId: a.attributeId, path: a.path, unitId: answeredUnit(a, units) }, answers.points[k] ?? null, answers.bound[k] === 1, base, o.nowNs));
    }
    return;
  }
  const baseText = Buffer.from(`,${snapshotBaseText(String(r.window.startNs), String(r.window.endNs), String(r.modelAsOfNs))}`, 'utf8');
  sink.ascii('[');
  for (let k = 0; k < n; k++) {
    if (k > 0) sink.byte(0x2c);
    const it = answers.items[k];
    if (it instanceof Uint8Array) { sink.bytes(it); continue; }
    if (typeof it === 'string') { sink.utf8(it); continue; }
    const a = r.attributes[k];
    sink.bytes(headOf(a.attributeId, a.path, answeredUnit(a, units)));
    const p = answers.points[k];
    if (p === null || p === undefined) sink.ascii('null');
    else {
      sink.ascii(`{"ts_ns":${p.ts},"value":`);
      sink.utf8(valueText(p.value));
      sink.ascii(`,"quality":${p.quality}}`);
    }
    sink.bytes(baseText);
    if (answers.bound[k] === 1) sink.ascii(',"tiers_touched":["hot"]');
    if (p !== null && p !== undefined && p.ts > o.nowNs) sink.ascii(',"clock_suspect":true');
    sink.ascii('}}');
  }
  sink.ascii(']');
}

// ---- the snapshot of a kept plan (snapshot-plan.ts): slots read into typed arrays, the body written from them

/** What an attribute of a plan answers: left for storage, unbound (null, no tiers), bound without a point (null), its point. */
export const PENDING = 0, UNBOUND = 1, EMPTY = 2, ANSWERED = 3;

export interface PlanAnswers {
  /** Per attribute: PENDING, UNBOUND, EMPTY or ANSWERED. */
  state: Uint8Array;
  /** Per attribute [ts lo, ts hi, value lo, value hi] (LatestTable.readAt); `ts` and `f64` view them. */
  words: Int32Array;
  ts: BigInt64Array;
  f64: Float64Array;
  quality: Uint32Array;
  /** String values (their slots are read whole). */
  text: Array<string | undefined>;
  /** As LatestAnswers: the pending attributes and their items once read from storage. */
  pending: number[];
  items: Array<string | Record<string, unknown> | Uint8Array | undefined>;
}

export function planAnswers(n: number): PlanAnswers {
  const words = new Int32Array(4 * n);
  return {
    state: new Uint8Array(n), words, ts: new BigInt64Array(words.buffer), f64: new Float64Array(words.buffer), quality: new Uint32Array(n),
    text: [], pending: [], items: new Array(n),
  };
}

/**
 * Answers of a plan's size to use again (PlanAnswers.state, words and quality are written
 * for every attribute before they are read; the pending items are cleared here). A 10,000-
 * attribute snapshot's arrays are ~300 KB, above malloc's mmap threshold: fresh pages,
 * zeroed and faulted in on every read.
 */
export function clearedAnswers(a: PlanAnswers): PlanAnswers {
  for (const k of a.pending) a.items[k] = undefined;
  a.pending.length = 0;
  a.text.length = 0;
  return a;
}

/** a < b for int64 values given as words (lo, hi). */
const below = (aLo: number, aHi: number, bLo: number, bHi: number): boolean => aHi < bHi || (aHi === bHi && (aLo >>> 0) < (bLo >>> 0));

/**
 * Pass 1: the plan's attributes [from, to) read from the table into `out`, by the rules of
 * the file header (as answerFromLatest, without as_of_ns or units: a plan has neither).
 */
export function answerFromPlan(table: LatestTable, plan: SnapshotPlan, excludeQuality: ExcludeQuality, out: PlanAnswers, from: number, to: number): void {
  const keep = minQuality(excludeQuality);
  const { series, types, slots, bounds } = plan;
  const { state, words, quality } = out;
  let slot: LatestRead | null = null;
  for (let k = from; k < to; k++) {
    const id = series[k];
    if (id === null) { state[k] = UNBOUND; continue; }
    let base = slots[k];
    if (base < 0) {
      base = table.slotOf(id, false);
      if (base < 0) { state[k] = PENDING; out.pending.push(k); continue; }
      slots[k] = base;
    }
    let st: number;
    if (types[k] === 'string') {
      slot ??= { state: UNKNOWN, seq: 0, ts: 0n, value: 0, quality: 0 };
      st = table.read(id, slot).state;
      if (st === POINT) { out.ts[2 * k] = slot.ts; quality[k] = slot.quality; out.text[k] = slot.value as string; }
    } else st = table.readAt(base, words, quality, k);
    if (st === NONE) { state[k] = EMPTY; continue; }
    const w = 4 * k;
    if (st !== POINT) { state[k] = PENDING; out.pending.push(k); continue; }
    if (below(words[w], words[w + 1], bounds[w], bounds[w + 1])) { state[k] = EMPTY; continue; }
    if (below(words[w], words[w + 1], bounds[w + 2], bounds[w + 3]) && quality[k] >= keep) state[k] = ANSWERED;
    else { state[k] = PENDING; out.pending.push(k); }
  }
}

const UTF8 = (s: string) => Buffer.from(s, 'utf8');
const VALUE = UTF8(',"value":'), QUALITY = UTF8(',"quality":'), NULL = UTF8('null');
const SUSPECT = UTF8(',"clock_suspect":true'), TRUE = UTF8('true'), FALSE = UTF8('false');
/** Room for a point's ts, a number value and its quality, with their keys. */
const POINT_ROOM = 128;

/** Copies `b` to buf[p..] and returns the position after it (a loop: TypedArray.set costs more below ~64 bytes). */
function copy(buf: Uint8Array, p: number, b: Uint8Array): number {
  if (b.length > 64) { buf.set(b, p); return p + b.length; }
  for (let i = 0; i < b.length; i++) buf[p++] = b[i];
  return p;
}

/**
 * An int64 given as words (lo, hi) in decimal at buf[p..] (at most 20 bytes), as BigInt's
 * toString writes it, without a BigInt: its 16-bit limbs divided by 10^9 in doubles (every
 * step below 2^53), then the raw reads' digit writers (src/json/fast-digits.ts). Negative values (never a timestamp here) go
 * through BigInt.
 */
function int64Digits(buf: Uint8Array, p: number, lo: number, hi: number): number {
  if (hi < 0) {
    const text = String((BigInt(hi) << 32n) | BigInt(lo >>> 0));
    for (let i = 0; i < text.length; i++) buf[p++] = text.charCodeAt(i);
    return p;
  }
  const l = lo >>> 0;
  let x = hi;
  const q1 = Math.floor(x / 1e9);
  let r = x - q1 * 1e9;
  x = r * 65536 + (l >>> 16);
  const q2 = Math.floor(x / 1e9); r = x - q2 * 1e9;
  x = r * 65536 + (l & 0xffff);
  const q3 = Math.floor(x / 1e9); r = x - q3 * 1e9;
  // value = q * 10^9 + r, q < 2^63 / 10^9 < 10^10
  const q = (q1 * 65536 + q2) * 65536 + q3;
  return q === 0 ? putUint31(buf, p, r) : putNine(buf, putUint53(buf, p, q), r);
}

/** Pass 2: the whole body of a plan's snapshot at `nowNs` (the window, the model instant and the clock_suspect bound). */
export function writePlanBody(sink: BodySink, plan: SnapshotPlan, nowNs: bigint, format: 'json' | 'msgpack', answers: PlanAnswers): void {
  const n = plan.n;
  const { state, words, quality, items } = answers;
  if (format === 'msgpack') {
    const base = { window_resolved: { start_ns: nowNs, end_ns: nowNs + 1n }, model_as_of_ns: nowNs };
    const attributes = plan.resolution.attributes;
    mpArrayHeader(sink, n);
    for (let k = 0; k < n; k++) {
      const it = items[k];
      if (it instanceof Uint8Array) { sink.bytes(it); continue; }
      if (it !== undefined) { mpAny(sink, it); continue; }
      const a = attributes[k];
      const p = state[k] === ANSWERED ? { ts: answers.ts[2 * k], value: planValue(plan, answers, k), quality: quality[k] } : null;
      mpAny(sink, snapshotItemObject({ attributeId: a.attributeId, path: a.path, unitId: a.unitId }, p, state[k] !== UNBOUND, base, nowNs));
    }
    return;
  }
  const now = String(nowNs);
  // an item's tail after its point: the provenance, tiers_touched when bound, and the closing braces
  const baseText = `,${snapshotBaseText(now, String(nowNs + 1n), now)}`;
  const boundTail = UTF8(`${baseText},"tiers_touched":["hot"]}}`), unboundTail = UTF8(`${baseText}}}`);
  const nowWords = new Int32Array(new BigInt64Array([nowNs]).buffer);
  const { heads, types } = plan;
  const f64 = answers.f64;
  sink.reserve(1);
  sink.byte(0x5b);
  for (let k = 0; k < n; k++) {
    const it = items[k];
    if (it !== undefined) {
      sink.reserve(1);
      if (k > 0) sink.byte(0x2c);
      if (it instanceof Uint8Array) sink.bytes(it); else sink.utf8(it as string);
      continue;
    }
    const head = heads[k];
    sink.reserve(head.length + POINT_ROOM + boundTail.length + SUSPECT.length);
    let buf = sink.buf;
    let p = sink.pos;
    if (k > 0) buf[p++] = 0x2c;
    p = copy(buf, p, head);
    const s = state[k];
    const w = 4 * k;
    if (s === ANSWERED) {
      // {"ts_ns":
      buf[p++] = 0x7b; buf[p++] = 0x22; buf[p++] = 0x74; buf[p++] = 0x73; buf[p++] = 0x5f; buf[p++] = 0x6e; buf[p++] = 0x73; buf[p++] = 0x22; buf[p++] = 0x3a;
      p = int64Digits(buf, p, words[w], words[w + 1]);
      p = copy(buf, p, VALUE);
      const type = types[k];
      if (type === 'float64') {
        // the digits written here when String(v) would print them (integers, up to six
        // decimals): String(v) was a fifth of a 1,000-attribute body's writing (profile, 2026-11-28)
        const v = f64[2 * k + 1];
        const q = putLiveDouble(buf, p, v);
        if (q >= 0) p = q;
        else {
          const text = Number.isFinite(v) ? String(v) : stringifyJson(v);
          for (let i = 0; i < text.length; i++) buf[p++] = text.charCodeAt(i);
        }
      } else if (type === 'int64') p = int64Digits(buf, p, words[w + 2], words[w + 3]);
      else if (type === 'boolean') p = copy(buf, p, f64[2 * k + 1] !== 0 ? TRUE : FALSE);
      else if (type === 'enum') {
        const text = plan.enumText(k, f64[2 * k + 1]);
        sink.pos = p;
        sink.reserve(text.length + POINT_ROOM + boundTail.length + SUSPECT.length);
        buf = sink.buf; p = copy(buf, sink.pos, text);
      } else {
        // string values: text of any length
        sink.pos = p;
        sink.utf8(valueText(planValue(plan, answers, k)));
        sink.reserve(POINT_ROOM + boundTail.length + SUSPECT.length);
        buf = sink.buf; p = sink.pos;
      }
      p = copy(buf, p, QUALITY);
      p = putUint53(buf, p, quality[k]);
      buf[p++] = 0x7d;
    } else p = copy(buf, p, NULL);
    if (s === ANSWERED && below(nowWords[0], nowWords[1], words[w], words[w + 1])) {
      // clock_suspect follows tiers_touched: the tail without its braces, then the flag
      p = copy(buf, p, boundTail.subarray(0, boundTail.length - 2));
      p = copy(buf, p, SUSPECT);
      buf[p++] = 0x7d; buf[p++] = 0x7d;
    } else {
      const tail = s === UNBOUND ? unboundTail : boundTail;
      buf.set(tail, p);
      p += tail.length;
    }
    sink.pos = p;
  }
  sink.reserve(1);
  sink.byte(0x5d);
}

/** An answered attribute's value as the item carries it (as answerFromLatest shapes it). */
function planValue(plan: SnapshotPlan, answers: PlanAnswers, k: number): unknown {
  const type = plan.types[k];
  if (type === 'string') return answers.text[k];
  const v = answers.f64[2 * k + 1];
  if (type === 'float64') return v;
  if (type === 'int64') return answers.ts[2 * k + 1];
  if (type === 'boolean') return v !== 0;
  return shapeValue(v, 'enum', plan.enumRefs[k]!, null);
}
