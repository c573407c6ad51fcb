// Authentication area, administration side: principals, service identities and their
// tokens, roles, grants, and the effective-permission question. Every change commits
// through the model transaction log (principal + reason) and then drops the auth
// caches of this process, so it takes effect on the next request.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError, notFound } from '../../../errors.js';
import { encodeCursor, decodeCursor, cursorInt64 } from '../../../cursor.js';
import { modelTransaction, type Who } from '../../../model/tx-log.js';
import type { Queryable } from '../../../model/db.js';
import type { EventSink } from '../../../model/tx-log.js';
import { authOf, type AuthAccessControl } from '../../../auth/access-control.js';
import type { AccessTarget } from '../../../auth/access-types.js';
import { createServiceIdentity, createUser, getPrincipal, listPrincipals, principalView, SERVICE_KINDS } from '../../../auth/principals.js';
import { mintToken, revokeToken, tokensOf, tokenView } from '../../../auth/service-tokens.js';
import { createRole, getRole, listRoles, roleView, updateRole } from '../../../auth/roles.js';
import { createGrant, deleteGrant, grantView, listGrants } from '../../../auth/grants.js';
import { isCapability } from '../../../auth/roles.js';
import * as S from './schemas.js';

const DEFAULT_LIMIT = 100;
const admin = { kind: 'capability', capability: 'admin', scope: 'global' } as const;

function who(ctx: HandlerContext, reason: string | undefined, fallback: string): Who {
  return { principal: ctx.principal?.subject ?? 'anonymous', reason: reason ?? fallback };
}

/** Commits an auth change through the model transaction log, then drops this process's auth caches. */
async function change<T>(auth: AuthAccessControl, w: Who, fn: (tx: Queryable, txId: bigint, events: EventSink) => Promise<T>): Promise<T> {
  try {
    return (await modelTransaction(auth.db, w, fn)).result;
  } finally {
    auth.invalidate(); // also after a failure: a partial read cached mid-transaction must not linger
  }
}

function afterCursor(listing: string, cursor: string | undefined): [string, string] | undefined {
  if (!cursor) return undefined;
  const [a, b] = decodeCursor(listing, cursor, 2);
  return [a, b];
}

const int64Cursor = cursorInt64;

