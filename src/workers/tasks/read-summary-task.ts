// POST /v1/read/summary in a worker: per attribute, the engine's summarizePieces over its
// segments (stitched across a sensor swap), turned into the requested statistics per
// interval, in the answered unit. A request over many attributes is split by the HTTP
// thread into one task per worker (`fragment`: the items only, without the enclosing
// array, joined there).
// Body: [{attribute_id, path, unit_id, total_unit_id?, intervals: [{start_ns, end_ns, <stats>}], provenance}]
import { readMeta, summarizePieces, type SummaryColumns, type SummaryPiece } from '../../storage/series-store.js';
import { parseRatio, toDouble } from '../../exact-ratio.js';
import { writeDouble } from '../../json/digits.js';
import type { BodySink } from '../../body-sink.js';
import { stringifyJson } from '../../json/json.js';
import { runTask } from '../worker-state.js';
import { minQuality, mpAny } from '../resolved-points.js';
import { mpArrayHeader } from '../msgpack-bytes.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadSummaryTask, type SummaryStat, type TaskOutcome } from '../task-protocol.js';

/** Statistics rollups cannot give (no value sums, no bad/uncertain split): asking for one reads every point. */
export const RAW_ONLY_STATS: readonly SummaryStat[] = ['mean', 'stddev', 'duration_bad_ns', 'duration_uncertain_ns'];

const ratioDouble = (text: string): number => {
  const r = parseRatio(text);
  if (r === null) throw new Error(`BUG: ratio "${text}" does not parse`);
  return toDouble(r);
};

/** The value of one statistic of interval k (NaN: undefined, written as null). */
function statAt(s: SummaryStat, c: SummaryColumns, k: number, f: number, o: number, total: { factor: number; offset: number } | null, timeWeighted: boolean): number {
  const n = c.count[k], cov = c.covered[k];
  switch (s) {
    case 'count': return n;
    case 'min': return n === 0 ? NaN : (f >= 0 ? c.min[k] : c.max[k]) * f + o;
    case 'max': return n === 0 ? NaN : (f >= 0 ? c.max[k] : c.min[k]) * f + o;
    case 'first': return n === 0 ? NaN : c.first[k] * f + o;
    case 'last': return n === 0 ? NaN : c.last[k] * f + o;
    case 'range': return n === 0 ? NaN : (c.max[k] - c.min[k]) * Math.abs(f);
    case 'mean': return n === 0 ? NaN : (c.first[k] + c.sumD[k] / n) * f + o;
    case 'stddev': {
      // sample standard deviation (n - 1), from sums of differences to the first value
      if (n < 2) return NaN;
      const v = (c.sumD2[k] - (c.sumD[k] * c.sumD[k]) / n) / (n - 1);
      return Math.sqrt(v > 0 ? v : 0) * Math.abs(f);
    }
    case 'twa': return !timeWeighted || cov === 0 ? NaN : (c.area[k] / cov) * f + o;
    // the integral of the canonical rate (per second) over the covered seconds
    case 'total': return !timeWeighted || total === null ? NaN : cov === 0 ? 0 : (c.area[k] * total.factor + total.offset * cov) / 1e9;
    case 'percent_good': return cov === 0 ? NaN : (100 * c.goodNs[k]) / cov;
    case 'duration_good_ns': return Math.round(c.goodNs[k]);
    case 'duration_bad_ns': return Math.round(c.badNs[k]);
    case 'duration_uncertain_ns': return Math.round(c.uncertainNs[k]);
  }
}

const DURATION: ReadonlySet<SummaryStat> = new Set<SummaryStat>(['count', 'duration_good_ns', 'duration_bad_ns', 'duration_uncertain_ns']);

