// Authentication area, people's side: discovery, local and OIDC login, whoami, and
// session listing and revocation.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError, notFound } from '../../../errors.js';
import { encodeCursor, decodeCursor, cursorInt64 } from '../../../cursor.js';
import { isUuid } from '../../../uuid.js';
import { modelTransaction } from '../../../model/tx-log.js';
import { authOf } from '../../../auth/access-control.js';
import { loginLocal } from '../../../auth/local-login.js';
import { sessionSetCookie, sessionClearCookie } from '../../../auth/credentials.js';
import { getSession, listLiveSessions, openSession, revokeSession, sessionView } from '../../../auth/sessions.js';
import { principalForOidc } from '../../../auth/oidc/principal-mapping.js';
import { OIDC_STATE_COOKIE } from '../../../auth/oidc/relying-party.js';
import { describePrincipal } from './whoami.js';
import { AuthMethods, LocalLoginBody, OidcCallbackQuery, SessionPage, SessionsQuery, IdParams, WhoAmI } from './schemas.js';

const DEFAULT_LIMIT = 100;

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function requirePrincipal(ctx: HandlerContext) {
  if (!ctx.principal) throw new ServiceError('unauthenticated', 'authentication required');
  return ctx.principal;
}

function sessionCookieHeader(ctx: HandlerContext, value: string, expiresNs: bigint, createdNs: bigint): [string, string] {
  const maxAge = Number((expiresNs - createdNs) / 1_000_000_000n);
  return ['Set-Cookie', sessionSetCookie(value, maxAge, ctx.secure)];
}

