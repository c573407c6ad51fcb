// POST /v1/read/raw in a worker: per attribute, per segment (binding clipped to the
// window), the stored points in [segment start, segment end), written straight from the
// decoded columns into the body (the series raw route's writers). A quality filter or a
// unit conversion first copies each run into per-worker scratch columns (kept points,
// converted values) and writes those. With includePrior, `prior` is the attribute's last
// point before the window under the binding covering the window's start.
//
// Body (JSON, or msgpack with the same shape):
// [{attribute_id, path, unit_id, segments: [{series, start_ns, end_ns, points: [{ts_ns, value, quality}]}], prior?, provenance}]
// With layout 'columns' each segment's points come as typed columns instead (msgpack: bins,
// JSON: three arrays; see writeColumnsSegment). Past maxPoints points in all the read stops
// and is refused (read-too-large): the slab never grows past what max_points allows.
import type { PointColumns, ValueType } from '../../storage/encoding/chunk-types.js';
import { allocColumns, ChunkWindow, copyValue, listWholeRange, MAX_CHUNK_POINTS, readMeta, scanChunks, scanRange, visitHead, type ReadView, type RunVisitor, type SeriesMeta } from '../../storage/series-store.js';
import { ColumnPage } from '../raw-points-columns.js';
import { EnumMemberText } from '../enum-member-text.js';
import { countDigits, JsonColumnPage, putCount, reserveCount } from '../raw-columns-json.js';
import type { BodySink } from '../../body-sink.js';
import { stringifyJson } from '../../json/json.js';
import { writeJsonPoints } from '../raw-points-json.js';
import { writeMsgpackPoints } from '../raw-points-msgpack.js';
import { mpArray32Reserved, mpArrayHeader, mpKey, mpMapHeader, mpString } from '../msgpack-bytes.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadRawTask, type TaskOutcome } from '../task-protocol.js';
import {
  converterOf, enumRefOf, keyOf, minQuality, mpAny, priorPoint, ProvenanceTally, tooLarge, type PlanAttribute, type PlanSegment, type ValueConverter,
} from '../resolved-points.js';

/** Per-worker decode and filtered-copy columns, one set per value type. */
const decodeScratch = new Map<ValueType, PointColumns>();
const copyScratch = new Map<ValueType, PointColumns>();
function scratch(m: Map<ValueType, PointColumns>, type: ValueType): PointColumns {
  let c = m.get(type);
  if (!c) { c = allocColumns(type, MAX_CHUNK_POINTS); m.set(type, c); }
  return c;
}

/** Copies the kept points of a run (converted when asked) into scratch columns; returns them with count set. */
function keptCopy(cols: PointColumns, i0: number, i1: number, keep: number, conv: ValueConverter | null): PointColumns {
  const outType: ValueType = conv !== null && (cols.type === 'float64' || cols.type === 'int64') ? 'float64' : cols.type;
  const out = scratch(copyScratch, outType);
  out.tsBase = cols.tsBase;
  let k = 0;
  for (let i = i0; i < i1; i++) {
    if (cols.quality[i] < keep) continue;
    out.tsOffset[k] = cols.tsOffset[i];
    out.quality[k] = cols.quality[i];
    if (outType !== cols.type) out.f64![k] = conv!.apply(cols.type === 'float64' ? cols.f64![i] : Number(cols.i64![i]));
    else if (conv !== null && outType === 'float64') out.f64![k] = conv.apply(cols.f64![i]);
    else copyValue(cols, i, out, k);
    k++;
  }
  out.count = k;
  return out;
}

