// POST /v1/read/episode-overlay: episodes of different lengths laid over each other on a
// normalised time axis u in [0, 1] (the golden-batch comparison). Each episode gets
// `points` instants, u_i = i / (points - 1), at start + (end - start) * u_i (rounded down
// to the nanosecond; an open episode ends now), and each resolved attribute on the
// episode's assets is read at those instants by the read pool's readAt task: exactly the
// values POST /v1/read/at answers (interpolated by continuity, with interpolated flags and
// no_value reasons), so an overlay never disagrees with a trend of the same batch.
//
// One resolution serves every episode (the window spans them all); one readAt task per
// episode carries that episode's attributes and instants, at most a few tasks per worker
// in flight, so a 100-episode overlay keeps both workers busy without filling the queue.
import type { ServiceContext } from '../service-context.js';
import type { Can, ReadResolution, ResolveRequest } from '../reads/read-resolution.js';
import { resolveRead } from '../reads/read-resolution.js';
import { unitPlans, type ReadUnitsRequest } from '../reads/read-units.js';
import { readTaskBase, DEFAULT_MAX_POINTS } from '../reads/read-plan.js';
import { parseJson, stringifyJson } from '../json/json.js';
import { nowNs } from '../clock.js';
import type { Episode } from './episode-store.js';

/** Most instants per episode. */
export const MAX_OVERLAY_POINTS = 10_000;
/** Most episodes in one overlay. */
export const MAX_OVERLAY_EPISODES = 1_000;
/** readAt tasks in flight per worker. */
const TASKS_PER_WORKER = 4;

export interface OverlayPoint { u: number; ts_ns: bigint; value?: unknown; quality?: number; interpolated?: boolean; no_value?: string }

interface AtPoint { ts_ns: bigint | number; value?: unknown; quality?: number; interpolated?: boolean; no_value?: string }
interface AtItem { attribute_id: string; path: string; points: AtPoint[]; provenance: Record<string, unknown> }

/** The u grid and its instants for one episode; instants ascending, repeats kept (a short episode may give the same ns twice). */
export function uGrid(startNs: bigint, endNs: bigint, points: number): { u: Float64Array; ts: bigint[] } {
  const u = new Float64Array(points);
  const ts = new Array<bigint>(points);
  const span = endNs - startNs;
  const last = BigInt(Math.max(1, points - 1));
  for (let i = 0; i < points; i++) {
    u[i] = points === 1 ? 0 : i / (points - 1);
    ts[i] = startNs + (span * BigInt(i)) / last;
  }
  return { u, ts };
}

/**
 * Each episode's grid end (an open one ends now) and one resolution over the span of all
 * the episodes (both layouts read each episode's own window of it).
 */
export async function overlayResolution(service: ServiceContext, can: Can, req: ResolveRequest, episodes: Episode[], units: ReadUnitsRequest | undefined):
  Promise<{ ends: bigint[]; r: ReadResolution; plans: Awaited<ReturnType<typeof unitPlans>> }> {
  const now = nowNs();
  const ends = episodes.map((e) => (e.end_ns ?? (now > e.start_ns ? now : e.start_ns + 1n)));
  let lo = episodes[0].start_ns, hi = ends[0];
  for (let i = 1; i < episodes.length; i++) { if (episodes[i].start_ns < lo) lo = episodes[i].start_ns; if (ends[i] > hi) hi = ends[i]; }
  const r = await resolveRead(service, can, req, { startNs: lo, endNs: hi + 1n });
  return { ends, r, plans: await unitPlans(service, r.attributes, units) };
}

/**
 * The overlay body's bytes: `{"episodes": [...]}` (and `unresolved_lives` when given). Each
 * episode's series come from its readAt task's JSON as the worker wrote it, with `"u":<u>,`
 * spliced in front of each point's `"ts_ns"`: the 500,000 points of a 100 x 10 x 500 overlay
 * are never parsed and written again on this thread (that round trip took most of the time,
 * bench/episodes.ts, 2026-11-27). The splice relies on the worker writing each point as an
 * object that begins with `{"ts_ns":` (src/workers/tasks/read-at-task.ts), a sequence no JSON
 * string can hold (its quote would be escaped). A grid with repeated instants (an episode
 * shorter than `points` ns) is laid out through the parsed path instead.
 */
