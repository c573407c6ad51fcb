// POST /v1/read/episode-overlay with layout "columns", in a worker: a run of episodes, each
// read on its u grid (`points` instants from start to end, ts_i = start + (end - start) * i
// / (points - 1), rounded down), every attribute of the episode's assets valued at each
// instant by the rules of POST /v1/read/at (read-at-task.ts: the same segment bounds and
// neighbour seek, the same interpolation, the same no_value reasons), sampled from typed
// columns (overlay-grid.ts) and gathered into typed columns instead of one object per point. The per-point object and its `series`
// member made the row layout's 100 x 10 x 500 overlay 81 MB of JSON and 6.9 s; columns
// carry the series once per run of instants it covers and the no_value reasons once per run.
//
// Each episode is written as {episode, ts_ns, series: [{attribute_id, path, unit_id, count,
// points: {value, quality, interpolated}, no_value: [{from, to, reason}], segments:
// [{series, from, to}], encoding, provenance}]}; in msgpack the columns are bins (ts_ns
// int64le, value float64le when every value is a number, else an array; quality uint8 or
// uint32le; interpolated uint8 0/1), in JSON arrays (a missing value is null). The items
// are written one after another (a fragment); the HTTP thread adds the envelope.
import type { BodySink } from '../../body-sink.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadOverlayTask } from '../task-protocol.js';
import { minQuality, tooLarge, mpAny, type PlanAttribute } from '../resolved-points.js';
import { mpArrayHeader, mpKey, mpMapHeader, mpString, mpUint } from '../msgpack-bytes.js';
import { stringifyJson } from '../../json/json.js';
import { groups, newColumns, onGrid, relativeGrid, type GridUser, type OverlayColumns } from './overlay-grid.js';

/** The msgpack bins are little-endian: on such a machine typed columns are copied as bytes. */
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** The grid's instants: points from start to end inclusive, rounded down (repeats kept when the episode is shorter than points ns). */
export function gridInstants(startNs: bigint, endNs: bigint, points: number): BigInt64Array {
  const ts = new BigInt64Array(points);
  const span = endNs - startNs;
  const last = BigInt(Math.max(1, points - 1));
  for (let i = 0; i < points; i++) ts[i] = startNs + (span * BigInt(i)) / last;
  return ts;
}

export function readOverlayTask(t: ReadOverlayTask): ReturnType<typeof runTask> {
  return runTask(t.format === 'msgpack' ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const keep = minQuality(t.excludeQuality);
    const now = BigInt(t.nowNs);
    const budget = { left: t.maxPoints, limit: t.maxPoints };
    const grids = t.episodes.map((e) => gridInstants(BigInt(e.episode.start_ns), BigInt(e.gridEndNs), t.points));
    const columns = t.episodes.map((e) => e.attributes.map(() => newColumns(t.points)));
    const rels = grids.map(relativeGrid);
    const users = new Map<number, GridUser[]>();
    t.episodes.forEach((e, k) => e.attributes.forEach((ai, s) => {
      const list = users.get(ai);
      const u = { grid: grids[k], rel: rels[k], from: 0, c: columns[k][s] };
      if (list) list.push(u); else users.set(ai, [u]);
    }));
    let values = 0;
    for (const e of t.episodes) values += e.attributes.length * t.points;
    if (values > t.maxPoints) throw tooLarge(t.maxPoints, 'values');
    let visited = 0;
    for (const [ai, list] of users) {
      for (const g of groups(list)) visited += onGrid(view, t, t.attributes[ai], g, keep, now, budget);
    }
    for (let k = 0; k < t.episodes.length; k++) {
      if (k > 0 && t.format === 'json') sink.byte(0x2c);
      writeEpisode(sink, t, t.episodes[k], grids[k], t.episodes[k].attributes.map((ai, s) => ({ a: t.attributes[ai], c: columns[k][s] })));
    }
    return visited;
  });
}

