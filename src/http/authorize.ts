// Step 2 of the pipeline: capability and scope, decided from the route's declaration
// before the body is read (so 401/403 never depend on a valid body), and the same checks
// offered to handlers as ctx.authorize / ctx.can. A resource outside the caller's grants
// answers 404 where the route hides existence. In shadow mode a denial is logged, not enforced.
import type { ServiceContext } from '../service-context.js';
import type { AnyRoute } from './route.js';
import type { Principal, AccessTarget } from '../auth/access-types.js';
import type { Capability } from '../auth/capabilities.js';
import type { Exchange } from './exchange.js';
import { ServiceError } from '../errors.js';

export class Authorizer {
  private readonly shadow: boolean;

  constructor(private readonly service: ServiceContext, private readonly principal: Principal | null, private readonly ex: Exchange) {
    this.shadow = service.access.mode === 'shadow';
  }

  /** The route's own access rule (`path-asset` / `path-view` read the scope from a validated path parameter). */
  async authorizeRoute(route: AnyRoute, params: Record<string, string>): Promise<void> {
    const principal = this.principal;
    if (route.access.kind !== 'capability' || !principal || principal.via === 'disabled-mode') return;
    const { capability, scope } = route.access;
    if (!(await this.service.access.holdsAnywhere(principal, capability))) await this.deny('forbidden', `capability ${capability} is not granted`);
    else if (scope === 'global') await this.check(capability, { kind: 'global' }, false);
    else if (scope === 'path-asset') await this.check(capability, { kind: 'asset', id: params[route.access.scopeParam ?? 'uuid'] }, true);
    else if (scope === 'path-view') await this.check(capability, { kind: 'view', id: params[route.access.scopeParam ?? 'uuid'] }, true);
  }

  /** Throws 403 (or 404 with hide, when the capability is held elsewhere, so existence does not leak) unless allowed. */
  async check(cap: Capability, target: AccessTarget, hide: boolean): Promise<void> {
    const principal = this.principal;
    if (!principal || principal.via === 'disabled-mode') return;
    if (await this.service.access.allows(principal, cap, target)) return;
    if (hide && await this.service.access.holdsAnywhere(principal, cap)) return this.deny('not-found', 'resource not found');
    return this.deny('forbidden', `capability ${cap} is not granted${target.kind === 'anywhere' ? '' : ` on this ${target.kind}`}`);
  }

  /** Whether the caller may use the capability on the target (for filtering results); always true in shadow mode. */
  async can(cap: Capability, target: AccessTarget): Promise<boolean> {
    const principal = this.principal;
    if (!principal || principal.via === 'disabled-mode' || this.shadow) return true;
    return this.service.access.allows(principal, cap, target);
  }

  private async deny(code: 'forbidden' | 'not-found', message: string): Promise<void> {
    if (this.shadow) {
      this.service.log.warn({ correlation_id: this.ex.correlationId, path: this.ex.path, principal: this.principal?.subject, would_deny: code, message }, 'shadow mode: request would be denied');
      return;
    }
    throw new ServiceError(code, message);
  }
}
