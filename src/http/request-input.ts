// Step 3 of the pipeline: the query and the body, parsed and validated against the route's
// compiled schemas (src/http/validate.ts). Path parameters are validated before
// authorization, in handle-request.ts, because the scope may come from one.
import type { BodyReader } from './body.js';
import type { Exchange } from './exchange.js';
import type { CompiledRoute } from './compiled-route.js';
import { parseQuery, queryPairs } from './query.js';
import { ServiceError } from '../errors.js';
import { parseJson } from '../json/json.js';

/** Deepest JSON nesting a body may use (published in the contract's x-request-limits). */
export const MAX_JSON_DEPTH = 64;
const EMPTY = Buffer.alloc(0);

export function readQuery(c: CompiledRoute, ex: Exchange): Record<string, unknown> {
  // One rule on every route: a parameter the operation does not declare is refused, never
  // silently ignored (a snapshot that ignored as_of_ns answered the wrong instant).
  if (!c.route.query && ex.rawQuery) refuseUndeclared(ex.rawQuery);
  const query = parseQuery(ex.rawQuery, c.route.query);
  c.query?.check('query', query);
  return query;
}

function refuseUndeclared(rawQuery: string): void {
  const names = [...new Set(Array.from(queryPairs(rawQuery), ([name]) => name))];
  if (names.length === 0) return;
  const errors = names.map((name) => ({ field: `query.${name}`, problem: 'this operation takes no query parameters' }));
  throw new ServiceError('invalid-request', `${errors[0].field}: ${errors[0].problem}`, { errors });
}

/** The raw body (hashed by idempotency) and, where the route declares a body, its parsed and validated JSON. */
export async function readJsonBody(c: CompiledRoute, ex: Exchange, body: BodyReader | null): Promise<{ raw: Buffer; parsed: unknown }> {
  if (!body) return { raw: EMPTY, parsed: c.route.bodyOptional ? {} : undefined };
  const raw = await body.done;
  if (!c.route.body) return { raw, parsed: undefined };
  const type = (ex.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  // A route whose body members are all optional takes no bytes as {} (bodyOptional in route.ts).
  if (raw.byteLength === 0 && c.route.bodyOptional) return { raw, parsed: {} };
  if (raw.byteLength === 0) throw new ServiceError('invalid-request', 'body: a JSON body is required', { errors: [{ field: 'body', problem: 'required' }] });
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new ServiceError('unsupported-media-type', `content-type: expected application/json, got ${type || 'none'}`);
  }
  const parsed = parseJson(raw, { maxDepth: MAX_JSON_DEPTH });
  c.body?.check('body', parsed);
  return { raw, parsed };
}
