// Cross-site request forgery defence by Fetch Metadata, as Go's
// net/http.CrossOriginProtection does it (Go 1.25, src/net/http/csrf.go). A browser says
// where a request comes from: `Sec-Fetch-Site` (every current browser) or, from older
// ones, `Origin`. A state-changing request is refused when
//   - `Sec-Fetch-Site` is present and is neither `same-origin` nor `none` (a user typing
//     the URL or a bookmark), unless its `Origin` is a configured trusted origin;
//   - `Sec-Fetch-Site` is absent, `Origin` is present, and Origin's host is neither this
//     service's `Host` (nor `X-Forwarded-Host` behind a trusted proxy) nor a trusted origin.
// A request with neither header does not come from a browser (curl with a cookie jar, a
// program) and passes: the attack needs a victim's browser, which always sends one.
// Bearer requests carry no ambient credential and are never checked. Safe methods (GET,
// HEAD, OPTIONS) are not checked: they change nothing.
import type { Principal } from './access-types.js';
import { ServiceError } from '../errors.js';

const SAFE = new Set(['get', 'head', 'options']);

export interface CrossOriginPolicy {
  /** Exact origins (`scheme://host[:port]`, lower-case) allowed besides our own, e.g. a portal on another host. */
  readonly trustedOrigins: ReadonlySet<string>;
  /** Behind a proxy we trust, `X-Forwarded-Host` also names our own host. */
  readonly trustProxy: boolean;
}

/**
 * Throws 403 csrf-rejected when a browser sent a state-changing request from another site.
 * `method` is lower-case, `headers` has lower-case names.
 */
export function assertSameOrigin(principal: Principal | null, method: string, headers: ReadonlyMap<string, string>, policy: CrossOriginPolicy): void {
  if (principal?.via === 'bearer' || SAFE.has(method)) return;
  const site = headers.get('sec-fetch-site');
  const origin = headers.get('origin');
  if (site !== undefined) {
    if (site === 'same-origin' || site === 'none') return;
    if (origin !== undefined && policy.trustedOrigins.has(origin.toLowerCase())) return;
    throw new ServiceError('csrf-rejected', `a ${site} browser request may not change state here (Sec-Fetch-Site: ${site}); send it from this service's own pages or a trusted origin`);
  }
  if (origin === undefined) return;
  if (policy.trustedOrigins.has(origin.toLowerCase())) return;
  const host = hostOf(origin);
  if (host !== null) {
    if (host === (headers.get('host') ?? '').toLowerCase()) return;
    const forwarded = policy.trustProxy ? headers.get('x-forwarded-host') : undefined;
    if (forwarded !== undefined && host === forwarded.toLowerCase()) return;
  }
  throw new ServiceError('csrf-rejected', `origin ${origin} is neither this service nor a trusted origin (SERVICE_TRUSTED_ORIGINS)`);
}

/** `host[:port]` of an origin, lower-case; null for `null` and anything that is not an origin. */
function hostOf(origin: string): string | null {
  try {
    const u = new URL(origin);
    return u.host === '' ? null : u.host.toLowerCase();
  } catch {
    return null;
  }
}