export function principalRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createPrincipal', method: 'post', path: '/v1/auth/principals', area: 'Authentication',
      summary: 'Create a person with a local password (hashed with scrypt and a per-user salt)',
      access: admin, body: S.CreatePrincipalBody, bodyLimit: 16 * 1024,
      response: { status: 201, schema: S.Principal }, errors: [400, 409, 503],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const hash = await auth.hasher.hash(ctx.body.password);
        const row = await change(auth, who(ctx, ctx.body.reason, 'create principal'), (tx, txId, ev) =>
          createUser(tx, txId, ev, { username: ctx.body.username, passwordHash: hash, display: ctx.body.display }));
        return { status: 201, body: principalView(row) };
      },
    }),
    defineRoute({
      operationId: 'listPrincipals', method: 'get', path: '/v1/auth/principals', area: 'Authentication',
      summary: 'Principals (people and service identities), by subject',
      access: admin, query: S.PageQuery,
      response: { status: 200, schema: S.PrincipalPage }, errors: [400],
      handler: async (ctx) => {
        const limit = ctx.query.limit ?? DEFAULT_LIMIT;
        const c = afterCursor('principals', ctx.query.cursor);
        const rows = await listPrincipals(ctx.service.db, { after: c && { subject: c[0], id: c[1] }, limit: limit + 1 });
        const items = rows.slice(0, limit);
        const last = items[items.length - 1];
        return { body: { items: items.map(principalView), next_cursor: rows.length > limit ? encodeCursor('principals', [last.subject, last.principal_id]) : null } };
      },
    }),
    defineRoute({
      operationId: 'createServiceIdentity', method: 'post', path: '/v1/auth/service-identities', area: 'Authentication',
      summary: 'Create a service identity (an integration, or a collector named by its collector_id)',
      access: admin, body: S.CreateServiceIdentityBody,
      response: { status: 201, schema: S.ServiceIdentity }, errors: [400, 409],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const row = await change(auth, who(ctx, ctx.body.reason, 'create service identity'), (tx, txId, ev) =>
          createServiceIdentity(tx, txId, ev, { name: ctx.body.name, kind: ctx.body.kind, display: ctx.body.display }));
        return { status: 201, body: { identity_id: row.principal_id, kind: row.kind, name: row.subject, display: row.display, disabled: row.disabled, valid_from_ns: row.valid_from_ns, tx_id: row.tx_id, tokens: [] } };
      },
    }),
    defineRoute({
      operationId: 'listServiceIdentities', method: 'get', path: '/v1/auth/service-identities', area: 'Authentication',
      summary: 'Service identities with their tokens\' metadata (never the secrets)',
      access: admin, query: S.PageQuery,
      response: { status: 200, schema: S.ServiceIdentityPage }, errors: [400],
      handler: async (ctx) => {
        const limit = ctx.query.limit ?? DEFAULT_LIMIT;
        const c = afterCursor('service-identities', ctx.query.cursor);
        const rows = await listPrincipals(ctx.service.db, { after: c && { subject: c[0], id: c[1] }, limit: limit + 1, kinds: SERVICE_KINDS });
        const items = rows.slice(0, limit);
        const tokens = await tokensOf(ctx.service.db, items.map((r) => r.principal_id));
        const last = items[items.length - 1];
        return { body: {
          items: items.map((r) => ({
            identity_id: r.principal_id, kind: r.kind, name: r.subject, display: r.display, disabled: r.disabled, valid_from_ns: r.valid_from_ns, tx_id: r.tx_id,
            tokens: tokens.filter((t) => t.principal_id === r.principal_id).map(tokenView),
          })),
          next_cursor: rows.length > limit ? encodeCursor('service-identities', [last.subject, last.principal_id]) : null,
        } };
      },
    }),
    defineRoute({
      operationId: 'createServiceToken', method: 'post', path: '/v1/auth/service-identities/{id}/tokens', area: 'Authentication',
      summary: 'Mint a bearer token for a service identity; the plaintext is in this response only',
      access: admin, params: S.IdParams, body: S.MintTokenBody,
      response: { status: 201, schema: S.MintedServiceToken }, errors: [400, 404],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const identity = await getPrincipal(auth.db, ctx.params.id);
        if (!identity || identity.kind === 'user') throw notFound('service identity', { identity_id: ctx.params.id });
        if (identity.disabled) throw new ServiceError('conflict', 'the service identity is disabled', { identity_id: ctx.params.id });
        const expires = ctx.body.expires_at_ns === undefined || ctx.body.expires_at_ns === null ? null : BigInt(ctx.body.expires_at_ns);
        const { row, plaintext } = await change(auth, who(ctx, ctx.body.reason, 'mint service token'), (tx, txId, ev) =>
          mintToken(tx, txId, ev, { principalId: identity.principal_id, comment: ctx.body.comment ?? '', expiresNs: expires }));
        auth.log.info({ correlation_id: ctx.correlationId, token_id: row.token_id, identity_id: identity.principal_id }, 'service token minted');
        return { status: 201, body: { ...tokenView(row), token: plaintext }, headers: [['Cache-Control', 'no-store']] };
      },
    }),
    defineRoute({
      operationId: 'revokeServiceToken', method: 'post', path: '/v1/auth/service-identities/tokens/{token_id}/revoke', area: 'Authentication',
      summary: 'Revoke a service token; requests bearing it get 401 from the next request on',
      access: admin, params: S.TokenIdParams, body: S.RevokeBody,
      response: { status: 200, schema: S.ServiceToken }, errors: [400, 404],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const row = await change(auth, who(ctx, ctx.body.reason, 'revoke service token'), (tx, txId, ev) => revokeToken(tx, txId, ev, ctx.params.token_id));
        auth.log.info({ correlation_id: ctx.correlationId, token_id: row.token_id }, 'service token revoked');
        return { body: tokenView(row) };
      },
    }),
    defineRoute({
      operationId: 'listRoles', method: 'get', path: '/v1/auth/roles', area: 'Authentication',
      summary: 'Roles: the four built-ins and custom ones (retired included)',
      access: admin, query: S.PageQuery,
      response: { status: 200, schema: S.RolePage }, errors: [400],
      handler: async (ctx) => {
        // Roles are few (tens): one page holds them; the cursor is accepted for a uniform listing shape.
        if (ctx.query.cursor) afterCursor('roles', ctx.query.cursor);
        const rows = await listRoles(ctx.service.db);
        const limit = ctx.query.limit ?? 1000;
        return { body: { items: rows.slice(0, limit).map(roleView), next_cursor: null } };
      },
    }),
    defineRoute({
      operationId: 'createRole', method: 'post', path: '/v1/auth/roles', area: 'Authentication',
      summary: 'Create a custom role from Capability enum values',
      access: admin, body: S.CreateRoleBody,
      response: { status: 201, schema: S.Role }, errors: [400, 409],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const row = await change(auth, who(ctx, ctx.body.reason, 'create role'), (tx, txId, ev) => createRole(tx, txId, ev, ctx.body));
        return { status: 201, body: roleView(row) };
      },
    }),
    defineRoute({
      operationId: 'getRole', method: 'get', path: '/v1/auth/roles/{id}', area: 'Authentication',
      summary: 'One role', access: admin, params: S.IdParams,
      response: { status: 200, schema: S.Role }, errors: [400, 404],
      handler: async (ctx) => {
        const row = await getRole(ctx.service.db, ctx.params.id);
        if (!row) throw notFound('role', { role_id: ctx.params.id });
        return { body: roleView(row) };
      },
    }),
    defineRoute({
      operationId: 'updateRole', method: 'put', path: '/v1/auth/roles/{id}', area: 'Authentication',
      summary: 'Update a custom role, or retire (`retired: true`) or restore it; built-in roles cannot change',
      access: admin, params: S.IdParams, body: S.UpdateRoleBody,
      response: { status: 200, schema: S.Role }, errors: [400, 404, 409],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const { reason, ...changes } = ctx.body;
        const row = await change(auth, who(ctx, reason, 'update role'), (tx, txId, ev) => updateRole(tx, txId, ev, ctx.params.id, changes));
        return { body: roleView(row) };
      },
    }),
    defineRoute({
      operationId: 'listGrants', method: 'get', path: '/v1/auth/grants', area: 'Authentication',
      summary: 'Grants, oldest first; filter by principal or role',
      access: admin, query: S.GrantsQuery,
      response: { status: 200, schema: S.GrantPage }, errors: [400],
      handler: async (ctx) => {
        const limit = ctx.query.limit ?? DEFAULT_LIMIT;
        const c = afterCursor('grants', ctx.query.cursor);
        const rows = await listGrants(ctx.service.db, {
          principalId: ctx.query.principal_id, roleId: ctx.query.role_id, limit: limit + 1,
          after: c && { createdNs: int64Cursor(c[0]), id: c[1] },
        });
        const items = rows.slice(0, limit);
        const last = items[items.length - 1];
        return { body: { items: items.map(grantView), next_cursor: rows.length > limit ? encodeCursor('grants', [last.created_ns.toString(), last.grant_id]) : null } };
      },
    }),
    defineRoute({
      operationId: 'createGrant', method: 'post', path: '/v1/auth/grants', area: 'Authentication',
      summary: 'Give a principal a role on a scope: everywhere, an asset subtree, or a view',
      access: admin, body: S.CreateGrantBody,
      response: { status: 201, schema: S.Grant }, errors: [400, 404, 409],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const row = await change(auth, who(ctx, ctx.body.reason, 'grant role'), (tx, txId, ev) =>
          createGrant(tx, txId, ev, { principalId: ctx.body.principal_id, roleId: ctx.body.role_id, scope: ctx.body.scope }));
        return { status: 201, body: grantView(row) };
      },
    }),
    defineRoute({
      operationId: 'deleteGrant', method: 'delete', path: '/v1/auth/grants/{id}', area: 'Authentication',
      summary: 'Remove a grant; it stops granting from the next request on',
      access: admin, params: S.IdParams,
      response: { status: 204 }, errors: [400, 404],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        await change(auth, who(ctx, undefined, 'remove grant'), (tx, _txId, ev) => deleteGrant(tx, ev, ctx.params.id));
        return { kind: 'empty', status: 204 };
      },
    }),
    defineRoute({
      operationId: 'effectivePermissions', method: 'post', path: '/v1/auth/effective', area: 'Authentication',
      summary: 'What a principal may do on a target (the caller by default; others need `admin`)',
      access: { kind: 'authenticated', scope: 'owner-or-admin' }, body: S.EffectiveBody,
      response: { status: 200, schema: S.Effective }, errors: [400, 403, 404],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const me = ctx.principal;
        if (!me) throw new ServiceError('unauthenticated', 'authentication required');
        let subject = me;
        const otherId = ctx.body.principal_id;
        if (otherId !== undefined && otherId !== me.id) {
          await ctx.authorize('admin', { kind: 'global' });
          const row = await getPrincipal(auth.db, otherId);
          if (!row) throw notFound('principal', { principal_id: otherId });
          subject = { id: row.principal_id, kind: row.kind, subject: row.subject, display: row.display, via: 'bearer' };
        }
        const t = ctx.body.target;
        const target: AccessTarget = t.kind === 'everywhere' ? { kind: 'global' } : t.kind === 'anywhere' ? { kind: 'anywhere' }
          : t.kind === 'asset' ? { kind: 'asset', id: t.asset_id } : { kind: 'view', id: t.view_id };
        const capabilities = await auth.effectiveCapabilities(subject, target);
        const body: Record<string, unknown> = { principal_id: subject.id, target: t, capabilities };
        if (ctx.body.capability !== undefined) {
          const c = ctx.body.capability;
          body.capability = c;
          body.allowed = isCapability(c) && capabilities.includes(c);
        }
        return { body };
      },
    }),
  ];
}