export function readSummaryTask(t: ReadSummaryTask): TaskOutcome {
  const msgpack = t.format === 'msgpack';
  return runTask(msgpack ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const B = BigInt64Array.from(t.boundaries, (x) => BigInt(x));
    const keep = minQuality(t.excludeQuality);
    const useRollups = keep === 0 && !t.stats.some((s) => RAW_ONLY_STATS.includes(s));
    const startNs = BigInt(t.windowStartNs), endNs = BigInt(t.windowEndNs), asOf = BigInt(t.modelAsOfNs);
    // the interval heads and stat keys are the same for every attribute of the task: encoded once
    const text = msgpack ? null : new SummaryText(B, t.stats, startNs, endNs, asOf);
    const withTotal = t.stats.includes('total');
    let points = 0;
    if (!t.fragment) { if (msgpack) mpArrayHeader(sink, t.attributes.length); else sink.ascii('['); }
    for (let i = 0; i < t.attributes.length; i++) {
      const a = t.attributes[i];
      const pieces: SummaryPiece[] = [];
      const lossy: Array<{ start_ns: bigint; end_ns: bigint; tag: string }> = [];
      for (const s of a.segments) {
        const meta = readMeta(view, s.series);
        if (!meta) continue;
        const from = BigInt(s.startNs), to = BigInt(s.endNs);
        pieces.push({ series: s.series, fromNs: from, toNs: to, type: meta.type });
        for (const r of meta.lossyRanges) if (r.endNs > from && r.startNs < to) lossy.push({ start_ns: r.startNs > from ? r.startNs : from, end_ns: r.endNs < to ? r.endNs : to, tag: r.tag });
      }
      const c = summarizePieces(view, pieces, { boundaries: B, continuity: a.continuity === 'continuous' ? 'continuous' : 'stepped', useRollups, minQuality: keep });
      points += c.pointsRead;
      const f = a.convert === null ? 1 : ratioDouble(a.convert.factor), o = a.convert === null ? 0 : ratioDouble(a.convert.offset);
      const total = t.totals[i];
      const timeWeighted = a.continuity !== 'event';
      let good = 0, cov = 0;
      for (let k = 0; k < c.n; k++) { good += c.goodNs[k]; cov += c.covered[k]; }
      const provenance: Record<string, unknown> = { window_resolved: { start_ns: startNs, end_ns: endNs }, model_as_of_ns: asOf };
      if (cov > 0) provenance.percent_good = Math.round((1e8 * good) / cov) / 1e6;
      if (keep > 0) provenance.percent_time_filtered = Math.round((1e8 * c.filteredNs) / Number(endNs - startNs)) / 1e6;
      if (lossy.length > 0) provenance.lossy_ranges = lossy;
      if (pieces.length > 0) provenance.tiers_touched = ['hot'];
      if (pieces.length > 0) provenance.chunks_pruned = c.chunksPruned;
      if (c.rollupHours + c.rollupDays > 0) provenance.computed = `summary: ${c.rollupDays} day rollups, ${c.rollupHours} hour rollups, ${c.pointsRead} raw points`;
      const totalUnitId = withTotal ? (total === null || !timeWeighted ? null : total.unitId) : undefined;
      if (msgpack) {
        const head: Record<string, unknown> = { attribute_id: a.attributeId, path: a.path, unit_id: a.unitId };
        if (totalUnitId !== undefined) head.total_unit_id = totalUnitId;
        const intervals = new Array(c.n);
        for (let k = 0; k < c.n; k++) {
          const row: Record<string, unknown> = { start_ns: B[k], end_ns: B[k + 1] };
          for (const s of t.stats) { const v = statAt(s, c, k, f, o, total, timeWeighted); row[s] = Number.isNaN(v) ? null : v; }
          intervals[k] = row;
        }
        mpAny(sink, { ...head, intervals, provenance });
        continue;
      }
      if (i > 0) sink.ascii(',');
      writeJsonItem(sink, text!, a.attributeId, a.path, a.unitId, totalUnitId, c, f, o, total, timeWeighted, provenance);
    }
    if (!t.fragment && !msgpack) sink.ascii(']');
    return points;
  });
}

