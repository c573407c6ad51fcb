// POST /v1/read/render in a worker: per attribute, the series render (both modes, the
// `stat` values) of its segments stitched into one pixel grid (engine renderPieces: equal
// to rendering one series holding the union of the segments' points), in the answered unit.
// The render body is the series route's (writeRenderBody); its transitions are those of
// every segment's series inside the segment, plus a 'binding' transition where a segment
// starts inside the range (a sensor swap).
// Body: [{attribute_id, path, unit_id, render: <series render body> | null, provenance}]
import { readMeta, renderPieces, type MinMaxBand, type RenderPiece, type SignificantPoints } from '../../storage/series-store.js';
import { parseRatio, toDouble } from '../../exact-ratio.js';
import { stringifyJson } from '../../json/json.js';
import { runTask } from '../worker-state.js';
import { mpArrayHeader, mpMapHeader, mpNil, mpString } from '../msgpack-bytes.js';
import { mpAny } from '../resolved-points.js';
import { transitionsOf, writeRenderBody, type Transition } from './render-task.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadRenderTask, type TaskOutcome } from '../task-protocol.js';

const ratioDouble = (text: string): number => {
  const r = parseRatio(text);
  if (r === null) throw new Error(`BUG: ratio "${text}" does not parse`);
  return toDouble(r);
};

function convert(a: Float64Array, f: number, o: number): void {
  for (let i = 0; i < a.length; i++) a[i] = a[i] * f + o;
}

/** Values of a render in the answered unit (v * f + o; a negative factor swaps the band). */
function convertRender(r: SignificantPoints | MinMaxBand, f: number, o: number): void {
  if (r.mode === 'significant-points') { convert(r.v.subarray(0, r.count), f, o); return; }
  convert(r.vMin, f, o); convert(r.vMax, f, o);
  if (f < 0) { const t = r.vMin; r.vMin = r.vMax; r.vMax = t; }
  if (r.vStat && r.stat !== 'count' && r.stat !== 'percent_good') convert(r.vStat, f, o);
}

const toMs = (ns: bigint) => { const ms = ns / 1_000_000n; return Number(ms) + Number(ns - ms * 1_000_000n) / 1e6; };

export function readRenderTask(t: ReadRenderTask): TaskOutcome {
  const msgpack = t.format === 'msgpack';
  return runTask(msgpack ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const startNs = BigInt(t.windowStartNs), endNs = BigInt(t.windowEndNs), asOf = BigInt(t.modelAsOfNs);
    let points = 0;
    if (!t.fragment) { if (msgpack) mpArrayHeader(sink, t.attributes.length); else sink.ascii('['); }
    for (let i = 0; i < t.attributes.length; i++) {
      const a = t.attributes[i];
      const pieces: RenderPiece[] = [];
      const transitions: Transition[] = [];
      const lossy: Array<{ start_ns: bigint; end_ns: bigint; tag: string }> = [];
      let stringSeries = false;
      for (const s of a.segments) {
        const meta = readMeta(view, s.series);
        if (!meta) continue;
        if (meta.type === 'string') { stringSeries = true; continue; }
        const from = BigInt(s.startNs), to = BigInt(s.endNs);
        pieces.push({ series: s.series, fromNs: from, toNs: to });
        if (from > startNs) transitions.push({ tMs: toMs(from), kind: 'binding' });
        for (const x of transitionsOf(meta, from, to)) transitions.push(x);
        for (const r of meta.lossyRanges) if (r.endNs > from && r.startNs < to) lossy.push({ start_ns: r.startNs > from ? r.startNs : from, end_ns: r.endNs < to ? r.endNs : to, tag: r.tag });
      }
      transitions.sort((x, y) => x.tMs - y.tMs);
      // an attribute with no numeric view (string values) or no binding in the range has no render
      const r = stringSeries || pieces.length === 0 ? null
        : renderPieces(view, pieces, { startNs, endNs, width: t.width, mode: t.mode, stat: t.stat ?? undefined, continuity: a.continuity === 'continuous' ? 'continuous' : 'stepped' });
      if (r !== null && a.convert !== null) convertRender(r, ratioDouble(a.convert.factor), ratioDouble(a.convert.offset));
      if (r !== null) points += r.pointsScanned;
      const provenance: Record<string, unknown> = { window_resolved: { start_ns: startNs, end_ns: endNs }, model_as_of_ns: asOf };
      if (r !== null && !Number.isNaN(r.percentGood)) provenance.percent_good = Math.round(r.percentGood * 1e6) / 1e6;
      if (lossy.length > 0) provenance.lossy_ranges = lossy;
      if (pieces.length > 0) provenance.tiers_touched = ['hot'];
      // chunks answered from their header (and summary) without decoding a point
      if (r !== null) provenance.chunks_pruned = r.chunksFromHeaders;
      if (msgpack) {
        mpMapHeader(sink, 5);
        mpString(sink, 'attribute_id'); mpString(sink, a.attributeId);
        mpString(sink, 'path'); mpString(sink, a.path);
        mpString(sink, 'unit_id'); if (a.unitId === null) mpNil(sink); else mpString(sink, a.unitId);
        mpString(sink, 'render'); if (r === null) mpNil(sink); else writeRenderBody(sink, r, transitions, false);
        mpString(sink, 'provenance'); mpAny(sink, provenance);
        continue;
      }
      if (i > 0) sink.ascii(',');
      sink.utf8(stringifyJson({ attribute_id: a.attributeId, path: a.path, unit_id: a.unitId }).slice(0, -1));
      sink.ascii(',"render":');
      if (r === null) sink.ascii('null'); else writeRenderBody(sink, r, transitions, true);
      sink.ascii(',"provenance":');
      sink.utf8(stringifyJson(provenance));
      sink.ascii('}');
    }
    if (!t.fragment && !msgpack) sink.ascii(']');
    return points;
  });
}
