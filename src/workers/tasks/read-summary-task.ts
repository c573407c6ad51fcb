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
    const startText = B.length > 0 ? Array.from(B, (x) => x.toString()) : [];
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
      const head: Record<string, unknown> = { attribute_id: a.attributeId, path: a.path, unit_id: a.unitId };
      if (t.stats.includes('total')) head.total_unit_id = total === null || !timeWeighted ? null : total.unitId;
      if (msgpack) {
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
      const headText = stringifyJson(head);
      sink.utf8(headText.slice(0, -1));
      sink.ascii(',"intervals":[');
      for (let k = 0; k < c.n; k++) {
        if (k > 0) sink.ascii(',');
        sink.ascii(`{"start_ns":${startText[k]},"end_ns":${startText[k + 1]}`);
        for (const s of t.stats) {
          sink.ascii(`,"${s}":`);
          writeStat(sink, statAt(s, c, k, f, o, total, timeWeighted), DURATION.has(s));
        }
        sink.ascii('}');
      }
      sink.ascii('],"provenance":');
      sink.utf8(stringifyJson(provenance));
      sink.ascii('}');
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
