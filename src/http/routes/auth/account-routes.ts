// Authentication area, a principal's account: changing a password (one's own with the
// current password; anyone's as an administrator) and disabling or enabling a principal.
// Each change commits through the model transaction log and drops this process's auth
// caches, so it holds from the next request on.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError, notFound } from '../../../errors.js';
import { modelTransaction, type Who } from '../../../model/tx-log.js';
import { authOf } from '../../../auth/access-control.js';
import { getPrincipal, principalView, setPrincipalDisabled, setPrincipalPassword } from '../../../auth/principals.js';
import * as S from './schemas.js';

const admin = { kind: 'capability', capability: 'admin', scope: 'global' } as const;

function who(ctx: HandlerContext, reason: string | undefined, fallback: string): Who {
  return { principal: ctx.principal?.subject ?? 'anonymous', reason: reason ?? fallback };
}

function setDisabledRoute(disabled: boolean): AnyRoute {
  const verb = disabled ? 'disable' : 'enable';
  return defineRoute({
    operationId: disabled ? 'disablePrincipal' : 'enablePrincipal', method: 'post', path: `/v1/auth/principals/{id}/${verb}`, area: 'Authentication',
    summary: disabled
      ? 'Disable a principal (a person or a service identity): its sessions and tokens are revoked and it cannot log in (403 `account-sealed`)'
      : 'Enable a disabled principal again: it can log in; tokens revoked when it was disabled stay revoked (mint new ones)',
    description: disabled ? 'Administrators cannot disable themselves (409), so the service is never left without the administrator who acted.' : undefined,
    access: admin, params: S.IdParams, body: S.PrincipalStateBody,
    response: { status: 200, schema: S.Principal }, errors: disabled ? [400, 404, 409] : [400, 404],
    handler: async (ctx) => {
      const auth = authOf(ctx.service);
      if (disabled && ctx.principal?.id === ctx.params.id) {
        throw new ServiceError('conflict', 'you cannot disable yourself; another administrator can', { principal_id: ctx.params.id });
      }
      try {
        const { result } = await modelTransaction(auth.db, who(ctx, ctx.body.reason, `${verb} principal`), (tx, txId, ev) =>
          setPrincipalDisabled(tx, txId, ev, ctx.params.id, disabled, ctx.principal?.subject ?? 'anonymous'));
        auth.log.info({ correlation_id: ctx.correlationId, principal_id: result.principal_id, subject: result.subject, by: ctx.principal?.subject }, `principal ${verb}d`);
        return { body: principalView(result) };
      } finally {
        auth.invalidate();
      }
    },
  });
}

export function accountRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'changePassword', method: 'post', path: '/v1/auth/principals/{id}/password', area: 'Authentication',
      summary: 'Change a person\'s local password: your own with `current_password`, anyone\'s as an administrator',
      description: 'The person\'s other sessions are revoked (a person changing their own password keeps the session of this request), so a session opened with the old password does not outlive it. Wrong current passwords count towards the login throttle (429). `GET /v1/auth/whoami` gives your principal_id.',
      access: { kind: 'authenticated', scope: 'owner-or-admin' }, params: S.IdParams, body: S.ChangePasswordBody, bodyLimit: 8 * 1024,
      response: { status: 204, description: 'Changed; the old password no longer logs in' }, errors: [400, 403, 404, 429],
      handler: async (ctx) => {
        const auth = authOf(ctx.service);
        const me = ctx.principal;
        if (!me) throw new ServiceError('unauthenticated', 'authentication required');
        const self = me.id === ctx.params.id;
        if (!self) await ctx.authorize('admin', { kind: 'global' });
        const row = await getPrincipal(auth.db, ctx.params.id);
        if (!row) throw notFound('principal', { principal_id: ctx.params.id });
        if (self) {
          const given = ctx.body.current_password;
          if (given === undefined) {
            throw new ServiceError('invalid-request', 'body.current_password: required to change your own password', { errors: [{ field: 'body.current_password', problem: 'required to change your own password' }] });
          }
          const waitMs = auth.throttle.retryAfterMs(row.subject, ctx.remoteAddress);
          if (waitMs > 0) {
            const seconds = Math.ceil(waitMs / 1000);
            throw new ServiceError('too-many-requests', `too many wrong passwords; retry in ${seconds} s`, { retry_after_s: seconds }, { 'Retry-After': String(seconds) });
          }
          if (!(await auth.hasher.verify(given, row.password_hash))) {
            auth.throttle.recordFailure(row.subject, ctx.remoteAddress);
            auth.log.warn({ correlation_id: ctx.correlationId, principal_id: row.principal_id, outcome: 'failure' }, 'password change refused: wrong current password');
            throw new ServiceError('wrong-current-password', 'body.current_password: not your current password');
          }
        }
        const hash = await auth.hasher.hash(ctx.body.new_password);
        const keep = self && me.via === 'session' ? me.credentialId ?? null : null;
        try {
          await modelTransaction(auth.db, who(ctx, ctx.body.reason, 'change password'), (tx, txId, ev) =>
            setPrincipalPassword(tx, txId, ev, row.principal_id, hash, keep, me.subject));
        } finally {
          auth.invalidate();
        }
        auth.log.info({ correlation_id: ctx.correlationId, principal_id: row.principal_id, subject: row.subject, by: me.subject }, 'password changed');
        return { kind: 'empty', status: 204, headers: [['Cache-Control', 'no-store']] };
      },
    }),
    setDisabledRoute(true),
    setDisabledRoute(false),
  ];
}
