// Step 1 of the pipeline: who is calling. Credentials (bearer token or session cookie)
// become a Principal; a state-changing browser request from another site is refused
// (src/auth/csrf.ts) in every posture, because that is request integrity, not authorization.
import type { ServiceContext } from '../service-context.js';
import type { AnyRoute } from './route.js';
import type { Principal } from '../auth/access-types.js';
import type { Exchange } from './exchange.js';
import { ServiceError } from '../errors.js';
import { localAdministrator } from '../auth/local-administrator.js';
import { assertSameOrigin } from '../auth/csrf.js';

/** The caller, or null on an anonymous route. In shadow mode a missing credential is logged and passes as the local administrator. */
export async function authenticate(service: ServiceContext, route: AnyRoute, ex: Exchange): Promise<Principal | null> {
  let principal: Principal | null = null;
  if (route.access.kind !== 'anonymous') {
    if (service.access.mode === 'disabled') principal = localAdministrator();
    else {
      principal = await service.access.authenticate({
        authorization: ex.headers.get('authorization'), cookie: ex.headers.get('cookie'), remoteAddress: ex.remoteAddress, correlationId: ex.correlationId,
      });
      if (!principal) {
        if (service.access.mode !== 'shadow') throw new ServiceError('unauthenticated', 'authentication required: send a session cookie or a bearer token');
        service.log.warn({ correlation_id: ex.correlationId, path: ex.path, would_deny: 'unauthenticated' }, 'shadow mode: request would be denied');
        principal = localAdministrator();
      }
    }
    ex.principalName = principal.subject;
  }
  assertSameOrigin(principal, ex.method, ex.headers, service.config);
  return principal;
}
