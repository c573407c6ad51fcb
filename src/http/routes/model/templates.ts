// Templates: list, create, read (optionally as of a time) and replace as a new version.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { readTxFor } from '../../../model/versions/history.js';
import { templatesAt, createTemplate, patchTemplate } from '../../../model/templates/templates.js';
import { modelOf, who } from './context.js';
import { UuidParams, AsOfQuery, Template, TemplateBody, TemplateList } from './schemas.js';

async function templateOf(ctx: HandlerContext, id: string, asOfNs?: number | bigint) {
  const model = modelOf(ctx);
  const [t] = await templatesAt(model.db, await readTxFor(model.db, asOfNs), [id]);
  if (!t) throw new ServiceError('not-found', `template ${id} not found`);
  return t;
}

export function templateRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listTemplates', method: 'get', path: '/v1/model/templates', area: 'Model',
      summary: 'Every template with its attribute definitions, by name',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      query: AsOfQuery,
      response: { status: 200, schema: TemplateList },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        return { body: { templates: await templatesAt(model.db, await readTxFor(model.db, ctx.query.as_of_ns)) } };
      },
    }),
    defineRoute({
      operationId: 'createTemplate', method: 'post', path: '/v1/model/templates', area: 'Model',
      summary: 'Create a template (version 1)',
      access: { kind: 'capability', capability: 'model-edit', scope: 'global' },
      body: TemplateBody,
      response: { status: 201, schema: Template },
      errors: [400, 401, 403, 409, 503],
      handler: async (ctx) => {
        const { templateId } = await createTemplate(modelOf(ctx), who(ctx, ctx.body.reason), ctx.body);
        return { status: 201, body: await templateOf(ctx, templateId) };
      },
    }),
    defineRoute({
      operationId: 'getTemplate', method: 'get', path: '/v1/model/templates/{uuid}', area: 'Model',
      summary: 'One template with its definitions, optionally as of a time',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: UuidParams, query: AsOfQuery,
      response: { status: 200, schema: Template },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: await templateOf(ctx, ctx.params.uuid, ctx.query.as_of_ns) }),
    }),
    defineRoute({
      operationId: 'patchTemplate', method: 'patch', path: '/v1/model/templates/{uuid}', area: 'Model',
      summary: 'Replace a template with a new version; definitions keep their ids while their names stay',
      access: { kind: 'capability', capability: 'model-edit', scope: 'global' },
      params: UuidParams, body: TemplateBody,
      response: { status: 200, schema: Template },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        await patchTemplate(modelOf(ctx), who(ctx, ctx.body.reason), ctx.params.uuid, ctx.body);
        return { body: await templateOf(ctx, ctx.params.uuid) };
      },
    }),
  ];
}
