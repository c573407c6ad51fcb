// The /v1/calc routes: backfills (create with preview, read, commit, cancel) and the
// explain reads (lineage of an output, status and trace of a rule).
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError, invalid } from '../../../errors.js';
import type { BackfillJob } from '../../../calc/backfill/backfill-store.js';
import type { BackfillRunner } from '../../../calc/backfill/backfill-runner.js';
import type { CalcEngine } from '../../../calc/engine/calc-engine.js';
import { ruleAt } from '../../../calc/rules/rule-store.js';
import { progressOf } from '../../../calc/engine/progress-store.js';
import { lineageFor, boundSeriesOf } from '../../../calc/engine/lineage.js';
import { INT64_MIN } from '../../../storage/series-store.js';
import { nowNs } from '../../../clock.js';
import {
  BackfillBody, BackfillView, JobIdParams, LineageQuery, LineageResponse, RuleIdParams, RuleStatus, RuleStatusQuery, TraceQuery, TraceResponse,
} from './schemas.js';

function engineOf(ctx: HandlerContext): CalcEngine {
  const e = ctx.service.parts.calc;
  if (!e) throw new ServiceError('model-unavailable', 'the calculation engine is not started');
  return e;
}

function backfillsOf(ctx: HandlerContext): BackfillRunner {
  const b = ctx.service.parts.backfills;
  if (!b) throw new ServiceError('model-unavailable', 'the calculation engine is not started');
  return b;
}

function view(j: BackfillJob) {
  return {
    job_id: j.job_id, state: j.state,
    progress: { windows_total: j.windows_total, windows_done: j.windows_done, points_written: j.points_written, rate_limited_ms: j.rate_limited_ms },
    preview: j.preview, operation_id: j.operation_id, rule_id: j.rule_id, rule_version: j.rule_version, mode: j.mode, error: j.error,
  };
}

async function ruleExists(ctx: HandlerContext, id: string) {
  const rule = await ruleAt(ctx.service.db, null, id);
  if (!rule) throw new ServiceError('not-found', `calculation rule ${id} not found`);
  return rule;
}