/** Runs [from, to) of equal labels (undefined: not a run). */
function runsOf<K extends 'reason' | 'series'>(labels: Array<string | undefined>, name: K): Array<{ from: number; to: number } & Record<K, string>> {
  const out: Array<{ from: number; to: number } & Record<K, string>> = [];
  for (let i = 0; i < labels.length;) {
    const l = labels[i];
    let j = i + 1;
    while (j < labels.length && labels[j] === l) j++;
    if (l !== undefined) out.push({ from: i, to: j, [name]: l } as { from: number; to: number } & Record<K, string>);
    i = j;
  }
  return out;
}

function provenanceOf(t: ReadOverlayTask, e: ReadOverlayTask['episodes'][number], a: PlanAttribute, c: OverlayColumns): Record<string, unknown> {
  let valued = 0, good = 0, interpolated = false;
  for (let i = 0; i < c.has.length; i++) {
    if (c.has[i] === 0) continue;
    valued++;
    if (c.quality[i] >= 192) good++;
    if (c.interpolated[i] === 1) interpolated = true;
  }
  const p: Record<string, unknown> = { window_resolved: { start_ns: BigInt(e.episode.start_ns), end_ns: BigInt(e.gridEndNs) + 1n }, model_as_of_ns: BigInt(t.modelAsOfNs) };
  if (valued > 0) p.percent_good = Math.round((1e8 * good) / valued) / 1e6;
  if (interpolated) p.computed = a.continuity === 'continuous' ? 'linear-interpolation' : 'previous-value';
  if (a.segments.length > 0) p.tiers_touched = ['hot'];
  if (c.suspect) p.clock_suspect = true;
  return p;
}

function episodeHead(e: ReadOverlayTask['episodes'][number]): Record<string, unknown> {
  const h = e.episode;
  return { id: h.id, name: h.name, template: h.template, start_ns: BigInt(h.start_ns), end_ns: h.end_ns === null ? null : BigInt(h.end_ns) };
}

