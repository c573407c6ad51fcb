// What the contract promises each principal on one operation, from the operation's declared
// access alone (x-access, x-capability, x-scope in the served contract; the scope parameter
// from the route). Anything the matrix cannot derive is `not-understood`, and the matrix
// test fails on it: a new kind of access needs its rule here before its route can ship.
import { CAPABILITIES, type Capability } from '../../src/auth/capabilities.js';

export type GrantScope = { kind: 'everywhere' } | { kind: 'asset'; id: string } | { kind: 'view'; id: string };

export interface MatrixPrincipal {
  name: string;
  headers: Record<string, string>;
  /** False for credentials that must authenticate nobody: none, revoked, expired, logged out. */
  live: boolean;
  grants: Array<{ capabilities: readonly Capability[]; scope: GrantScope }>;
  /** A principal holding exactly one capability is only called on the routes that require it. */
  onlyCapability?: Capability;
}

export interface ContractAccess {
  access: string;
  capability: string | null;
  scope: string;
  scopeParam?: string;
}

export interface MatrixTargets {
  /** The assets each granted asset or view scope reaches (scope id -> asset ids). */
  assetsInScope: Map<string, Set<string>>;
}

export type Outcome =
  | { kind: 'status'; statuses: number[]; text: string }
  | { kind: 'allowed'; text: string }
  | { kind: 'authenticated'; text: string }
  | { kind: 'not-understood'; text: string };

const status = (...statuses: number[]): Outcome => ({ kind: 'status', statuses, text: statuses.join(' or ') });
const ALLOWED: Outcome = { kind: 'allowed', text: 'allowed (neither 401 nor 403)' };
/** The route lets the caller in; the handler decides per item (403 or 404 on what is not theirs). */
const AUTHENTICATED: Outcome = { kind: 'authenticated', text: 'authenticated (not 401)' };
const KNOWN = new Set<string>(CAPABILITIES);

export function expectedOutcome(a: ContractAccess, p: MatrixPrincipal, target: { pathValue?: string }, targets: MatrixTargets): Outcome {
  const notUnderstood: Outcome = { kind: 'not-understood', text: `${a.access}/${a.scope}` };
  if (a.access === 'anonymous') return ALLOWED;
  if (a.access !== 'authenticated' && a.access !== 'capability') return notUnderstood;
  if (!p.live) return status(401);
  const holds = (cap: string, where: (s: GrantScope) => boolean) => p.grants.some((g) => (g.capabilities as readonly string[]).includes(cap) && where(g.scope));
  const everywhere = (cap: string) => holds(cap, (s) => s.kind === 'everywhere');

  if (a.access === 'authenticated') {
    if (a.scope === 'self') return ALLOWED;
    if (a.scope === 'owner-or-admin') return everywhere('admin') ? ALLOWED : AUTHENTICATED;
    return notUnderstood;
  }

  const cap = a.capability;
  if (cap === null || !KNOWN.has(cap)) return notUnderstood;
  // The route checks "held anywhere" first, for every scope kind: without it, 403 before anything else.
  if (!holds(cap, () => true)) return status(403);
  switch (a.scope) {
    case 'global': return everywhere(cap) ? ALLOWED : status(403);
    case 'anywhere': case 'each-result': return ALLOWED;
    case 'handler': return everywhere(cap) ? ALLOWED : AUTHENTICATED;
    case 'path-asset': {
      if (everywhere(cap)) return ALLOWED;
      const asset = target.pathValue;
      if (asset === undefined) return notUnderstood;
      const reached = holds(cap, (s) => s.kind !== 'everywhere' && (targets.assetsInScope.get(s.id)?.has(asset) ?? false));
      // Held elsewhere: an asset outside the grant answers as if it did not exist.
      return reached ? ALLOWED : status(404);
    }
    case 'path-view': {
      if (everywhere(cap)) return ALLOWED;
      const view = target.pathValue;
      if (view === undefined) return notUnderstood;
      return holds(cap, (s) => s.kind === 'view' && s.id === view) ? ALLOWED : status(404);
    }
    default: return notUnderstood;
  }
}

/** Let in: neither refused nor failed. A 503 (a part not ready, such as the portal before its build) is the spec's, not a refusal. */
const answered = (got: number) => got < 500 || got === 503;

export function outcomeHolds(o: Outcome, got: number): boolean {
  switch (o.kind) {
    case 'status': return o.statuses.includes(got);
    case 'allowed': return got !== 401 && got !== 403 && answered(got);
    case 'authenticated': return got !== 401 && answered(got);
    case 'not-understood': return false;
  }
}