export function readRawTask(t: ReadRawTask): TaskOutcome {
  const msgpack = t.format === 'msgpack';
  return runTask(msgpack ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const keep = minQuality(t.excludeQuality);
    const base = { windowStartNs: BigInt(t.windowStartNs), windowEndNs: BigInt(t.windowEndNs), modelAsOfNs: BigInt(t.modelAsOfNs), filtering: t.excludeQuality !== null };
    const now = BigInt(t.nowNs);
    const budget = { left: t.maxPoints, total: 0 };
    if (!t.fragment) { if (msgpack) mpArrayHeader(sink, t.attributes.length); else sink.ascii('['); }
    for (let k = 0; k < t.attributes.length; k++) {
      const a = t.attributes[k];
      if (!msgpack && k > 0) sink.ascii(',');
      writeAttribute(view, sink, t, a, keep, new ProvenanceTally(keep, now), base, budget);
    }
    if (!msgpack && !t.fragment) sink.ascii(']');
    return budget.total;
  });
}

function writeAttribute(view: ReadView, sink: BodySink, t: ReadRawTask, a: PlanAttribute, keep: number, tally: ProvenanceTally,
  base: { windowStartNs: bigint; windowEndNs: bigint; modelAsOfNs: bigint; filtering: boolean }, budget: { left: number; total: number }): void {
  const msgpack = t.format === 'msgpack';
  const conv = converterOf(a);
  const fast = keep === 0 && conv === null;
  if (msgpack) {
    mpMapHeader(sink, t.includePrior ? 6 : 5);
    sink.bytes(mpKey('attribute_id')); mpString(sink, a.attributeId);
    sink.bytes(mpKey('path')); mpString(sink, a.path);
    sink.bytes(mpKey('unit_id')); mpAny(sink, a.unitId);
    sink.bytes(mpKey('segments')); mpArrayHeader(sink, a.segments.length);
  } else {
    sink.utf8(`{"attribute_id":"${a.attributeId}","path":${JSON.stringify(a.path)},"unit_id":${a.unitId === null ? 'null' : `"${a.unitId}"`},"segments":[`);
  }
  for (let s = 0; s < a.segments.length; s++) {
    const seg = a.segments[s];
    const startNs = BigInt(seg.startNs), endNs = BigInt(seg.endNs);
    const meta = readMeta(view, seg.series);
    if (t.layout === 'columns') {
      if (!msgpack && s > 0) sink.ascii(',');
      budget.total += writeColumnsSegment(view, sink, t, seg.series, startNs, endNs, meta, keep, conv, tally, budget);
      continue;
    }
    const enumSet = meta?.enumSet?.id ?? '';
    const enumJson = JSON.stringify(enumSet);
    const members = meta?.type === 'enum' ? memberText(t, enumSet) : null;
    let countAt = 0;
    if (msgpack) {
      mpMapHeader(sink, 4);
      sink.bytes(mpKey('series')); mpString(sink, seg.series);
      sink.bytes(mpKey('start_ns')); mpAny(sink, startNs);
      sink.bytes(mpKey('end_ns')); mpAny(sink, endNs);
      sink.bytes(mpKey('points'));
      countAt = mpArray32Reserved(sink);
    } else {
      sink.ascii(`${s > 0 ? ',' : ''}{"series":"${seg.series}","start_ns":${startNs},"end_ns":${endNs},"points":[`);
    }
    let n = 0;
    if (meta !== undefined) {
      tally.beginSegment(view, seg.series, startNs, endNs, meta);
      const visit: RunVisitor = (cols, i0, i1) => {
        tally.run(cols, i0, i1);
        if (budget.left < i1 - i0 && (fast || countKept(cols, i0, i1, keep) > budget.left)) throw tooLarge(t.maxPoints);
        const run = fast ? cols : keptCopy(cols, i0, i1, keep, conv);
        const j0 = fast ? i0 : 0, j1 = fast ? i1 : run.count;
        if (msgpack) writeMsgpackPoints(sink, run, j0, j1, enumSet, members);
        else writeJsonPoints(sink, run, j0, j1, n === 0, enumJson, members);
        n += j1 - j0;
        budget.left -= j1 - j0;
        return true;
      };
      const key = keyOf(seg.series);
      if (fast) {
        // every point is kept: chunks wholly inside past the budget refuse the read before any is decoded
        const listing = listWholeRange(view, key, startNs, endNs, undefined, budget.left);
        if (!listing.whole) throw tooLarge(t.maxPoints);
        if (scanChunks(key, listing.chunks, startNs, endNs, visit, scratch(decodeScratch, meta.type), undefined, chunkWindow)) visitHead(listing.head, startNs, endNs, visit);
      } else scanRange(view, key, startNs, endNs, visit, scratch(decodeScratch, meta.type));
      tally.endSegment(endNs);
    }
    budget.total += n;
    if (msgpack) sink.view.setUint32(countAt, n); else sink.ascii(']}');
  }
  if (!msgpack) sink.ascii(']');
  if (t.includePrior) {
    const prior = priorOf(view, t, a, a.segments[0], base.windowStartNs, keep, conv);
    if (msgpack) { sink.bytes(mpKey('prior')); mpAny(sink, prior); } else sink.utf8(`,"prior":${stringifyJson(prior)}`);
  }
  const provenance = tally.members(base);
  if (msgpack) { sink.bytes(mpKey('provenance')); mpAny(sink, provenance); } else sink.utf8(`,"provenance":${stringifyJson(provenance)}}`);
}

