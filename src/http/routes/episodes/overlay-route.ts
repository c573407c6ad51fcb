// POST /v1/read/episode-overlay (area Reads): episodes chosen by id, by a query, or life
// over life (the last N closed episodes of a template on each asset), each read on a
// normalised u grid (src/episodes/episode-overlay.ts). Scope "each resolved result":
// episodes and attributes the caller may not read are left out; a life-over-life
// selection that cannot fill the lives asked for says so per asset in unresolved_lives.
// layout "columns" answers the same values as columns (overlay-columns.ts), in msgpack
// when the client accepts it; the row layout is the spec's shape, in JSON.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { nowNs } from '../../../clock.js';
import { lastLives } from '../../../episodes/episode-query.js';
import { episodesByIds, type Episode } from '../../../episodes/episode-store.js';
import { episodeOverlay } from '../../../episodes/episode-overlay.js';
import { episodeOverlayColumns } from '../../../episodes/overlay-columns.js';
import { MSGPACK_TYPE } from '../../../workers/task-protocol.js';
import type { ResolveRequest } from '../../../reads/read-resolution.js';
import { episodesOf, assetGate } from './episode-access.js';
import { episodeQueryOf, readable, readablePage, type QueryMembersBody } from './query-route.js';
import { OverlayBody, OverlayResult } from './schemas.js';

type Selection =
  | { kind: 'ids'; ids: string[] }
  | { kind: 'query'; query: QueryMembersBody; limit?: number }
  | { kind: 'lives'; template_id: string; asset_ids: string[]; lives: number; before_ns?: number | bigint };

const DEFAULT_QUERY_LIMIT = 100;

async function selected(ctx: HandlerContext, s: Selection): Promise<{ episodes: Episode[]; unresolved?: Array<{ asset_id: string; reason: string }> }> {
  const { db } = episodesOf(ctx);
  if (s.kind === 'ids') return { episodes: await readable(ctx, await episodesByIds(db, [...new Set(s.ids)])) };
  if (s.kind === 'query') {
    const page = await readablePage(ctx, db, await episodeQueryOf(ctx, s.query), null, s.limit ?? DEFAULT_QUERY_LIMIT);
    return { episodes: page.items };
  }
  const before = s.before_ns === undefined ? nowNs() : BigInt(s.before_ns);
  const gate = assetGate(ctx, 'read');
  const episodes: Episode[] = [];
  const unresolved: Array<{ asset_id: string; reason: string }> = [];
  const taken = new Set<string>();
  for (const assetId of [...new Set(s.asset_ids)]) {
    if (!(await gate([assetId]))) { unresolved.push({ asset_id: assetId, reason: 'asset not found' }); continue; }
    const lives = await readable(ctx, await lastLives(db, s.template_id, assetId, s.lives, before));
    if (lives.length < s.lives) {
      unresolved.push({ asset_id: assetId, reason: `${lives.length} of ${s.lives} lives: the asset has only ${lives.length} closed episode${lives.length === 1 ? '' : 's'} of the template before ${before}` });
    }
    for (const e of lives) if (!taken.has(e.id)) { taken.add(e.id); episodes.push(e); }
  }
  return { episodes, unresolved };
}

export function overlayRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'readEpisodeOverlay', method: 'post', path: '/v1/read/episode-overlay', area: 'Reads',
      summary: 'Episodes laid over each other on a normalised time axis u in [0, 1]: each resolved attribute on each episode\'s assets at `points` instants (the golden-batch comparison)',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      body: OverlayBody, bodyLimit: 4 * 1024 * 1024,
      response: { status: 200, schema: OverlayResult, alsoProduces: [MSGPACK_TYPE] },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        const { episodes, unresolved } = await selected(ctx, b.episodes as Selection);
        if (b.layout === 'columns') {
          const format = ctx.accepts(MSGPACK_TYPE) ? 'msgpack' : 'json';
          const bytes = await episodeOverlayColumns(ctx.service, (c, t) => ctx.can(c, t), b.resolve as ResolveRequest, episodes, b.points, b.units, format, unresolved);
          return { kind: 'bytes', contentType: format === 'msgpack' ? MSGPACK_TYPE : 'application/json', bytes };
        }
        const bytes = await episodeOverlay(ctx.service, (c, t) => ctx.can(c, t), b.resolve as ResolveRequest, episodes, b.points, b.units, unresolved);
        return { kind: 'bytes', contentType: 'application/json', bytes };
      },
    }),
  ];
}