export async function episodeOverlay(service: ServiceContext, can: Can, req: ResolveRequest, episodes: Episode[], points: number,
  units: ReadUnitsRequest | undefined, unresolved?: Array<{ asset_id: string; reason: string }>): Promise<Buffer> {
  const parts: Uint8Array[] = [Buffer.from('{"episodes":[')];
  if (episodes.length > 0) {
    const { ends, r, plans } = await overlayResolution(service, can, req, episodes, units);
    const byAsset = new Map<string, ReadResolution['attributes']>();
    for (const a of r.attributes) {
      const list = byAsset.get(a.assetId);
      if (list) list.push(a); else byAsset.set(a.assetId, [a]);
    }
    const uText: Buffer[] = [];
    for (let i = 0; i < points; i++) uText.push(Buffer.from(`"u":${points === 1 ? 0 : i / (points - 1)},`));
    const pool = service.parts.readPool;
    const bodies: Uint8Array[] = new Array(episodes.length);
    const inFlight = Math.max(1, pool.threads * TASKS_PER_WORKER);
    let next = 0;
    const one = async (k: number): Promise<void> => {
      const e = episodes[k];
      const grid = uGrid(e.start_ns, ends[k], points);
      const seen = new Set<string>();
      const attrs: ReadResolution['attributes'] = [];
      for (const a of e.assets) {
        if (seen.has(a.asset_id)) continue;
        seen.add(a.asset_id);
        for (const x of byAsset.get(a.asset_id) ?? []) attrs.push(x);
      }
      const head = Buffer.from(`{"episode":${stringifyJson({ id: e.id, name: e.name, template: e.template, start_ns: e.start_ns, end_ns: e.end_ns })},"series":[`);
      if (attrs.length === 0 || points === 0) {
        bodies[k] = Buffer.concat([head, Buffer.from(stringifyJson(attrs.map((a) => ({ attribute_id: a.attributeId, path: a.path, points: [], provenance: {} }))).slice(1, -1)), CLOSE]);
        return;
      }
      const instants: string[] = [];
      for (let i = 0; i < grid.ts.length; i++) if (i === 0 || grid.ts[i] !== grid.ts[i - 1]) instants.push(String(grid.ts[i]));
      const repeats = instants.length !== grid.ts.length;
      // each task reads its own episode only: the bindings clipped to [start, end], not the span of all episodes
      const window = { startNs: e.start_ns, endNs: ends[k] + 1n };
      const clipped = attrs.map((a) => ({
        ...a,
        segments: a.segments.filter((g) => g.startNs < window.endNs && g.endNs > window.startNs).map((g) => ({
          ...g, startNs: g.startNs > window.startNs ? g.startNs : window.startNs, endNs: g.endNs < window.endNs ? g.endNs : window.endNs,
        })),
      }));
      const base = readTaskBase({ ...r, window, attributes: clipped }, plans, { format: 'json', maxPoints: Math.max(DEFAULT_MAX_POINTS, attrs.length * points) });
      const body = await pool.run('readAt', { ...base, instants, grid: null, fragment: !repeats });
      try {
        if (!repeats) { bodies[k] = Buffer.concat([head, ...spliceU(body.bytes, uText), CLOSE]); return; }
        const items = parseJson(body.bytes) as AtItem[];
        const series = items.map((it) => ({ attribute_id: it.attribute_id, path: it.path, points: onGrid(grid, it.points), provenance: it.provenance }));
        bodies[k] = Buffer.concat([head, Buffer.from(stringifyJson(series).slice(1, -1)), CLOSE]);
      } finally {
        body.release();
      }
    };
    const worker = async () => { while (next < episodes.length) await one(next++); };
    await Promise.all(Array.from({ length: Math.min(inFlight, episodes.length) }, worker));
    for (let k = 0; k < bodies.length; k++) { if (k > 0) parts.push(COMMA); parts.push(bodies[k]); }
  }
  parts.push(Buffer.from(unresolved && unresolved.length > 0 ? `],"unresolved_lives":${stringifyJson(unresolved)}}` : ']}'));
  return Buffer.concat(parts);
}

const TS_NS = Buffer.from('{"ts_ns":');
const CLOSE = Buffer.from(']}');
const COMMA = Buffer.from(',');

/** The worker's items with `"u":<u>,` after the brace of each point; the k-th point of an item gets u_k. */
function spliceU(bytes: Uint8Array, uText: Buffer[]): Uint8Array[] {
  const src = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Uint8Array[] = [];
  let last = 0, k = 0;
  for (let at = src.indexOf(TS_NS, 0); at >= 0; at = src.indexOf(TS_NS, at + TS_NS.length)) {
    out.push(src.subarray(last, at + 1), uText[k]);
    last = at + 1;
    if (++k === uText.length) k = 0;
  }
  out.push(src.subarray(last));
  return out;
}

/** The task's values (one per distinct instant) laid on the u grid (one per grid point). */
function onGrid(grid: { u: Float64Array; ts: bigint[] }, pts: AtPoint[]): OverlayPoint[] {
  const out: OverlayPoint[] = new Array(grid.ts.length);
  let j = -1;
  for (let i = 0; i < grid.ts.length; i++) {
    if (i === 0 || grid.ts[i] !== grid.ts[i - 1]) j++;
    const p = pts[j];
    const o: OverlayPoint = { u: grid.u[i], ts_ns: grid.ts[i] };
    if (p.value !== undefined) o.value = p.value;
    if (p.quality !== undefined) o.quality = p.quality;
    if (p.interpolated) o.interpolated = true;
    if (p.no_value !== undefined) o.no_value = p.no_value;
    out[i] = o;
  }
  return out;
}
