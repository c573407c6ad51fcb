// Episodes: create, read (as of a time), edit with a version check, close (captures
// computed and stored), void (kept and auditable).
import { defineRoute, type AnyRoute } from '../../route.js';
import { readTxFor } from '../../../model/versions/history.js';
import { nowNs } from '../../../clock.js';
import { createEpisode, editEpisode, closeEpisode, voidEpisode, episodeAt } from '../../../episodes/episode-store.js';
import { episodesOf, who, authorizeEpisode, authorizeAssets } from './episode-access.js';
import { IdParams, AsOfQuery, CreateEpisodeBody, EditEpisodeBody, CloseBody, VoidBody, Episode } from './schemas.js';

const AREA = 'Episodes';
const MANAGE = { kind: 'capability', capability: 'episode-manage', scope: 'handler' } as const;
const big = (v: number | bigint) => BigInt(v);

export function episodeRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createEpisode', method: 'post', path: '/v1/episodes', area: AREA,
      summary: 'Create an episode of a template: assets in roles, start, optional end (then closed, attributes captured), entered values',
      access: MANAGE,
      body: CreateEpisodeBody,
      response: { status: 201, schema: Episode },
      errors: [400, 401, 403, 409, 503],
      handler: async (ctx) => {
        const { db, part } = episodesOf(ctx);
        const b = ctx.body;
        await authorizeAssets(ctx, (b.assets ?? []).map((a) => a.asset_id));
        const e = await createEpisode(db, who(ctx, b.reason), {
          template_id: b.template_id, name: b.name, assets: b.assets, start_ns: big(b.start_ns),
          end_ns: b.end_ns === undefined || b.end_ns === null ? null : big(b.end_ns), parent_id: b.parent_id ?? null, attributes: b.attributes,
        }, part.capture);
        return { status: 201, body: e };
      },
    }),
    defineRoute({
      operationId: 'getEpisode', method: 'get', path: '/v1/episodes/{id}', area: AREA,
      summary: 'An episode, current or as it was at as_of_ns',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: IdParams, query: AsOfQuery,
      response: { status: 200, schema: Episode },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const { db } = episodesOf(ctx);
        const e = await episodeAt(db, await readTxFor(db, ctx.query.as_of_ns), ctx.params.id);
        return { body: await authorizeEpisode(ctx, e, ctx.params.id, 'read') };
      },
    }),
    defineRoute({
      operationId: 'editEpisode', method: 'put', path: '/v1/episodes/{id}', area: AREA,
      summary: 'Edit an episode (name, assets, times, parent, entered values); expected_version must be the current one (409 otherwise)',
      access: MANAGE,
      params: IdParams, body: EditEpisodeBody,
      response: { status: 200, schema: Episode },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const { db, part } = episodesOf(ctx);
        const b = ctx.body;
        await authorizeEpisode(ctx, await episodeAt(db, null, ctx.params.id), ctx.params.id, 'episode-manage');
        if (b.assets) await authorizeAssets(ctx, b.assets.map((a) => a.asset_id));
        const e = await editEpisode(db, who(ctx, b.reason), ctx.params.id, {
          expected_version: b.expected_version, name: b.name, assets: b.assets, parent_id: b.parent_id, attributes: b.attributes,
          start_ns: b.start_ns === undefined ? undefined : big(b.start_ns), end_ns: b.end_ns === undefined ? undefined : big(b.end_ns),
        }, part.capture);
        return { body: e };
      },
    }),
    defineRoute({
      operationId: 'closeEpisode', method: 'post', path: '/v1/episodes/{id}/close', area: AREA,
      summary: 'Close an open episode (at end_ns, default now): its captured attributes are computed and stored',
      access: MANAGE,
      params: IdParams, body: CloseBody, bodyOptional: true,
      response: { status: 200, schema: Episode },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const { db, part } = episodesOf(ctx);
        await authorizeEpisode(ctx, await episodeAt(db, null, ctx.params.id), ctx.params.id, 'episode-manage');
        const endNs = ctx.body.end_ns === undefined ? nowNs() : big(ctx.body.end_ns);
        return { body: await closeEpisode(db, who(ctx, ctx.body.reason), ctx.params.id, { end_ns: endNs, expected_version: ctx.body.expected_version }, part.capture) };
      },
    }),
    defineRoute({
      operationId: 'voidEpisode', method: 'post', path: '/v1/episodes/{id}/void', area: AREA,
      summary: 'Void an episode: kept with its reason and history, left out of queries unless asked for',
      access: MANAGE,
      params: IdParams, body: VoidBody,
      response: { status: 200, schema: Episode },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const { db } = episodesOf(ctx);
        await authorizeEpisode(ctx, await episodeAt(db, null, ctx.params.id), ctx.params.id, 'episode-manage');
        return { body: await voidEpisode(db, who(ctx, ctx.body.reason), ctx.params.id, { reason: ctx.body.reason, expected_version: ctx.body.expected_version }) };
      },
    }),
  ];
}
