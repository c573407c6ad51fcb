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
import { parseJson } from '../json/json.js';
import { nowNs } from '../clock.js';
import type { Episode } from './episode-store.js';

/** Most instants per episode. */
export const MAX_OVERLAY_POINTS = 10_000;
/** Most episodes in one overlay. */
export const MAX_OVERLAY_EPISODES = 1_000;
/** readAt tasks in flight per worker. */
const TASKS_PER_WORKER = 4;

export interface OverlayPoint { u: number; ts_ns: bigint; value?: unknown; quality?: number; interpolated?: boolean; no_value?: string }
export interface OverlaySeries { attribute_id: string; path: string; points: OverlayPoint[]; provenance: Record<string, unknown> }
export interface OverlayEpisode {
  episode: { id: string; name: string; template: string; start_ns: bigint; end_ns: bigint | null };
  series: OverlaySeries[];
}

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

export async function episodeOverlay(service: ServiceContext, can: Can, req: ResolveRequest, episodes: Episode[], points: number, units: ReadUnitsRequest | undefined): Promise<OverlayEpisode[]> {
  if (episodes.length === 0) return [];
  const now = nowNs();
  const ends = episodes.map((e) => (e.end_ns ?? (now > e.start_ns ? now : e.start_ns + 1n)));
  let lo = episodes[0].start_ns, hi = ends[0];
  for (let i = 1; i < episodes.length; i++) { if (episodes[i].start_ns < lo) lo = episodes[i].start_ns; if (ends[i] > hi) hi = ends[i]; }
  const r = await resolveRead(service, can, req, { startNs: lo, endNs: hi + 1n });
  const plans = await unitPlans(service, r.attributes, units);
  const byAsset = new Map<string, ReadResolution['attributes']>();
  for (const a of r.attributes) {
    const list = byAsset.get(a.assetId);
    if (list) list.push(a); else byAsset.set(a.assetId, [a]);
  }
  const pool = service.parts.readPool;
  const out: OverlayEpisode[] = new Array(episodes.length);
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
    const head = { id: e.id, name: e.name, template: e.template, start_ns: e.start_ns, end_ns: e.end_ns };
    if (attrs.length === 0 || points === 0) {
      out[k] = { episode: head, series: attrs.map((a) => ({ attribute_id: a.attributeId, path: a.path, points: [], provenance: {} })) };
      return;
    }
    const instants: string[] = [];
    for (let i = 0; i < grid.ts.length; i++) if (i === 0 || grid.ts[i] !== grid.ts[i - 1]) instants.push(String(grid.ts[i]));
    const base = readTaskBase({ ...r, attributes: attrs }, plans, { format: 'json', maxPoints: Math.max(DEFAULT_MAX_POINTS, attrs.length * points) });
    const body = await pool.run('readAt', { ...base, instants, grid: null });
    let items: AtItem[];
    try { items = parseJson(body.bytes) as AtItem[]; } finally { body.release(); }
    out[k] = { episode: head, series: items.map((it) => ({ attribute_id: it.attribute_id, path: it.path, points: onGrid(grid, it.points), provenance: it.provenance })) };
  };
  const worker = async () => { while (next < episodes.length) await one(next++); };
  await Promise.all(Array.from({ length: Math.min(inFlight, episodes.length) }, worker));
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