export function sessionRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'getAuthMethods', method: 'get', path: '/v1/auth/methods', area: 'Authentication',
      summary: 'The authentication posture and the login methods on offer (nothing about the provider)',
      access: { kind: 'anonymous' },
      response: { status: 200, schema: AuthMethods },
      errors: [],
      handler: async ({ service }) => {
        const auth = authOf(service);
        return { body: { auth_mode: auth.mode, login_methods: auth.oidc ? ['local', 'oidc'] : ['local'] } };
      },
    }),
    defineRoute({
      operationId: 'loginLocal', method: 'post', path: '/v1/auth/login/local', area: 'Authentication',
      summary: 'Log in with a username and password; sets the HttpOnly `service_session` cookie',
      description: 'A fresh session id at every login. Wrong password and unknown user give the same 401. Repeated failures from one address for one username are throttled (429 with Retry-After) before any password is hashed.',
      access: { kind: 'anonymous' },
      body: LocalLoginBody,
      bodyLimit: 8 * 1024,
      response: { status: 204, description: 'Logged in; Set-Cookie carries the session' },
      errors: [400, 401, 403, 429, 503],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const r = await loginLocal(auth, auth.hasher, auth.throttle, {
          username: ctx.body.username, password: ctx.body.password, remoteAddress: ctx.remoteAddress,
          userAgent: ctx.headers.get('user-agent') ?? '', correlationId: ctx.correlationId,
        });
        return { kind: 'empty', status: 204, headers: [sessionCookieHeader(ctx, r.cookieValue, r.session.expires_ns, r.session.created_ns), ['Cache-Control', 'no-store']] };
      },
    }),
    defineRoute({
      operationId: 'loginOidc', method: 'get', path: '/v1/auth/login', area: 'Authentication',
      summary: 'Browser redirect that starts the OIDC authorization-code flow (PKCE, state, nonce)',
      access: { kind: 'anonymous' },
      response: { status: 302, description: 'Redirect to the identity provider' },
      errors: [404, 503],
      handler: async (ctx) => {
        const oidc = authOf(ctx.service).oidc;
        if (!oidc) throw notFound('OIDC login (no issuer is configured)');
        const { url, state } = await oidc.begin();
        const cookie = `${OIDC_STATE_COOKIE}=${state}; HttpOnly; SameSite=Lax; Path=/v1/auth/callback; Max-Age=600${ctx.secure ? '; Secure' : ''}`;
        return { kind: 'empty', status: 302, headers: [['Location', url], ['Set-Cookie', cookie], ['Cache-Control', 'no-store']] };
      },
    }),
    defineRoute({
      operationId: 'loginOidcCallback', method: 'get', path: '/v1/auth/callback', area: 'Authentication',
      summary: 'OIDC redirect target: validates the callback, sets the session cookie, redirects to the portal',
      access: { kind: 'anonymous' },
      query: OidcCallbackQuery,
      response: { status: 302, description: 'Logged in; redirect to the portal' },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        if (!auth.oidc) throw notFound('OIDC login (no issuer is configured)');
        const audit = { correlation_id: ctx.correlationId, remote_address: ctx.remoteAddress, method: 'oidc' };
        let claims;
        try {
          claims = await auth.oidc.complete(ctx.query, cookieValue(ctx.headers.get('cookie'), OIDC_STATE_COOKIE));
        } catch (e) {
          auth.log.warn({ ...audit, outcome: 'failure', reason: (e as Error).message }, 'login failed');
          throw e;
        }
        const { row, created } = await principalForOidc(auth.db, claims, auth.oidc.settings.defaultRole);
        if (created) auth.invalidate();
        if (row.disabled) {
          auth.log.warn({ ...audit, outcome: 'sealed', principal_id: row.principal_id, subject: row.subject }, 'login refused: account sealed');
          throw new ServiceError('account-sealed', 'the account is disabled');
        }
        const s = await openSession(auth.db, auth.sessionPolicy, {
          principalId: row.principal_id, method: 'oidc', remoteAddress: ctx.remoteAddress, userAgent: ctx.headers.get('user-agent') ?? '',
        });
        auth.log.info({ ...audit, outcome: 'success', principal_id: row.principal_id, subject: row.subject, session_id: s.row.session_id, created }, 'login succeeded');
        const clearState = `${OIDC_STATE_COOKIE}=; HttpOnly; SameSite=Lax; Path=/v1/auth/callback; Max-Age=0${ctx.secure ? '; Secure' : ''}`;
        return {
          kind: 'empty', status: 302,
          headers: [['Location', auth.oidc.settings.portalUrl], sessionCookieHeader(ctx, s.cookieValue, s.row.expires_ns, s.row.created_ns), ['Set-Cookie', clearState], ['Cache-Control', 'no-store']],
        };
      },
    }),
    defineRoute({
      operationId: 'whoami', method: 'get', path: '/v1/auth/whoami', area: 'Authentication',
      summary: 'The caller: principal, roles, capabilities, authorization snapshot, mode and session expiry',
      access: { kind: 'authenticated', scope: 'self' },
      response: { status: 200, schema: WhoAmI },
      errors: [],
      handler: async (ctx) => ({ body: await describePrincipal(authOf(ctx.service), requirePrincipal(ctx)) }),
    }),
    defineRoute({
      operationId: 'listSessions', method: 'get', path: '/v1/auth/sessions', area: 'Authentication',
      summary: 'Live human sessions of the caller, newest first; `all=true` lists everyone\'s and needs `admin`',
      access: { kind: 'authenticated', scope: 'owner-or-admin' },
      query: SessionsQuery,
      response: { status: 200, schema: SessionPage },
      errors: [400, 403],
      handler: async (ctx) => {
        const p = requirePrincipal(ctx);
        const auth = authOf(ctx.service);
        if (ctx.query.all) await ctx.authorize('admin', { kind: 'global' });
        let before: { createdNs: bigint; id: string } | undefined;
        if (ctx.query.cursor) {
          const [created, id] = decodeCursor('sessions', ctx.query.cursor, 2);
          if (!isUuid(id)) throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued for this listing');
          before = { createdNs: cursorInt64(created), id };
        }
        const limit = ctx.query.limit ?? DEFAULT_LIMIT;
        const rows = await listLiveSessions(auth.db, auth.sessionPolicy, { principalId: ctx.query.all ? undefined : p.id, before, limit: limit + 1 });
        const items = rows.slice(0, limit);
        const last = items[items.length - 1];
        const current = p.via === 'session' ? p.credentialId : undefined;
        return { body: {
          items: items.map((s) => sessionView(s, auth.sessionPolicy, current)),
          next_cursor: rows.length > limit && last ? encodeCursor('sessions', [last.created_ns.toString(), last.session_id]) : null,
        } };
      },
    }),
    defineRoute({
      operationId: 'logout', method: 'post', path: '/v1/auth/logout', area: 'Authentication',
      summary: 'Revoke the current session and clear its cookie',
      access: { kind: 'authenticated', scope: 'self' },
      response: { status: 204 },
      errors: [],
      handler: async (ctx) => {
        const p = requirePrincipal(ctx);
        const auth = authOf(ctx.service);
        if (p.via === 'session' && p.credentialId) {
          const sessionId = p.credentialId;
          await modelTransaction(auth.db, { principal: p.subject, reason: 'logout' }, async (tx, _txId, events) => {
            if (await revokeSession(tx, sessionId, p.subject)) events.emit('session', sessionId, 'revoked', { principal_id: p.id, cause: 'logout' });
          });
          auth.invalidate();
          auth.log.info({ correlation_id: ctx.correlationId, principal_id: p.id, session_id: sessionId }, 'logged out');
        }
        return { kind: 'empty', status: 204, headers: [['Set-Cookie', sessionClearCookie(ctx.secure)], ['Cache-Control', 'no-store']] };
      },
    }),
    defineRoute({
      operationId: 'revokeSession', method: 'delete', path: '/v1/auth/sessions/{id}', area: 'Authentication',
      summary: 'Revoke a session: any of one\'s own, or anyone\'s with `admin`',
      description: 'A session of another principal is reported as not found unless the caller holds `admin`, so session ids do not leak.',
      access: { kind: 'authenticated', scope: 'owner-or-admin' },
      params: IdParams,
      response: { status: 204 },
      errors: [400, 404],
      handler: async (ctx) => {
        const p = requirePrincipal(ctx);
        const auth = authOf(ctx.service);
        const s = await getSession(auth.db, ctx.params.id);
        const mine = s !== null && s.principal_id === p.id;
        if (!s || (!mine && !(await ctx.can('admin', { kind: 'global' })))) throw notFound('session', { session_id: ctx.params.id });
        await modelTransaction(auth.db, { principal: p.subject, reason: (mine ? 'session revoked by its owner' : 'session revoked by an administrator') }, async (tx, _txId, events) => {
          if (await revokeSession(tx, s.session_id, p.subject)) events.emit('session', s.session_id, 'revoked', { principal_id: s.principal_id, cause: mine ? 'owner' : 'administrator' });
        });
        auth.invalidate();
        auth.log.info({ correlation_id: ctx.correlationId, by: p.id, session_id: s.session_id, principal_id: s.principal_id }, 'session revoked');
        return { kind: 'empty', status: 204 };
      },
    }),
  ];
}
