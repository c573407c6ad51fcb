// Cross-site request forgery defence for cookie-authenticated requests that change
// state. A browser attaches the session cookie to cross-site form posts (SameSite=Lax
// stops most, not all: same-site subdomains and top-level GET navigations), so a
// mutating request authenticated by cookie must also prove it came from our own pages:
//   - it must carry the header `X-Service-CSRF` (any non-empty value). A cross-site form
//     cannot set a custom header, and cross-origin scripts cannot either without a CORS
//     preflight, which this service never approves;
//   - and when the browser sends `Origin`, it must be this service's own origin.
// Bearer requests carry no ambient credential and are not affected.
import type { Principal } from './access-types.js';
import { ServiceError } from '../errors.js';

export const CSRF_HEADER = 'x-service-csrf';

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);

/**
 * Throws 403 csrf-rejected when a cookie-authenticated mutating request lacks the proof.
 * `method` is lower-case, `headers` has lower-case names.
 */
export function assertCsrfProof(principal: Principal | null, method: string, headers: ReadonlyMap<string, string>, secure: boolean): void {
  if (!principal || principal.via !== 'session' || !MUTATING.has(method.toLowerCase())) return;
  if (!headers.get(CSRF_HEADER)) {
    throw new ServiceError('csrf-rejected', `a request authenticated by the session cookie must send the ${CSRF_HEADER} header`);
  }
  const origin = headers.get('origin');
  if (origin !== undefined && origin !== 'null') {
    const host = headers.get('host');
    const forwarded = headers.get('x-forwarded-host');
    const allowed = [host, forwarded].filter((h): h is string => !!h).map((h) => h.toLowerCase()).flatMap((h) => [`https://${h}`, ...(secure ? [] : [`http://${h}`])]);
    if (!allowed.includes(origin.toLowerCase())) {
      throw new ServiceError('csrf-rejected', `origin ${origin} is not this service`);
    }
  } else if (origin === 'null') {
    throw new ServiceError('csrf-rejected', 'requests from an opaque origin are refused');
  }
}
