// The OpenAPI 3.1 contract, generated from the same route declarations and TypeBox
// schemas the server validates with. TypeBox emits JSON Schema 2020-12, the dialect of
// OpenAPI 3.1: a JSON round trip drops TypeBox's symbol keys, and schemas carrying an
// $id become components referenced by #/components/schemas/<id>. TypeBox tuples still use
// draft-07's `items: [..]` with `additionalItems`; they become 2020-12's `prefixItems`.
// The served contract passes Redocly's recommended ruleset with no error (test/http/contract.test.ts).
import type { TSchema } from '@sinclair/typebox';
import type { AnyRoute, Access } from './route.js';
import { ERROR_CODES } from '../errors.js';
import { ErrorEnvelope } from './schemas/common.js';
import { TEXT_POLICY, TEXT_ACCEPTED_PATTERN, TEXT_REFUSED_PATTERN } from '../text-policy.js';
import { MAX_URL_BYTES, MAX_HEADER_BYTES, MAX_HEADER_FIELDS } from './request-limits.js';
import { MAX_JSON_DEPTH } from './request-input.js';

type Json = Record<string, unknown>;

const STATUS_DESCRIPTION: Record<number, string> = {
  400: 'Invalid request, body, UUID, query, cursor, limit or idempotency key',
  401: 'Authentication required',
  403: 'Capability or scope not granted',
  404: 'Not found, or not visible to the principal',
  405: 'Method not allowed',
  406: 'Not acceptable',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Unsupported media type',
  426: 'Upgrade required: the operation is a WebSocket',
  429: 'Too many requests',
  500: 'Internal fault',
  503: 'Model database or capacity unavailable',
};

/**
 * The capability an operation can require, as the contract states it (`x-capability`):
 * the declared one, or `admin` where the scope is `owner-or-admin` (one's own items need
 * none, anyone else's need admin); null when no capability is ever checked.
 */
export function contractCapability(access: Access): string | null {
  if (access.kind === 'capability') return access.capability;
  if (access.kind === 'authenticated' && access.scope === 'owner-or-admin') return 'admin';
  return null;
}

export function buildContract(routes: AnyRoute[], info: { version: string }): Json {
  const components: Record<string, Json> = {};
  const toSchema = (s: TSchema): Json => {
    const plain = JSON.parse(JSON.stringify(s)) as Json;
    return hoist(plain, components);
  };
  // What a client sends: free-text strings carry the text policy as a pattern (text-policy.ts).
  const toRequestSchema = (s: TSchema): Json => hoist(withTextPattern(JSON.parse(JSON.stringify(s)) as Json), components);
  components.ErrorEnvelope = stripId(JSON.parse(JSON.stringify(ErrorEnvelope)) as Json);

  const paths: Record<string, Json> = {};
  for (const r of routes) {
    const op: Json = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.area],
      'x-capability': contractCapability(r.access),
      'x-access': r.access.kind,
      'x-scope': r.access.kind === 'capability' ? r.access.scope : r.access.kind === 'authenticated' ? r.access.scope : 'none',
    };
    if (r.description) op.description = r.description;
    if (r.access.kind !== 'anonymous') op.security = [{ session: [] }, { bearer: [] }];
    else op.security = [];
    const parameters: Json[] = [];
    for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
      const props = (schema as unknown as { properties?: Record<string, TSchema>; required?: string[] } | undefined);
      for (const [name, ps] of Object.entries(props?.properties ?? {})) {
        parameters.push({ name, in: where, required: where === 'path' || (props?.required ?? []).includes(name), schema: toRequestSchema(ps) });
      }
    }
    if (r.idempotency) {
      parameters.push({
        name: 'Idempotency-Key', in: 'header', required: r.idempotency === 'required',
        description: 'Replays the first successful response for the same principal, route, key and body (X-Service-Idempotent-Replay: true); a different body gives 409',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      });
    }
    if (parameters.length) op.parameters = parameters;
    if (r.body) op.requestBody = { required: !r.bodyOptional, content: { 'application/json': { schema: toRequestSchema(r.body) } } };
    if (r.streamBody) op.requestBody = { required: true, description: r.streamBody.description, content: Object.fromEntries(r.streamBody.mediaTypes.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])) };
    op['x-idempotency'] = r.idempotency ?? 'none';

    const responses: Json = {};
    const ok: Json = { description: r.response.description ?? 'Success' };
    if (r.response.schema) {
      const schema = toSchema(r.response.schema);
      const content: Json = { 'application/json': { schema } };
      for (const t of r.response.alsoProduces ?? []) content[t] = { schema: r.response.schemaFor?.[t] ? toSchema(r.response.schemaFor[t]) : schema };
      ok.content = content;
    } else if (r.response.contentType) {
      ok.content = { [r.response.contentType]: { schema: r.response.contentType.startsWith('text/plain') ? { type: 'string' } : {} } };
    }
    responses[String(r.response.status)] = ok;
    const errs = new Set<number>(r.errors);
    if (r.params || r.query || r.body) errs.add(400);
    if (r.body) { errs.add(413); errs.add(415); }
    if (r.access.kind !== 'anonymous') errs.add(401);
    if (r.access.kind === 'capability') errs.add(403);
    for (const status of [...errs].sort((a, b) => a - b)) {
      responses[String(status)] = {
        description: STATUS_DESCRIPTION[status] ?? 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      };
    }
    op.responses = responses;
    const p = (paths[r.path] ??= {}) as Json;
    p[r.method] = op;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Historian: time-series model and storage service',
      version: info.version,
      description: 'Industrial historian REST contract. Int64 values (`*_ns`, `*_tx`) are JSON integers that may exceed 2^53: parse them losslessly. Every error is an ErrorEnvelope whose `code` is listed in `x-error-codes`. Text: ' + TEXT_POLICY + ' Request limits: see `x-request-limits`.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'service_session' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
    },
    'x-text-policy': { description: TEXT_POLICY, refused: TEXT_REFUSED_PATTERN },
    'x-request-limits': {
      url_bytes: MAX_URL_BYTES,
      header_bytes: MAX_HEADER_BYTES,
      header_fields: MAX_HEADER_FIELDS,
      body_bytes: 'SERVICE_BODY_LIMIT (4194304 by default); some operations declare less',
      json_depth: MAX_JSON_DEPTH,
    },
    'x-error-codes': Object.fromEntries(Object.entries(ERROR_CODES).map(([code, v]) => [code, { status: v.status, meaning: v.meaning }])),
  };
}

