// Entry points of the auth area for the rest of the service:
//   createAccessControl  - built once at start (src/service.ts) and set as service.access;
//   bootstrapAdmin       - called once after migrations, creates the first administrator;
//   authOf               - the auth routes reach the full implementation through it;
//   authenticateServiceToken - for the gRPC ingest worker (bearer token -> identity).
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Db } from '../model/db.js';
import { AuthAccessControl } from './access-control.js';
import { OidcRelyingParty } from './oidc/relying-party.js';
import type { SessionPolicy } from './sessions.js';
import type { ScopeResolver } from './scope-resolver.js';
import type { PasswordHasher } from './password.js';
import { ServiceError } from '../errors.js';

export { AuthAccessControl, authOf } from './access-control.js';
export { bootstrapAdmin } from './bootstrap.js';
export { assertSameOrigin, type CrossOriginPolicy } from './csrf.js';
export type { ScopeResolver } from './scope-resolver.js';

export async function createAccessControl(opts: {
  db: Db; config: Config; log: Logger; sessionPolicy?: SessionPolicy; scopeResolver?: ScopeResolver; hasher?: PasswordHasher;
}): Promise<AuthAccessControl> {
  return new AuthAccessControl({
    db: opts.db,
    mode: opts.config.authMode,
    log: opts.log.child({ area: 'auth' }),
    sessionPolicy: opts.sessionPolicy,
    scopeResolver: opts.scopeResolver,
    hasher: opts.hasher,
    oidc: opts.config.oidc ? new OidcRelyingParty(opts.config.oidc) : null,
  });
}


export interface ServiceIdentityRef {
  identityId: string;
  /** The identity name; a collector's must equal the collector_id it streams as. */
  name: string;
  kind: string;
}

/**
 * Authenticates a bearer token (with or without the "Bearer " prefix) to a service
 * identity, for the gRPC ingest path. Throws ServiceError('unauthenticated') for a
 * missing, malformed, unknown, revoked or expired token, or a disabled identity; a
 * token of a person is refused too (people use sessions, not tokens).
 */
export async function authenticateServiceToken(access: AuthAccessControl, token: string): Promise<ServiceIdentityRef> {
  const bare = token.replace(/^Bearer[ ]+/i, '').trim();
  const p = await access.authenticateBearer(bare);
  if (p.kind === 'user') throw new ServiceError('unauthenticated', 'the token does not belong to a service identity');
  return { identityId: p.id, name: p.subject, kind: p.kind };
}
