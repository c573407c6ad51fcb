// The AccessControl the HTTP pipeline and the ingest worker call: who is behind a
// credential, and may they use a capability on a target.
//
// Caching (authenticating a bearer request must cost well under a millisecond): three
// in-process maps hold token records, session records and resolved principals
// (principal row + grants compiled to capability sets). Entries live at most
// CACHE_TTL_MS, which bounds staleness for changes made by another process sharing the
// database; every change made through this process calls invalidate(), which empties
// all three maps at once and bumps a generation number so a load that started before
// the change cannot put stale data back. Revocation, disabling, grant and role
// changes therefore take effect on the very next request.
import type { Logger } from 'pino';
import type { Db } from '../model/db.js';
import type { Capability } from './capabilities.js';
import { CAPABILITIES } from './capabilities.js';
import type { AccessControl, AccessTarget, AuthMode, Principal, RequestCredentials } from './access-types.js';
import { ServiceError } from '../errors.js';
import { nowNs } from '../clock.js';
import { parseServiceToken, parseSessionCookie, secretMatches, sessionCookieFrom } from './credentials.js';
import { getPrincipal, type PrincipalRow } from './principals.js';
import { grantsOf, type GrantRow } from './grants.js';
import { isCapability } from './roles.js';
import { getToken } from './service-tokens.js';
import { getSession, touchSession, sessionEndsNs, DEFAULT_SESSION_POLICY, type SessionPolicy } from './sessions.js';
import { FLAT_SCOPE_RESOLVER, type ScopeResolver } from './scope-resolver.js';
import { localAdministrator } from './local-administrator.js';
import { PasswordHasher } from './password.js';
import { LoginThrottle } from './login-throttle.js';
import type { OidcRelyingParty } from './oidc/relying-party.js';

/** Bounds staleness against changes made by another process on the same database. */
const CACHE_TTL_MS = 30_000;
/** last_seen_ns is written back at most this often per session (idle expiry is hours). */
const TOUCH_INTERVAL_NS = 60n * 1_000_000_000n;
/** Above this many entries a map is emptied rather than grown (a flood of distinct ids). */
const MAX_CACHED = 50_000;

interface CachedToken {
  principalId: string;
  secretHash: Buffer;
  expiresNs: bigint | null;
  revoked: boolean;
  loadedMs: number;
  principal: Principal | null;
}

interface CachedSession {
  principalId: string;
  secretHash: Buffer;
  expiresNs: bigint;
  lastSeenNs: bigint;
  persistedLastSeenNs: bigint;
  revoked: boolean;
  loadedMs: number;
}

interface CompiledGrant { grant: GrantRow; caps: ReadonlySet<Capability> }

export interface ResolvedPrincipal {
  row: PrincipalRow;
  grants: CompiledGrant[];
  /** Capabilities held on some scope. */
  anywhere: ReadonlySet<Capability>;
  /** Capabilities held on the 'everywhere' scope (the whole model). */
  everywhere: ReadonlySet<Capability>;
  loadedMs: number;
}

export interface AccessControlOptions {
  db: Db;
  mode: AuthMode;
  log: Logger;
  sessionPolicy?: SessionPolicy;
  scopeResolver?: ScopeResolver;
  hasher?: PasswordHasher;
  /** Relying party for OIDC login, when an issuer is configured. */
  oidc?: OidcRelyingParty | null;
}

const unauthenticated = () => new ServiceError('unauthenticated', 'the credentials are unknown, expired or revoked');

export class AuthAccessControl implements AccessControl {
  readonly mode: AuthMode;
  readonly db: Db;
  readonly log: Logger;
  readonly sessionPolicy: SessionPolicy;
  /** Password hashing with its concurrency gate (local login, principal creation). */
  readonly hasher: PasswordHasher;
  /** Consecutive login failures per (username, address). */
  readonly throttle = new LoginThrottle();
  readonly oidc: OidcRelyingParty | null;
  private scopes: ScopeResolver;
  private readonly tokens = new Map<string, CachedToken>();
  private readonly sessions = new Map<string, CachedSession>();
  private readonly principals = new Map<string, ResolvedPrincipal>();
  private authGeneration = 0;

  constructor(opts: AccessControlOptions) {
    this.mode = opts.mode;
    this.db = opts.db;
    this.log = opts.log;
    this.sessionPolicy = opts.sessionPolicy ?? DEFAULT_SESSION_POLICY;
    this.scopes = opts.scopeResolver ?? FLAT_SCOPE_RESOLVER;
    this.hasher = opts.hasher ?? new PasswordHasher();
    this.oidc = opts.oidc ?? null;
  }

  /** The asset model plugs in the real asset tree here (see scope-resolver.ts). */
  useScopeResolver(resolver: ScopeResolver): void {
    this.scopes = resolver;
  }

