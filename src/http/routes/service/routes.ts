// Service area: liveness, model readiness and the contract itself.
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute } from '../../route.js';
import { ServiceError } from '../../../errors.js';

const ModelHealth = Type.Object({
  status: Type.Literal('ok'),
  backend: Type.Union([Type.Literal('pg'), Type.Literal('pglite')]),
  schema_version: Type.Integer({ minimum: 0, description: 'Highest applied migration number' }),
  latency_ms: Type.Number({ minimum: 0 }),
}, { additionalProperties: false });

const MODEL_PROBE_TIMEOUT_MS = 2_000;

/** The contract route needs the finished route list, so it is built last. */
export function serviceRoutes(contract: () => unknown): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'getHealthz', method: 'get', path: '/v1/healthz', area: 'Service',
      summary: 'Liveness: answers `ok` when the process can serve HTTP',
      access: { kind: 'anonymous' },
      response: { status: 200, contentType: 'text/plain', description: 'The text `ok`' },
      errors: [],
      handler: async () => ({ kind: 'bytes', contentType: 'text/plain; charset=utf-8', bytes: 'ok' }),
    }),
    defineRoute({
      operationId: 'getModelHealthz', method: 'get', path: '/v1/model/healthz', area: 'Model',
      summary: 'Model database readiness',
      access: { kind: 'anonymous' },
      response: { status: 200, schema: ModelHealth },
      errors: [503],
      handler: async ({ service }) => {
        const t0 = performance.now();
        try {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('model probe timed out')), MODEL_PROBE_TIMEOUT_MS); });
          const probe = service.db.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migration');
          const { rows } = await Promise.race([probe, timeout]).finally(() => clearTimeout(timer));
          return { body: { status: 'ok', backend: service.db.kind, schema_version: Number(rows[0]?.v ?? 0), latency_ms: Math.round((performance.now() - t0) * 1000) / 1000 } };
        } catch (e) {
          throw new ServiceError('model-unavailable', `the model database is unavailable: ${(e as Error).message}`);
        }
      },
    }),
    defineRoute({
      operationId: 'getContract', method: 'get', path: '/v1/openapi.json', area: 'Contract',
      summary: 'The OpenAPI 3.1 contract of this server, generated from the same declarations that validate requests',
      access: { kind: 'anonymous' },
      response: { status: 200, contentType: 'application/json', description: 'OpenAPI 3.1 document' },
      errors: [],
      handler: async () => ({ body: contract() }),
    }),
  ];
}