function writeStat(sink: BodySink, v: number, integer: boolean): void {
  if (Number.isNaN(v) || !Number.isFinite(v)) sink.ascii('null');
  else if (integer) sink.ascii(String(v));
  else writeDouble(sink, v);
}

/** ASCII text as bytes (natively: a per-character callback cost more than the heads saved on a one-attribute summary). */
const latin = (s: string): Uint8Array => Buffer.from(s, 'latin1');

/**
 * The JSON text a task's items share, encoded once per task: each interval's head
 * (`{"start_ns":S,"end_ns":E`, the same for every attribute), each stat's `,"name":` and
 * the provenance's fixed start. Per attribute x interval this was a template string, its
 * copy and its garbage (a fifth of a worker's time on the 1-minute twa of 950 attributes).
 */
class SummaryText {
  /** The heads back to back; head k is heads[headAt[k], headAt[k + 1]). */
  readonly heads: Uint8Array;
  readonly headAt: Int32Array;
  readonly keys: Uint8Array[];
  readonly integer: boolean[];
  readonly provenanceHead: Uint8Array;

  constructor(B: BigInt64Array, readonly stats: readonly SummaryStat[], startNs: bigint, endNs: bigint, asOf: bigint) {
    const n = Math.max(0, B.length - 1);
    const parts: string[] = new Array(n);
    this.headAt = new Int32Array(n + 1);
    let at = 0;
    for (let k = 0; k < n; k++) {
      parts[k] = `{"start_ns":${B[k]},"end_ns":${B[k + 1]}`;
      this.headAt[k] = at;
      at += parts[k].length;
    }
    this.headAt[n] = at;
    this.heads = latin(parts.join(''));
    this.keys = stats.map((s) => latin(`,"${s}":`));
    this.integer = stats.map((s) => DURATION.has(s));
    this.provenanceHead = latin(`],"provenance":{"window_resolved":{"start_ns":${startNs},"end_ns":${endNs}},"model_as_of_ns":${asOf}`);
  }
}

/** `,"member":` per provenance member after the fixed ones, encoded once. */
const memberKeys = new Map<string, Uint8Array>();

/** One item as JSON; same members, in the same order, as the msgpack item. */
function writeJsonItem(sink: BodySink, text: SummaryText, attributeId: string, path: string, unitId: string | null, totalUnitId: string | null | undefined,
  c: SummaryColumns, f: number, o: number, total: { factor: number; offset: number } | null, timeWeighted: boolean, provenance: Record<string, unknown>): void {
  sink.ascii('{"attribute_id":');
  sink.jsonString(attributeId);
  sink.ascii(',"path":');
  sink.jsonString(path);
  sink.ascii(',"unit_id":');
  if (unitId === null) sink.ascii('null'); else sink.jsonString(unitId);
  if (totalUnitId !== undefined) {
    sink.ascii(',"total_unit_id":');
    if (totalUnitId === null) sink.ascii('null'); else sink.jsonString(totalUnitId);
  }
  sink.ascii(',"intervals":[');
  const { heads, headAt, keys, integer, stats } = text;
  for (let k = 0; k < c.n; k++) {
    if (k > 0) sink.byte(0x2c);
    sink.bytesRange(heads, headAt[k], headAt[k + 1]);
    for (let j = 0; j < stats.length; j++) {
      sink.bytesRange(keys[j], 0, keys[j].length);
      writeStat(sink, statAt(stats[j], c, k, f, o, total, timeWeighted), integer[j]);
    }
    sink.byte(0x7d);
  }
  sink.bytes(text.provenanceHead);
  for (const member in provenance) {
    if (member === 'window_resolved' || member === 'model_as_of_ns') continue;
    let key = memberKeys.get(member);
    if (key === undefined) { key = latin(`,"${member}":`); memberKeys.set(member, key); }
    sink.bytesRange(key, 0, key.length);
    const v = provenance[member];
    if (typeof v === 'number' && Number.isFinite(v)) writeDouble(sink, v);
    else sink.utf8(stringifyJson(v));
  }
  sink.ascii('}}');
}