  get scopeResolver(): ScopeResolver {
    return this.scopes;
  }

  get generation(): number {
    return this.authGeneration;
  }

  /** Drops every cached credential and principal; call after any auth change commits. */
  invalidate(): void {
    this.authGeneration++;
    this.tokens.clear();
    this.sessions.clear();
    this.principals.clear();
  }

  async authenticate(creds: RequestCredentials): Promise<Principal | null> {
    if (this.mode === 'disabled') return localAdministrator();
    if (creds.authorization !== undefined) {
      const m = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(creds.authorization);
      if (!m) {
        this.refuse(creds, 'malformed-authorization');
        throw new ServiceError('unauthenticated', 'Authorization: expected "Bearer <token>"');
      }
      return this.authenticateBearer(m[1], creds);
    }
    const cookie = sessionCookieFrom(creds.cookie);
    if (cookie === undefined) return null;
    return this.authenticateSession(cookie, creds);
  }

  /** The principal behind a service token; throws 401 for anything else. */
  async authenticateBearer(token: string, creds?: RequestCredentials): Promise<Principal> {
    const parsed = parseServiceToken(token);
    if (!parsed) { this.refuse(creds, 'malformed-token'); throw unauthenticated(); }
    let t = this.tokens.get(parsed.id);
    if (!t || Date.now() - t.loadedMs > CACHE_TTL_MS) {
      const gen = this.authGeneration;
      const row = await getToken(this.db, parsed.id);
      if (!row) { this.refuse(creds, 'unknown-token', parsed.id); throw unauthenticated(); }
      t = { principalId: row.principal_id, secretHash: row.secret_hash, expiresNs: row.expires_ns, revoked: row.revoked_ns !== null, loadedMs: Date.now(), principal: null };
      if (gen === this.authGeneration) this.remember(this.tokens, parsed.id, t);
    }
    if (!secretMatches(parsed.secret, t.secretHash)) { this.refuse(creds, 'wrong-secret', parsed.id); throw unauthenticated(); }
    if (t.revoked) { this.refuse(creds, 'revoked-token', parsed.id); throw unauthenticated(); }
    if (t.expiresNs !== null && nowNs() >= t.expiresNs) { this.refuse(creds, 'expired-token', parsed.id); throw unauthenticated(); }
    if (t.principal) return t.principal;
    const rp = await this.resolve(t.principalId);
    if (!rp || rp.row.disabled) { this.refuse(creds, 'principal-disabled', parsed.id); throw unauthenticated(); }
    t.principal = Object.freeze({
      id: rp.row.principal_id, kind: rp.row.kind, subject: rp.row.subject, display: rp.row.display,
      via: 'bearer', credentialId: parsed.id,
    } satisfies Principal);
    return t.principal;
  }

  private async authenticateSession(cookie: string, creds: RequestCredentials): Promise<Principal> {
    const parsed = parseSessionCookie(cookie);
    if (!parsed) { this.refuse(creds, 'malformed-cookie'); throw unauthenticated(); }
    let s = this.sessions.get(parsed.id);
    if (!s || Date.now() - s.loadedMs > CACHE_TTL_MS) {
      const gen = this.authGeneration;
      const row = await getSession(this.db, parsed.id);
      if (!row) { this.refuse(creds, 'unknown-session', parsed.id); throw unauthenticated(); }
      const lastSeen = s && s.lastSeenNs > row.last_seen_ns ? s.lastSeenNs : row.last_seen_ns;
      s = { principalId: row.principal_id, secretHash: row.secret_hash, expiresNs: row.expires_ns, lastSeenNs: lastSeen,
        persistedLastSeenNs: row.last_seen_ns, revoked: row.revoked_ns !== null, loadedMs: Date.now() };
      if (gen === this.authGeneration) this.remember(this.sessions, parsed.id, s);
    }
    if (!secretMatches(parsed.secret, s.secretHash)) { this.refuse(creds, 'wrong-secret', parsed.id); throw unauthenticated(); }
    if (s.revoked) { this.refuse(creds, 'revoked-session', parsed.id); throw unauthenticated(); }
    const now = nowNs();
    if (now >= sessionEndsNs({ last_seen_ns: s.lastSeenNs, expires_ns: s.expiresNs }, this.sessionPolicy)) {
      this.refuse(creds, 'expired-session', parsed.id);
      throw unauthenticated();
    }
    const rp = await this.resolve(s.principalId);
    if (!rp || rp.row.disabled) { this.refuse(creds, 'principal-disabled', parsed.id); throw unauthenticated(); }
    s.lastSeenNs = now;
    if (now - s.persistedLastSeenNs > TOUCH_INTERVAL_NS) {
      s.persistedLastSeenNs = now;
      touchSession(this.db, parsed.id, now).catch((e) => this.log.warn({ err: e, session_id: parsed.id }, 'could not record session activity'));
    }
    return {
      id: rp.row.principal_id, kind: rp.row.kind, subject: rp.row.subject, display: rp.row.display,
      via: 'session', credentialId: parsed.id,
      sessionExpiresNs: sessionEndsNs({ last_seen_ns: now, expires_ns: s.expiresNs }, this.sessionPolicy),
    };
  }

