// Calculation rules under /v1/model/calc/rules: list, create, read, replace (a new
// version), retire and the version history. Each write is one model transaction; the
// engine (src/calc/calc-part.ts) follows the commit feed and re-plans.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { readTxFor } from '../../../model/versions/history.js';
import { modelTransaction } from '../../../model/tx-log.js';
import { nowNs } from '../../../clock.js';
import { ruleAt, rulesAt, ruleVersions, createRuleIn, replaceRuleIn, retireRuleIn } from '../../../calc/rules/rule-store.js';
import { checkRule, verifyRuleGraphIn, RuleGraphMoved, type CheckedRule } from '../../../calc/rules/rule-check.js';
import { resetProgress } from '../../../calc/engine/progress-store.js';
import type { RuleDefinition, StoredRule } from '../../../calc/rules/rule-definition.js';
import { modelOf, who } from '../model/context.js';
import { IdParams, RecomputeQuery, RetireBody, RuleBody, RuleList, RuleListQuery, RuleReadQuery, RuleRef, StoredRule as StoredRuleSchema } from './schemas.js';

async function ruleOf(ctx: HandlerContext, id: string, asOfNs?: number | bigint): Promise<StoredRule> {
  const db = modelOf(ctx).db;
  const rule = await ruleAt(db, await readTxFor(db, asOfNs), id);
  if (!rule) throw new ServiceError('not-found', `calculation rule ${id} not found`);
  return rule;
}

/** Saves that lose the race to another rule save are checked again this many times at most. */
const GRAPH_ATTEMPTS = 5;

/** Checks a rule, then writes it; the write verifies the rules checked against are still current, or the check runs again. */
async function checkedWrite<T>(ctx: HandlerContext, d: RuleDefinition, ruleId: string | null, write: (checked: CheckedRule) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const checked = await checkRule(ctx.service, modelOf(ctx).db, d, ruleId);
    try {
      return await write(checked);
    } catch (e) {
      if (!(e instanceof RuleGraphMoved)) throw e;
      if (attempt >= GRAPH_ATTEMPTS) throw new ServiceError('conflict', 'other calculation rules kept changing while this one was checked; try again');
    }
  }
}

export function ruleRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listCalcRules', method: 'get', path: '/v1/model/calc/rules', area: 'Model',
      summary: 'Calculation rules (retired ones too), optionally of one template or one asset, optionally as of a time',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      query: RuleListQuery,
      response: { status: 200, schema: RuleList },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const db = modelOf(ctx).db;
        return { body: await rulesAt(db, await readTxFor(db, ctx.query.as_of_ns), { templateId: ctx.query.template_id, assetId: ctx.query.asset_id }) };
      },
    }),
    defineRoute({
      operationId: 'createCalcRule', method: 'post', path: '/v1/model/calc/rules', area: 'Model',
      summary: 'Create a calculation rule (version 1), checked against the model: expression, units, references, cycles',
      access: { kind: 'capability', capability: 'calc-author', scope: 'anywhere' },
      body: RuleBody,
      response: { status: 201, schema: RuleRef },
      errors: [400, 401, 403, 409, 503],
      handler: async (ctx) => {
        const d = ctx.body as RuleDefinition;
        const model = modelOf(ctx);
        const c = await checkedWrite(ctx, d, null, (checked) => modelTransaction(model.db, who(ctx, d.reason), async (q, txId, events) => {
          await verifyRuleGraphIn(q, checked.graphStamp);
          return createRuleIn(q, txId, events, d, checked.inputRefs, nowNs());
        }));
        return { status: 201, body: { rule_id: c.result, version: 1 } };
      },
    }),
    defineRoute({
      operationId: 'getCalcRule', method: 'get', path: '/v1/model/calc/rules/{id}', area: 'Model',
      summary: 'One calculation rule, optionally as of a time',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: IdParams, query: RuleReadQuery,
      response: { status: 200, schema: StoredRuleSchema },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: await ruleOf(ctx, ctx.params.id, ctx.query.as_of_ns) }),
    }),
    defineRoute({
      operationId: 'replaceCalcRule', method: 'put', path: '/v1/model/calc/rules/{id}', area: 'Model',
      summary: 'Replace a calculation rule with a new version; recompute says whether past outputs are recomputed with it',
      access: { kind: 'capability', capability: 'calc-author', scope: 'anywhere' },
      params: IdParams, query: RecomputeQuery, body: RuleBody,
      response: { status: 200, schema: RuleRef },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const d = ctx.body as RuleDefinition;
        const model = modelOf(ctx);
        if (!(await ruleAt(model.db, null, ctx.params.id))) throw new ServiceError('not-found', `calculation rule ${ctx.params.id} not found`);
        const c = await checkedWrite(ctx, d, ctx.params.id, (checked) => modelTransaction(model.db, who(ctx, d.reason), async (q, txId, events) => {
          await verifyRuleGraphIn(q, checked.graphStamp);
          const version = await replaceRuleIn(q, txId, events, ctx.params.id, d, checked.inputRefs, ctx.query.recompute, nowNs());
          // history: every output is evaluated again with the new version, from the inputs' first point.
          if (ctx.query.recompute === 'history') await resetProgress(q, ctx.params.id);
          return version;
        }));
        return { body: { rule_id: ctx.params.id, version: c.result } };
      },
    }),
    defineRoute({
      operationId: 'retireCalcRule', method: 'post', path: '/v1/model/calc/rules/{id}/retire', area: 'Model',
      summary: 'Retire a calculation rule (a new version, retired); its outputs stay, no new ones are written',
      access: { kind: 'capability', capability: 'calc-author', scope: 'anywhere' },
      params: IdParams, body: RetireBody, bodyOptional: true,
      response: { status: 200, schema: StoredRuleSchema },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        await modelTransaction(model.db, who(ctx, ctx.body.reason), (q, txId, events) => retireRuleIn(q, txId, events, ctx.params.id, nowNs()));
        return { body: await ruleOf(ctx, ctx.params.id) };
      },
    }),
    defineRoute({
      operationId: 'listCalcRuleVersions', method: 'get', path: '/v1/model/calc/rules/{id}/versions', area: 'Model',
      summary: 'Every version of a calculation rule, oldest first',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: IdParams,
      response: { status: 200, schema: RuleList },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const versions = await ruleVersions(modelOf(ctx).db, ctx.params.id);
        if (versions.length === 0) throw new ServiceError('not-found', `calculation rule ${ctx.params.id} not found`);
        return { body: versions };
      },
    }),
  ];
}