export function calcExplainRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createCalcBackfill', method: 'post', path: '/v1/calc/backfill', area: 'Calculations',
      summary: 'Start a backfill of a rule over a range: a preview is computed first (poll the job), then commit or cancel',
      access: { kind: 'capability', capability: 'calc-author', scope: 'anywhere' },
      body: BackfillBody,
      response: { status: 202, schema: BackfillView },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        const job = await backfillsOf(ctx).create({ rule_id: b.rule_id, assets: b.assets, start_ns: BigInt(b.start_ns), end_ns: BigInt(b.end_ns), mode: b.mode, reason: b.reason }, ctx.principal?.subject ?? 'anonymous');
        return { status: 202, body: view(job) };
      },
    }),
    defineRoute({
      operationId: 'getCalcBackfill', method: 'get', path: '/v1/calc/backfill/{job_id}', area: 'Calculations',
      summary: 'A backfill job: state, progress and preview',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: JobIdParams,
      response: { status: 200, schema: BackfillView },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: view(await backfillsOf(ctx).get(ctx.params.job_id)) }),
    }),
    defineRoute({
      operationId: 'commitCalcBackfill', method: 'post', path: '/v1/calc/backfill/{job_id}/commit', area: 'Calculations',
      summary: 'Write a previewed backfill (in the background, yielding to live evaluations); poll the job or its operation',
      access: { kind: 'capability', capability: 'calc-author', scope: 'anywhere' },
      params: JobIdParams,
      response: { status: 202, schema: BackfillView },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => ({ status: 202, body: view(await backfillsOf(ctx).commit(ctx.params.job_id)) }),
    }),
    defineRoute({
      operationId: 'cancelCalcBackfill', method: 'post', path: '/v1/calc/backfill/{job_id}/cancel', area: 'Calculations',
      summary: 'Cancel a backfill: a preview is dropped; a commit stops after its current window (what it wrote stays)',
      access: { kind: 'capability', capability: 'calc-author', scope: 'anywhere' },
      params: JobIdParams,
      response: { status: 200, schema: BackfillView },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => ({ body: view(await backfillsOf(ctx).cancel(ctx.params.job_id)) }),
    }),
    defineRoute({
      operationId: 'getCalcLineage', method: 'get', path: '/v1/calc/lineage', area: 'Calculations',
      summary: 'Which rule versions produced which windows of an output series (or output attribute)',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      query: LineageQuery,
      response: { status: 200, schema: LineageResponse },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const q = ctx.query;
        let series = q.series ?? null;
        if ((series === null) === (q.attribute_id === undefined)) throw invalid('series', 'give exactly one of series and attribute_id');
        if (series === null) {
          series = await boundSeriesOf(ctx.service.db, q.attribute_id as string);
          if (series === null) throw new ServiceError('not-found', `attribute ${q.attribute_id} is not bound to a series`);
        }
        await ctx.authorize('read', await ctx.service.parts.series.scopeOf(series), { hide: true });
        return { body: await lineageFor(ctx.service.db, series, q.start_ns === undefined ? null : BigInt(q.start_ns), q.end_ns === undefined ? null : BigInt(q.end_ns)) };
      },
    }),
    defineRoute({
      operationId: 'getCalcRuleStatus', method: 'get', path: '/v1/calc/rules/{rule_id}/status', area: 'Calculations',
      summary: 'Per asset of a rule: last evaluated instant, lag, backlog, evaluation and error counts, last error',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: RuleIdParams, query: RuleStatusQuery,
      response: { status: 200, schema: RuleStatus },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const rule = await ruleExists(ctx, ctx.params.rule_id);
        const engine = engineOf(ctx);
        const progress = await progressOf(ctx.service.db, rule.rule_id);
        const states = new Map(engine.statesOf(rule.rule_id).map((s) => [s.target.assetId, s]));
        const problems = engine.planOf(rule.rule_id)?.problems ?? new Map<string, string>();
        const assets = new Set([...states.keys(), ...progress.keys(), ...problems.keys()]);
        const nowMs = Date.now();
        const now = nowNs();
        const out = [...assets].filter((a) => !ctx.query.asset_id || a === ctx.query.asset_id).sort().map((a) => {
          const s = states.get(a), p = progress.get(a);
          const through = s?.through ?? p?.evaluated_through_ns ?? null;
          const pending = s?.dirtyFrom ?? null;
          const backlog = pending === null || !s ? 0 : Number((s.dirtyTo - pending + 3_600_000_000_000n - 1n) / 3_600_000_000_000n);
          return {
            asset_id: a, output_series: s?.target.outputSeries ?? null,
            last_evaluated_ns: through === null || through === INT64_MIN ? null : through,
            lag_ms: s ? (pending === null ? 0 : nowMs - s.dirtySinceMs) : null,
            backlog, evaluations: p?.evaluations ?? 0n, errors: p?.errors ?? 0n,
            last_error: problems.get(a) ?? s?.lastError ?? p?.last_error ?? null, last_error_ns: p?.last_error_ns ?? null,
            provisional_from_ns: s?.provisionalFromNs !== null && s?.provisionalFromNs !== undefined && s.provisionalFromNs <= now ? s.provisionalFromNs : null,
          };
        });
        return { body: { rule_id: rule.rule_id, version: rule.version, retired: rule.retired, assets: out } };
      },
    }),
    defineRoute({
      operationId: 'getCalcRuleTrace', method: 'get', path: '/v1/calc/rules/{rule_id}/trace', area: 'Calculations',
      summary: 'Recent evaluations of a rule on one asset in a range: inputs, outcome, value, quality, reason, rule version',
      description: 'The engine keeps the last 256 evaluated instants per rule and asset in memory (a restart empties it); lineage is the durable record.',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: RuleIdParams, query: TraceQuery,
      response: { status: 200, schema: TraceResponse },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        await ruleExists(ctx, ctx.params.rule_id);
        const start = BigInt(ctx.query.start_ns), end = BigInt(ctx.query.end_ns);
        if (end <= start) throw invalid('end_ns', 'must be after start_ns');
        return { body: { evaluations: engineOf(ctx).traces.query(ctx.params.rule_id, ctx.query.asset_id, start, end) } };
      },
    }),
  ];
}
