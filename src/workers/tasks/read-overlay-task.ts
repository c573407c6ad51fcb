// POST /v1/read/episode-overlay with layout "columns", in a worker: a run of episodes, each
// read on its u grid (`points` instants from start to end, ts_i = start + (end - start) * i
// / (points - 1), rounded down), every attribute of the episode's assets valued at each
// instant by the rules of POST /v1/read/at (read-at-task.ts: the same segment scan and
// neighbour seek, the same interpolation, the same no_value reasons), but gathered into
// typed columns instead of one object per point. The per-point object and its `series`
// member made the row layout's 100 x 10 x 500 overlay 81 MB of JSON and 6.9 s; columns
// carry the series once per run of instants it covers and the no_value reasons once per run.
//
// Each episode is written as {episode, ts_ns, series: [{attribute_id, path, unit_id, count,
// points: {value, quality, interpolated}, no_value: [{from, to, reason}], segments:
// [{series, from, to}], encoding, provenance}]}; in msgpack the columns are bins (ts_ns
// int64le, value float64le when every value is a number, else an array; quality uint8 or
// uint32le; interpolated uint8 0/1), in JSON arrays (a missing value is null). The items
// are written one after another (a fragment); the HTTP thread adds the envelope.
import type { ReadView } from '../../storage/series-store.js';
import type { BodySink } from '../../body-sink.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type ReadOverlayTask } from '../task-protocol.js';
import { converterOf, minQuality, tooLarge, mpAny, type PlanAttribute } from '../resolved-points.js';
import { mpArrayHeader, mpKey, mpMapHeader, mpString, mpUint } from '../msgpack-bytes.js';
import { stringifyJson } from '../../json/json.js';
import { NO_VALUE, neighbours, segmentPoints, sparse, type KnownPoints } from './read-at-task.js';

/** One attribute of one episode on the grid: per instant its value, quality, flag, the no_value reason or the series it came from. */
interface OverlayColumns {
  /** Numbers unboxed (a boxed double per point was most of the task's garbage); `other` takes over at the first value that is not a number. */
  num: Float64Array;
  other: unknown[] | null;
  /** 1 where a value was found. */
  has: Uint8Array;
  quality: Uint32Array;
  maxQuality: number;
  interpolated: Uint8Array;
  reason: Array<string | undefined>;
  series: Array<string | undefined>;
  suspect: boolean;
}

const newColumns = (n: number): OverlayColumns => ({
  num: new Float64Array(n), other: null, has: new Uint8Array(n), quality: new Uint32Array(n), maxQuality: 0, interpolated: new Uint8Array(n),
  reason: new Array<string | undefined>(n), series: new Array<string | undefined>(n), suspect: false,
});

/** The grid's instants: points from start to end inclusive, rounded down (repeats kept when the episode is shorter than points ns). */
export function gridInstants(startNs: bigint, endNs: bigint, points: number): BigInt64Array {
  const ts = new BigInt64Array(points);
  const span = endNs - startNs;
  const last = BigInt(Math.max(1, points - 1));
  for (let i = 0; i < points; i++) ts[i] = startNs + (span * BigInt(i)) / last;
  return ts;
}

/** An instant to value: grid instant i of the column. */
interface Target { at: bigint; c: OverlayColumns; i: number }

/**
 * Episodes of one attribute read together when they lie close: sorted by start, an episode
 * joins the group when the gap before it is no longer than the group's span so far, so a
 * group's one scan reads at most about twice the points its episodes cover (batches back to
 * back on a vessel: one scan and one head decode, not one per batch).
 */
function groups(users: Array<{ grid: BigInt64Array; c: OverlayColumns }>): Target[][] {
  const sorted = users.filter((x) => x.grid.length > 0).sort((x, y) => (x.grid[0] < y.grid[0] ? -1 : x.grid[0] > y.grid[0] ? 1 : 0));
  const out: Target[][] = [];
  let cur: Target[] = [], lo = 0n, hi = 0n;
  for (const u of sorted) {
    const start = u.grid[0], end = u.grid[u.grid.length - 1];
    if (cur.length > 0 && start - hi > hi - lo) { out.push(cur); cur = []; }
    if (cur.length === 0) { lo = start; hi = end; }
    if (end > hi) hi = end;
    for (let i = 0; i < u.grid.length; i++) cur.push({ at: u.grid[i], c: u.c, i });
  }
  if (cur.length > 0) out.push(cur);
  // episodes that do not overlap (the usual case on one asset) are in order already
  for (const g of out) {
    let sorted = true;
    for (let i = 1; i < g.length && sorted; i++) sorted = g[i - 1].at <= g[i].at;
    if (!sorted) g.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
  }
  return out;
}

