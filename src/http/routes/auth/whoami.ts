// The whoami document: the resolved principal, its grants as roles on scopes, the
// capabilities it holds somewhere, and a snapshot of where it holds them.
import type { Principal } from '../../../auth/access-types.js';
import type { AuthAccessControl } from '../../../auth/access-control.js';
import { scopeOf } from '../../../auth/grants.js';
import { CAPABILITIES, type Capability } from '../../../auth/capabilities.js';

const ordered = (set: ReadonlySet<Capability>) => CAPABILITIES.filter((c) => set.has(c));

export async function describePrincipal(auth: AuthAccessControl, p: Principal) {
  const base = {
    principal: { principal_id: p.id, kind: p.kind, subject: p.subject, display: p.display },
    authenticated_via: p.via,
    auth_mode: auth.mode,
    session_expires_ns: p.sessionExpiresNs ?? null,
  };
  if (p.via === 'disabled-mode') {
    // The built-in local administrator exists only in memory and holds everything.
    return { ...base, roles: [], capabilities: [...CAPABILITIES], authorization: { everywhere: [...CAPABILITIES], assets: [], views: [] } };
  }
  const rp = await auth.resolve(p.id);
  const grants = rp?.grants ?? [];
  const assets = new Map<string, Set<Capability>>();
  const views = new Map<string, Set<Capability>>();
  for (const g of grants) {
    if (g.grant.scope_kind === 'everywhere') continue;
    const into = g.grant.scope_kind === 'asset' ? assets : views;
    const id = g.grant.scope_id as string;
    const set = into.get(id) ?? new Set<Capability>();
    for (const c of g.caps) set.add(c);
    into.set(id, set);
  }
  return {
    ...base,
    roles: grants.map((g) => ({ grant_id: g.grant.grant_id, role_id: g.grant.role_id, name: g.grant.role_name, retired: g.grant.role_retired, scope: scopeOf(g.grant) })),
    capabilities: rp ? ordered(rp.anywhere) : [],
    authorization: {
      everywhere: rp ? ordered(rp.everywhere) : [],
      assets: [...assets].map(([asset_id, caps]) => ({ asset_id, capabilities: ordered(caps) })),
      views: [...views].map(([view_id, caps]) => ({ view_id, capabilities: ordered(caps) })),
    },
  };
}
