// Genealogy: the typed links of an episode (read, create) and the walk along them
// upstream or downstream to a depth, cycle-safe and permission-filtered.
import { defineRoute, type AnyRoute } from '../../route.js';
import { invalid } from '../../../errors.js';
import { readTxFor } from '../../../model/versions/history.js';
import { episodeAt, episodesByIds } from '../../../episodes/episode-store.js';
import { createEpisodeLink, linksOfEpisode, walkEpisodes } from '../../../episodes/episode-links.js';
import { registryEntryId } from '../../../episodes/episode-templates.js';
import { episodesOf, who, authorizeEpisode } from './episode-access.js';
import { readable } from './query-route.js';
import { IdParams, AsOfQuery, CreateLinkBody, EpisodeLink, LinkList, TraverseBody, TraverseResult } from './schemas.js';

const AREA = 'Episodes';
const DEFAULT_DEPTH = 10;

export function genealogyRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listEpisodeLinks', method: 'get', path: '/v1/episodes/{id}/links', area: AREA,
      summary: 'The links of an episode, outgoing and incoming (those to episodes the caller may read), current or as of a time',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: IdParams, query: AsOfQuery,
      response: { status: 200, schema: LinkList },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const { db } = episodesOf(ctx);
        const tx = await readTxFor(db, ctx.query.as_of_ns);
        await authorizeEpisode(ctx, await episodeAt(db, tx, ctx.params.id), ctx.params.id, 'read');
        const links = await linksOfEpisode(db, tx, ctx.params.id);
        const others = [...new Set(links.map((l) => (l.from_episode === ctx.params.id ? l.to_episode : l.from_episode)))];
        const seen = new Set((await readable(ctx, await episodesByIds(db, others))).map((e) => e.id));
        return { body: { links: links.filter((l) => seen.has(l.from_episode === ctx.params.id ? l.to_episode : l.from_episode)) } };
      },
    }),
    defineRoute({
      operationId: 'createEpisodeLink', method: 'post', path: '/v1/episodes/{id}/links', area: AREA,
      summary: 'Link this episode to another with a link type from the link-types registry (consumed-by, produced-from, ...)',
      access: { kind: 'capability', capability: 'episode-manage', scope: 'handler' },
      params: IdParams, body: CreateLinkBody,
      response: { status: 201, schema: EpisodeLink },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const { db } = episodesOf(ctx);
        await authorizeEpisode(ctx, await episodeAt(db, null, ctx.params.id), ctx.params.id, 'episode-manage');
        const other = await episodeAt(db, null, ctx.body.to_episode);
        if (!other) throw invalid('to_episode', `no episode ${ctx.body.to_episode}`);
        await authorizeEpisode(ctx, other, ctx.body.to_episode, 'episode-manage');
        const link = await createEpisodeLink(db, who(ctx, ctx.body.reason), ctx.params.id, ctx.body.to_episode, ctx.body.link_type);
        return { status: 201, body: link };
      },
    }),
    defineRoute({
      operationId: 'traverseEpisodes', method: 'post', path: '/v1/episodes/traverse', area: AREA,
      summary: 'Walk genealogy links from episodes upstream or downstream to a depth ("which batches used this lot?"); cycles end at episodes already reached',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      body: TraverseBody,
      response: { status: 200, schema: TraverseResult },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const { db } = episodesOf(ctx);
        const b = ctx.body;
        let types: string[] | null = null;
        if (b.link_types) {
          types = [];
          for (const [i, name] of b.link_types.entries()) {
            const e = await registryEntryId(db, 'link-types', name);
            if (!e) throw invalid(`link_types/${i}`, `no link-types registry entry named or numbered "${name}"`);
            types.push(e.id);
          }
        }
        const starts = (await readable(ctx, await episodesByIds(db, [...new Set(b.start)]))).map((e) => e.id);
        const visible = async (ids: string[]) => new Set((await readable(ctx, await episodesByIds(db, ids))).map((e) => e.id));
        const walk = await walkEpisodes(db, starts, b.direction, b.depth ?? DEFAULT_DEPTH, types, visible);
        const episodes = await episodesByIds(db, [...walk.reached.keys()]);
        return {
          body: {
            episodes: episodes.map((e) => ({ depth: walk.reached.get(e.id) ?? 0, episode: e })),
            links: walk.links,
            truncated: walk.truncated,
          },
        };
      },
    }),
  ];
}