/** The rows' enum values with their member names, encoded once per ordinal; one writer per set and task. */
let memberTexts: { task: ReadRawTask | null; bySet: Map<string, EnumMemberText> } = { task: null, bySet: new Map() };
function memberText(t: ReadRawTask, enumSet: string): EnumMemberText {
  if (memberTexts.task !== t) memberTexts = { task: t, bySet: new Map() };
  let m = memberTexts.bySet.get(enumSet);
  if (m === undefined) {
    m = new EnumMemberText(enumSet, t.members?.[enumSet] ?? {}, t.format === 'msgpack' ? 'msgpack' : 'json');
    memberTexts.bySet.set(enumSet, m);
  }
  return m;
}

function countKept(cols: PointColumns, i0: number, i1: number, keep: number): number {
  let n = 0;
  for (let i = i0; i < i1; i++) if (cols.quality[i] >= keep) n++;
  return n;
}

/** The last point before the window under the binding that covers the window's start (null when none covers it or it has none). */
function priorOf(view: ReadView, t: ReadRawTask, a: PlanAttribute, first: PlanSegment | undefined, windowStart: bigint, keep: number, conv: ValueConverter | null) {
  if (first === undefined || BigInt(first.startNs) !== windowStart) return null;
  const floor = BigInt(first.boundFromNs);
  if (floor >= windowStart) return null;
  const meta = readMeta(view, first.series);
  if (meta === undefined) return null;
  const p = priorPoint(view, keyOf(first.series), windowStart, floor, keep, enumRefOf(t.members, meta), conv);
  return p === null ? null : { series: first.series, ts_ns: p.ts, value: p.value, quality: p.quality };
}

/** Per-worker reader of the part of a chunk a segment's edge cuts (ChunkWindow). */
const chunkWindow = new ChunkWindow();

/** Per-worker pages of the columnar layout. */
const columnPage = new ColumnPage();
const jsonColumnPage = new JsonColumnPage();

/**
 * One segment in the columnar layout (the series raw route's `layout=columns`): {series,
 * start_ns, end_ns, layout, value_type, enum_set, count, points: {ts_ns, value, quality},
 * encoding (msgpack only)}. Converted values are float64. The page is sized from the chunk
 * headers before the scan (listRange): a segment whose chunks wholly inside it hold more
 * points than the budget left is refused before anything is gathered (JSON and msgpack alike).
 */