export function readOverlayTask(t: ReadOverlayTask): ReturnType<typeof runTask> {
  return runTask(t.format === 'msgpack' ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const keep = minQuality(t.excludeQuality);
    const now = BigInt(t.nowNs);
    const budget = { left: t.maxPoints, limit: t.maxPoints };
    const grids = t.episodes.map((e) => gridInstants(BigInt(e.episode.start_ns), BigInt(e.gridEndNs), t.points));
    const columns = t.episodes.map((e) => e.attributes.map(() => newColumns(t.points)));
    const users = new Map<number, Array<{ grid: BigInt64Array; c: OverlayColumns }>>();
    t.episodes.forEach((e, k) => e.attributes.forEach((ai, s) => {
      const list = users.get(ai);
      const u = { grid: grids[k], c: columns[k][s] };
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

/** One attribute's values at the targets' instants (ascending), under the segments (bindings) that cover them; returns the points read. */
function onGrid(view: ReadView, t: ReadOverlayTask, a: PlanAttribute, targets: Target[], keep: number, now: bigint, budget: { left: number; limit: number }): number {
  const n = targets.length;
  const conv = converterOf(a);
  let visited = 0;
  const put = (x: Target, v: unknown, q: number, interpolated: boolean, series: string) => {
    const c = x.c;
    c.has[x.i] = 1;
    if (c.other === null && typeof v === 'number') c.num[x.i] = v;
    else {
      if (c.other === null) { c.other = new Array<unknown>(c.num.length); for (let i = 0; i < c.num.length; i++) if (c.has[i] === 1) c.other[i] = c.num[i]; }
      c.other[x.i] = v;
    }
    c.quality[x.i] = q;
    if (q > c.maxQuality) c.maxQuality = q;
    if (interpolated) c.interpolated[x.i] = 1;
    c.series[x.i] = series;
  };
  const none = (x: Target, reason: string, series?: string) => { x.c.reason[x.i] = reason; x.c.series[x.i] = series; };
  // the value at targets[i] from the known points, j the last at or before it (-1: none): read-at-task's valueAt
  const valueAt = (k: KnownPoints, j: number, x: Target, series: string) => {
    const at = x.at;
    if (j >= 0 && k.ts[j] === at) { put(x, k.val[j], k.q[j], false, series); return; }
    if (a.continuity === 'event') { none(x, NO_VALUE.event, series); return; }
    if (j < 0) { none(x, NO_VALUE.before, series); return; }
    if (a.continuity === 'stepped') { put(x, k.val[j], k.q[j], true, series); return; }
    if (j + 1 >= k.ts.length) { none(x, NO_VALUE.after, series); return; }
    const v0 = k.num[j], v1 = k.num[j + 1];
    const f = Number(at - k.ts[j]) / Number(k.ts[j + 1] - k.ts[j]);
    put(x, v0 + (v1 - v0) * f, Math.min(k.q[j], k.q[j + 1]), true, series);
  };
  const suspect = () => { for (const x of targets) x.c.suspect = true; };
  let i = 0;
  for (const seg of a.segments) {
    const segStart = BigInt(seg.startNs), segEnd = BigInt(seg.endNs);
    for (; i < n && targets[i].at < segStart; i++) none(targets[i], NO_VALUE.unbound);
    let j = i;
    while (j < n && targets[j].at < segEnd) j++;
    if (j === i) continue;
    // the segment clipped to these instants: the scan reads only the points they need
    const first = targets[i].at, last = targets[j - 1].at + 1n;
    const clipped = { ...seg, startNs: String(first > segStart ? first : segStart), endNs: String(last < segEnd ? last : segEnd) };
    if (sparse(view, clipped, j - i)) {
      for (; i < j; i++) {
        const known = neighbours(view, clipped, targets[i].at, keep, conv, t.members);
        visited += known.ts.length;
        if (known.suspect(now)) suspect();
        valueAt(known, known.ts.length > 0 && known.ts[0] <= targets[i].at ? 0 : -1, targets[i], seg.series);
      }
      continue;
    }
    const known = segmentPoints(view, clipped, keep, conv, budget, t.members);
    visited += known.ts.length;
    if (known.suspect(now)) suspect();
    for (let p = 0; i < j; i++) {
      while (p < known.ts.length && known.ts[p] <= targets[i].at) p++;
      valueAt(known, p - 1, targets[i], seg.series);
    }
  }
  for (; i < n; i++) none(targets[i], NO_VALUE.unbound);
  return visited;
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
  for (let i = 0; i < n; i++) { sink.view.setBigInt64(sink.pos, grid[i], true); sink.pos += 8; }
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
      for (let i = 0; i < n; i++) { sink.view.setFloat64(sink.pos, c.has[i] === 1 ? c.num[i] : NaN, true); sink.pos += 8; }
    } else {
      mpArrayHeader(sink, n);
      for (let i = 0; i < n; i++) mpAny(sink, c.has[i] === 1 ? c.other[i] : null);
    }
    const wide = c.maxQuality > 255;
    sink.bytes(mpKey('quality'));
    binHeader(sink, (wide ? 4 : 1) * n);
    for (let i = 0; i < n; i++) { if (wide) { sink.view.setUint32(sink.pos, c.quality[i], true); sink.pos += 4; } else sink.buf[sink.pos++] = c.quality[i]; }
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
