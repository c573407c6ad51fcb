// Episode templates: create (version 1), list, read (a past version, or as of a time) and
// replace (PUT writes the next version; episodes keep theirs).
import { defineRoute, type AnyRoute } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { readTxFor } from '../../../model/versions/history.js';
import { createEpisodeTemplate, replaceEpisodeTemplate, episodeTemplateAt, episodeTemplatesAt } from '../../../episodes/episode-templates.js';
import { episodesOf, who } from './episode-access.js';
import { IdParams, TemplateBody, Created, EpisodeTemplate, TemplateList, TemplateListQuery, TemplateQuery } from './schemas.js';

const AREA = 'Episodes';

export function templateRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createEpisodeTemplate', method: 'post', path: '/v1/episodes/templates', area: AREA,
      summary: 'Create an episode template (version 1): roles, attributes with capture rules, naming, children, overlap, trigger',
      access: { kind: 'capability', capability: 'episode-manage', scope: 'anywhere' },
      body: TemplateBody,
      response: { status: 201, schema: Created },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const { db, part } = episodesOf(ctx);
        const c = await createEpisodeTemplate(db, who(ctx, ctx.body.reason), ctx.body, part.checkTrigger);
        return { status: 201, body: { id: c.id, version: c.version } };
      },
    }),
    defineRoute({
      operationId: 'listEpisodeTemplates', method: 'get', path: '/v1/episodes/templates', area: AREA,
      summary: 'Every episode template (its current version, or as of a time), by name; optionally one family',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      query: TemplateListQuery,
      response: { status: 200, schema: TemplateList },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const { db } = episodesOf(ctx);
        return { body: { templates: await episodeTemplatesAt(db, await readTxFor(db, ctx.query.as_of_ns), ctx.query.family) } };
      },
    }),
    defineRoute({
      operationId: 'getEpisodeTemplate', method: 'get', path: '/v1/episodes/templates/{id}', area: AREA,
      summary: 'An episode template: the current version, the one valid at as_of_ns, or a named version',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: IdParams, query: TemplateQuery,
      response: { status: 200, schema: EpisodeTemplate },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const { db } = episodesOf(ctx);
        const t = await episodeTemplateAt(db, await readTxFor(db, ctx.query.as_of_ns), ctx.params.id, ctx.query.version);
        if (!t) throw new ServiceError('not-found', `episode template ${ctx.params.id}${ctx.query.version ? ` version ${ctx.query.version}` : ''} not found`);
        return { body: t };
      },
    }),
    defineRoute({
      operationId: 'replaceEpisodeTemplate', method: 'put', path: '/v1/episodes/templates/{id}', area: AREA,
      summary: 'Replace an episode template: writes its next version (existing episodes keep the version they were made with)',
      access: { kind: 'capability', capability: 'episode-manage', scope: 'anywhere' },
      params: IdParams, body: TemplateBody,
      response: { status: 200, schema: Created },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const { db, part } = episodesOf(ctx);
        const c = await replaceEpisodeTemplate(db, who(ctx, ctx.body.reason), ctx.params.id, ctx.body, part.checkTrigger);
        return { body: { id: c.id, version: c.version } };
      },
    }),
  ];
}