  async allows(principal: Principal, capability: Capability, target: AccessTarget): Promise<boolean> {
    if (!isCapability(capability)) return false; // unknown capability strings never grant
    if (principal.via === 'disabled-mode') return true;
    const rp = await this.resolve(principal.id);
    if (!rp || rp.row.disabled) return false;
    switch (target.kind) {
      case 'anywhere': return rp.anywhere.has(capability);
      case 'global':
      case 'staging': return rp.everywhere.has(capability);
      case 'owner':
        if (target.principal === principal.id || target.principal === principal.subject) return rp.anywhere.has(capability);
        return rp.everywhere.has('admin');
      case 'view':
        if (rp.everywhere.has(capability)) return true;
        return rp.grants.some((g) => g.grant.scope_kind === 'view' && g.grant.scope_id === target.id && g.caps.has(capability));
      case 'asset': return this.allowsOnAsset(rp, capability, target.id);
      default: return false;
    }
  }

  private async allowsOnAsset(rp: ResolvedPrincipal, capability: Capability, assetId: string): Promise<boolean> {
    if (rp.everywhere.has(capability)) return true;
    const scoped = rp.grants.filter((g) => g.grant.scope_kind !== 'everywhere' && g.caps.has(capability));
    if (scoped.length === 0) return false;
    if (scoped.some((g) => g.grant.scope_kind === 'asset')) {
      const ancestors = await this.scopes.assetAncestors(assetId);
      if (ancestors === null) return false;
      const under = new Set(ancestors);
      if (scoped.some((g) => g.grant.scope_kind === 'asset' && under.has(g.grant.scope_id as string))) return true;
    }
    if (scoped.some((g) => g.grant.scope_kind === 'view')) {
      const views = new Set(await this.scopes.viewsContainingAsset(assetId));
      if (scoped.some((g) => g.grant.scope_kind === 'view' && views.has(g.grant.scope_id as string))) return true;
    }
    return false;
  }

  async holdsAnywhere(principal: Principal, capability: Capability): Promise<boolean> {
    if (!isCapability(capability)) return false;
    if (principal.via === 'disabled-mode') return true;
    const rp = await this.resolve(principal.id);
    return !!rp && !rp.row.disabled && rp.anywhere.has(capability);
  }

  /** Principal row and compiled grants, cached; null when the principal does not exist. */
  async resolve(principalId: string): Promise<ResolvedPrincipal | null> {
    const hit = this.principals.get(principalId);
    if (hit && Date.now() - hit.loadedMs <= CACHE_TTL_MS) return hit;
    const gen = this.authGeneration;
    const row = await getPrincipal(this.db, principalId);
    if (!row) return null;
    const grants = (await grantsOf(this.db, principalId)).map((g) => ({
      grant: g,
      // A retired role grants nothing; unknown strings in stored capabilities are dropped.
      caps: new Set<Capability>(g.role_retired ? [] : g.capabilities.filter(isCapability)),
    }));
    const anywhere = new Set<Capability>();
    const everywhere = new Set<Capability>();
    for (const g of grants) {
      for (const c of g.caps) {
        anywhere.add(c);
        if (g.grant.scope_kind === 'everywhere') everywhere.add(c);
      }
    }
    const rp: ResolvedPrincipal = { row, grants, anywhere, everywhere, loadedMs: Date.now() };
    if (gen === this.authGeneration) this.remember(this.principals, principalId, rp);
    return rp;
  }

  /** Capabilities the principal holds on a target, in enum order. */
  async effectiveCapabilities(principal: Principal, target: AccessTarget): Promise<Capability[]> {
    const out: Capability[] = [];
    for (const c of CAPABILITIES) if (await this.allows(principal, c, target)) out.push(c);
    return out;
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= MAX_CACHED) map.clear();
    map.set(key, value);
  }

  /** Audit line for a refused credential: the reason and the credential id, never the secret. */
  private refuse(creds: RequestCredentials | undefined, reason: string, credentialId?: string): void {
    this.log.info({ correlation_id: creds?.correlationId, remote_address: creds?.remoteAddress, reason, credential_id: credentialId }, 'authentication refused');
  }
}

/** The full auth implementation behind service.access (the auth routes need more than the AccessControl seam). */
export function authOf(service: { access: AccessControl }): AuthAccessControl {
  if (!(service.access instanceof AuthAccessControl)) throw new Error('BUG: service.access is not the auth area\'s AuthAccessControl');
  return service.access;
}