/** Adds the text policy as a pattern to every free-text string (no pattern, const, enum or character-limiting format of its own). */
function withTextPattern(node: Json): Json {
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) { for (const x of v) walk(x); return; }
    if (v === null || typeof v !== 'object') return;
    const o = v as Json;
    if (o.type === 'string' && o.pattern === undefined && (o.format === undefined || o.format === 'password') && o.const === undefined && o.enum === undefined) o.pattern = TEXT_ACCEPTED_PATTERN;
    for (const x of Object.values(o)) walk(x);
  };
  walk(node);
  return node;
}

function stripId(s: Json): Json {
  const { $id: _id, ...rest } = s;
  return rest;
}

/**
 * A draft-07 tuple (`items` an array, `additionalItems`) as 2020-12 says it: `prefixItems`,
 * and `items: false` when nothing may follow (TypeBox's tuples say so), else the schema of
 * what follows.
 */
function tupleTo2020(schema: Json): void {
  const { additionalItems } = schema;
  schema.prefixItems = schema.items;
  delete schema.additionalItems;
  if (additionalItems === undefined || additionalItems === true) delete schema.items;
  else schema.items = additionalItems;
}

const isEmptySchema = (s: unknown): boolean => s !== null && typeof s === 'object' && !Array.isArray(s)
  && Object.keys(s).every((k) => k === 'description' || k === 'title');

// Any nested schema with an $id becomes a component; bare $refs point at components.
function hoist(node: Json, components: Record<string, Json>): Json {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const o = v as Json;
    const out: Json = {};
    for (const [k, x] of Object.entries(o)) {
      if (k === '$ref' && typeof x === 'string' && !x.startsWith('#')) out[k] = `#/components/schemas/${x}`;
      else out[k] = walk(x);
    }
    if (out.type === 'array' && Array.isArray(out.items)) tupleTo2020(out);
    // Nullable(AnyJson()) is anyOf [{}, {type: null}]: a schema that matches anything says so.
    if (Array.isArray(out.anyOf) && out.anyOf.some(isEmptySchema)) delete out.anyOf;
    if (typeof out.$id === 'string') {
      const id = out.$id;
      components[id] ??= stripId(out);
      return { $ref: `#/components/schemas/${id}` };
    }
    return out;
  };
  return walk(node) as Json;
}
