// POST /v1/read/episode-overlay with `layout: "columns"`: the same values as the row layout
// (episode-overlay.ts), gathered by the read pool into typed columns per episode x attribute
// (src/workers/tasks/read-overlay-task.ts), in JSON or msgpack. The u grid is the same for
// every episode, so it is sent once: {layout: "columns", u: [...], episodes: [{episode,
// ts_ns, series: [...]}], unresolved_lives?}. The episodes are split into a few runs, one
// task each, so both workers gather at once and the HTTP thread only joins their bodies.
import type { ServiceContext } from '../service-context.js';
import type { Can, ReadResolution, ResolveRequest } from '../reads/read-resolution.js';
import type { ReadUnitsRequest } from '../reads/read-units.js';
import { readTaskBase, DEFAULT_MAX_POINTS } from '../reads/read-plan.js';
import { stringifyJson } from '../json/json.js';
import type { BodyFormat, ReadOverlayTask } from '../workers/task-protocol.js';
import type { Episode } from './episode-store.js';
import { overlayResolution } from './episode-overlay.js';

/** Tasks per worker: enough to even out episodes of different sizes, few enough to keep the per-task cost small. */
const TASKS_PER_WORKER = 2;

/** The u grid: u_i = i / (points - 1) (one point: 0). */
export function uValues(points: number): Float64Array {
  const u = new Float64Array(points);
  for (let i = 0; i < points; i++) u[i] = points === 1 ? 0 : i / (points - 1);
  return u;
}

export async function episodeOverlayColumns(service: ServiceContext, can: Can, req: ResolveRequest, episodes: Episode[], points: number,
  units: ReadUnitsRequest | undefined, format: BodyFormat, unresolved?: Array<{ asset_id: string; reason: string }>): Promise<Buffer> {
  const bodies: Uint8Array[] = [];
  if (episodes.length > 0) {
    const { ends, r, plans } = await overlayResolution(service, can, req, episodes, units);
    const byAsset = new Map<string, number[]>();
    r.attributes.forEach((a: ReadResolution['attributes'][number], k: number) => {
      const list = byAsset.get(a.assetId);
      if (list) list.push(k); else byAsset.set(a.assetId, [k]);
    });
    const items: ReadOverlayTask['episodes'] = episodes.map((e, k) => {
      const attributes: number[] = [];
      for (const assetId of new Set(e.assets.map((a) => a.asset_id))) for (const i of byAsset.get(assetId) ?? []) attributes.push(i);
      return {
        episode: { id: e.id, name: e.name, template: e.template, start_ns: String(e.start_ns), end_ns: e.end_ns === null ? null : String(e.end_ns) },
        gridEndNs: String(ends[k]), attributes,
      };
    });
    let values = 0;
    for (const it of items) values += it.attributes.length * points;
    const base = readTaskBase(r, plans, { format, maxPoints: Math.max(DEFAULT_MAX_POINTS, values) });
    const pool = service.parts.readPool;
    const tasks = Math.max(1, Math.min(items.length, pool.threads * TASKS_PER_WORKER));
    const per = Math.ceil(items.length / tasks);
    const runs: Array<ReadOverlayTask['episodes']> = [];
    for (let k = 0; k < items.length; k += per) runs.push(items.slice(k, k + per));
    const done = await Promise.all(runs.map(async (run) => {
      const body = await pool.run('readOverlay', { ...base, points, episodes: run, fragment: true });
      try { return Buffer.from(body.bytes); } finally { body.release(); }
    }));
    for (const b of done) bodies.push(b);
  }
  return format === 'msgpack' ? msgpackEnvelope(points, episodes.length, bodies, unresolved) : jsonEnvelope(points, bodies, unresolved);
}

function jsonEnvelope(points: number, bodies: Uint8Array[], unresolved?: Array<{ asset_id: string; reason: string }>): Buffer {
  const parts: Uint8Array[] = [Buffer.from(`{"layout":"columns","u":[${uValues(points).join(',')}],"episodes":[`)];
  for (let k = 0; k < bodies.length; k++) { if (k > 0) parts.push(Buffer.from(',')); parts.push(bodies[k]); }
  parts.push(Buffer.from(unresolved && unresolved.length > 0 ? `],"unresolved_lives":${stringifyJson(unresolved)}}` : ']}'));
  return Buffer.concat(parts);
}

/** msgpack: a fixstr key (member names here are short ASCII). */
const key = (s: string) => Buffer.concat([Buffer.of(0xa0 | s.length), Buffer.from(s, 'ascii')]);
const str = (s: string) => { const b = Buffer.from(s, 'utf8'); const h = Buffer.alloc(5); h[0] = 0xdb; h.writeUInt32BE(b.length, 1); return Buffer.concat([h, b]); };

function msgpackEnvelope(points: number, episodes: number, bodies: Uint8Array[], unresolved?: Array<{ asset_id: string; reason: string }>): Buffer {
  const withLives = unresolved !== undefined && unresolved.length > 0;
  const u = uValues(points);
  const uBin = Buffer.alloc(5 + 8 * points);
  uBin[0] = 0xc6; uBin.writeUInt32BE(8 * points, 1);
  for (let i = 0; i < points; i++) uBin.writeDoubleLE(u[i], 5 + 8 * i);
  const arr = Buffer.alloc(5); arr[0] = 0xdd; arr.writeUInt32BE(episodes, 1);
  const parts: Uint8Array[] = [Buffer.of(0x80 | (withLives ? 4 : 3)), key('layout'), str('columns'), key('u'), uBin, key('episodes'), arr, ...bodies];
  if (withLives) {
    const lives = Buffer.alloc(5); lives[0] = 0xdd; lives.writeUInt32BE(unresolved.length, 1);
    parts.push(key('unresolved_lives'), lives);
    for (const x of unresolved) parts.push(Buffer.of(0x82), key('asset_id'), str(x.asset_id), key('reason'), str(x.reason));
  }
  return Buffer.concat(parts);
}