function writeEpisode(sink: BodySink, t: ReadOverlayTask, e: ReadOverlayTask['episodes'][number], grid: BigInt64Array, series: Array<{ a: PlanAttribute; c: OverlayColumns }>): void {
  const n = grid.length;
  if (t.format === 'json') {
    sink.utf8(`{"episode":${stringifyJson(episodeHead(e))},"ts_ns":[${grid.join(',')}],"series":[`);
    for (let s = 0; s < series.length; s++) {
      const { a, c } = series[s];
      if (s > 0) sink.byte(0x2c);
      const values = new Array<string>(n);
      for (let i = 0; i < n; i++) {
        const v = c.has[i] === 0 ? undefined : c.other === null ? c.num[i] : c.other[i];
        values[i] = v === undefined ? 'null' : typeof v === 'number' && Number.isFinite(v) ? String(v) : stringifyJson(v);
      }
      sink.utf8(`{"attribute_id":"${a.attributeId}","path":${JSON.stringify(a.path)},"unit_id":${a.unitId === null ? 'null' : `"${a.unitId}"`},"count":${n},`
        + `"points":{"value":[${values.join(',')}],"quality":[${c.quality.join(',')}],"interpolated":[${c.interpolated.join(',')}]},`
        + `"no_value":${JSON.stringify(runsOf(c.reason, 'reason'))},"segments":${JSON.stringify(runsOf(c.series, 'series'))},"provenance":${stringifyJson(provenanceOf(t, e, a, c))}}`);
    }
    sink.ascii(']}');
    return;
  }
  mpMapHeader(sink, 3);
  sink.bytes(mpKey('episode')); mpAny(sink, episodeHead(e));
  sink.bytes(mpKey('ts_ns'));
  binHeader(sink, 8 * n);
  if (LITTLE_ENDIAN) { sink.buf.set(new Uint8Array(grid.buffer, grid.byteOffset, 8 * n), sink.pos); sink.pos += 8 * n; }
  else for (let i = 0; i < n; i++) { sink.view.setBigInt64(sink.pos, grid[i], true); sink.pos += 8; }
  sink.bytes(mpKey('series'));
  mpArrayHeader(sink, series.length);
  for (const { a, c } of series) {
    mpMapHeader(sink, 9);
    sink.bytes(mpKey('attribute_id')); mpString(sink, a.attributeId);
    sink.bytes(mpKey('path')); mpString(sink, a.path);
    sink.bytes(mpKey('unit_id')); mpAny(sink, a.unitId);
    sink.bytes(mpKey('count')); mpUint(sink, n);
    sink.bytes(mpKey('points'));
    mpMapHeader(sink, 3);
    sink.bytes(mpKey('value'));
    if (c.other === null) {
      binHeader(sink, 8 * n);
      // num is not read again once written: NaN where no value, then its bytes as they are
      for (let i = 0; i < n; i++) if (c.has[i] === 0) c.num[i] = NaN;
      if (LITTLE_ENDIAN) { sink.buf.set(new Uint8Array(c.num.buffer, c.num.byteOffset, 8 * n), sink.pos); sink.pos += 8 * n; }
      else for (let i = 0; i < n; i++) { sink.view.setFloat64(sink.pos, c.num[i], true); sink.pos += 8; }
    } else {
      mpArrayHeader(sink, n);
      for (let i = 0; i < n; i++) mpAny(sink, c.has[i] === 1 ? c.other[i] : null);
    }
    const wide = c.maxQuality > 255;
    sink.bytes(mpKey('quality'));
    binHeader(sink, (wide ? 4 : 1) * n);
    // narrow: set() converts each uint32 to a byte (all are under 256)
    if (!wide) { sink.buf.set(c.quality, sink.pos); sink.pos += n; }
    else if (LITTLE_ENDIAN) { sink.buf.set(new Uint8Array(c.quality.buffer, c.quality.byteOffset, 4 * n), sink.pos); sink.pos += 4 * n; }
    else for (let i = 0; i < n; i++) { sink.view.setUint32(sink.pos, c.quality[i], true); sink.pos += 4; }
    sink.bytes(mpKey('interpolated'));
    binHeader(sink, n);
    sink.buf.set(c.interpolated, sink.pos); sink.pos += n;
    sink.bytes(mpKey('no_value')); mpRuns(sink, runsOf(c.reason, 'reason'), 'reason');
    sink.bytes(mpKey('segments')); mpRuns(sink, runsOf(c.series, 'series'), 'series');
    sink.bytes(mpKey('encoding'));
    mpAny(sink, { value: c.other === null ? 'float64le' : 'array', quality: wide ? 'uint32le' : 'uint8', interpolated: 'uint8', ts_ns: 'int64le' });
    sink.bytes(mpKey('provenance')); mpAny(sink, provenanceOf(t, e, a, c));
  }
}

/** Runs [{from, to, <label>}] with the indices as msgpack uints (mpAny writes every integer as int64, which clients read as bigint). */
function mpRuns<K extends 'reason' | 'series'>(sink: BodySink, runs: Array<{ from: number; to: number } & Record<K, string>>, label: K): void {
  mpArrayHeader(sink, runs.length);
  for (const r of runs) {
    mpMapHeader(sink, 3);
    sink.bytes(mpKey('from')); mpUint(sink, r.from);
    sink.bytes(mpKey('to')); mpUint(sink, r.to);
    sink.bytes(mpKey(label)); mpString(sink, r[label]);
  }
}

/** A bin32 header with room for its bytes reserved behind it. */
function binHeader(sink: BodySink, bytes: number): void {
  sink.reserve(5 + bytes);
  sink.buf[sink.pos++] = 0xc6;
  sink.view.setUint32(sink.pos, bytes);
  sink.pos += 4;
}