function writeColumnsSegment(view: ReadView, sink: BodySink, t: ReadRawTask, series: string, startNs: bigint, endNs: bigint, meta: SeriesMeta | undefined,
  keep: number, conv: ValueConverter | null, tally: ProvenanceTally, budget: { left: number; total: number }): number {
  const msgpack = t.format === 'msgpack';
  const type: ValueType = meta === undefined ? 'float64' : conv !== null && (meta.type === 'float64' || meta.type === 'int64') ? 'float64' : meta.type;
  const enumSet = meta?.enumSet?.id ?? null;
  const fast = keep === 0 && conv === null;
  const key = keyOf(series);
  const visitWith = (append: (cols: PointColumns, i0: number, i1: number) => void, count: () => number): RunVisitor => (cols, i0, i1) => {
    tally.run(cols, i0, i1);
    const run = fast ? cols : keptCopy(cols, i0, i1, keep, conv);
    const j0 = fast ? i0 : 0, j1 = fast ? i1 : run.count;
    if (count() + (j1 - j0) > budget.left) throw tooLarge(t.maxPoints);
    append(run, j0, j1);
    return true;
  };
  // the chunks are listed from their headers before anything is gathered: the bound sizes the
  // msgpack page's regions and the JSON count field (putCount)
  const listing = meta === undefined ? { chunks: [], bound: 0, whole: true, head: null } : listWholeRange(view, key, startNs, endNs, undefined, budget.left);
  const head = listing.head;
  if (!listing.whole) throw tooLarge(t.maxPoints);
  if (msgpack) {
    mpMapHeader(sink, 9);
    sink.bytes(mpKey('series')); mpString(sink, series);
    sink.bytes(mpKey('start_ns')); mpAny(sink, startNs);
    sink.bytes(mpKey('end_ns')); mpAny(sink, endNs);
    sink.bytes(mpKey('layout')); mpString(sink, 'columns');
    sink.bytes(mpKey('value_type')); mpString(sink, type);
    sink.bytes(mpKey('enum_set')); mpAny(sink, type === 'enum' ? enumSet : null);
    sink.bytes(mpKey('count'));
    sink.reserve(5);
    sink.buf[sink.pos] = 0xce;
    const countAt = sink.pos + 1;
    sink.pos += 5;
    sink.bytes(mpKey('points'));
    const page = columnPage;
    page.begin(sink, type, listing.bound);
    try {
      if (meta !== undefined) {
        tally.beginSegment(view, series, startNs, endNs, meta);
        const visit = visitWith((c, i0, i1) => page.append(c, i0, i1), () => page.count);
        if (scanChunks(key, listing.chunks, startNs, endNs, visit, scratch(decodeScratch, meta.type), undefined, chunkWindow)) visitHead(head, startNs, endNs, visit);
        tally.endSegment(endNs);
      }
    } catch (e) {
      page.release();
      throw e;
    }
    page.finish();
    sink.view.setUint32(countAt, page.count);
    page.writeEncodings(sink);
    budget.left -= page.count;
    return page.count;
  }
  sink.utf8(`{"series":"${series}","start_ns":${startNs},"end_ns":${endNs},"layout":"columns","value_type":"${type}","enum_set":${type === 'enum' && enumSet !== null ? JSON.stringify(enumSet) : 'null'},"count":`);
  const width = countDigits(listing.bound);
  const countAt = reserveCount(sink, width);
  sink.ascii(',"points":{"ts_ns":[');
  const page = jsonColumnPage;
  page.begin(sink);
  try {
    if (meta !== undefined) {
      tally.beginSegment(view, series, startNs, endNs, meta);
      const visit = visitWith((c, i0, i1) => page.append(c, i0, i1), () => page.count);
      if (scanChunks(key, listing.chunks, startNs, endNs, visit, scratch(decodeScratch, meta.type), undefined, chunkWindow)) visitHead(head, startNs, endNs, visit);
      tally.endSegment(endNs);
    }
    page.finish();
    putCount(sink, countAt, page.count, width);
    sink.ascii('}');
    budget.left -= page.count;
    return page.count;
  } finally {
    page.end();
  }
}
