// OpenID Connect relying party: authorization code flow with PKCE (S256), state and
// nonce. Written on node:crypto and fetch rather than a client library because the
// flow we need is small and fixed (one issuer, one flow, asymmetric ID tokens); every
// step is tested against a real oidc-provider (test/auth/oidc.test.ts).
//
// A login attempt is remembered server-side under its state (verifier, nonce) and the
// browser gets a short-lived cookie with the same state, so a callback replayed into
// another browser (login CSRF) fails the state-to-cookie check.
import { createHash, randomBytes } from 'node:crypto';
import { ServiceError } from '../../errors.js';
import { JwksCache, verifyIdToken, type IdTokenClaims } from './id-token.js';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  redirectUri: string;
  portalUrl: string;
  defaultRole: string;
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
}

interface PendingLogin { verifier: string; nonce: string; createdMs: number }

export const OIDC_STATE_COOKIE = 'service_oidc_state';
/** A login must be completed within this time. */
const PENDING_TTL_MS = 10 * 60_000;
const MAX_PENDING = 10_000;
const FETCH_TIMEOUT_MS = 10_000;

const fail = (why: string) => new ServiceError('unauthenticated', `OIDC login failed: ${why}`);

export class OidcRelyingParty {
  private discovery: Promise<Discovery> | null = null;
  private readonly pending = new Map<string, PendingLogin>();
  private readonly jwks: JwksCache;

  constructor(readonly settings: OidcSettings) {
    this.jwks = new JwksCache(async () => {
      const d = await this.discover();
      const body = await this.getJson(d.jwks_uri);
      if (!Array.isArray(body.keys)) throw fail('the provider key set has no keys');
      return body.keys;
    });
  }

  /** Starts a login: the provider URL to redirect to, and the state for the browser cookie. */
  async begin(): Promise<{ url: string; state: string }> {
    const d = await this.discover();
    const state = randomBytes(32).toString('base64url');
    const nonce = randomBytes(32).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    this.sweep();
    this.pending.set(state, { verifier, nonce, createdMs: Date.now() });
    const url = new URL(d.authorization_endpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.settings.clientId);
    url.searchParams.set('redirect_uri', this.settings.redirectUri);
    url.searchParams.set('scope', 'openid profile email');
    url.searchParams.set('state', state);
    url.searchParams.set('nonce', nonce);
    url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
    url.searchParams.set('code_challenge_method', 'S256');
    return { url: url.toString(), state };
  }

  /** Completes a login from the callback's query and the browser's state cookie; returns the verified claims. */
  async complete(query: { code?: string; state?: string; error?: string; error_description?: string }, cookieState: string | undefined): Promise<IdTokenClaims> {
    if (query.error) throw fail(`the provider answered ${query.error}${query.error_description ? `: ${query.error_description}` : ''}`);
    if (!query.state || !query.code) throw fail('the callback lacks code or state');
    const p = this.pending.get(query.state);
    // One use only: a replayed callback finds nothing.
    this.pending.delete(query.state);
    if (!p || Date.now() - p.createdMs > PENDING_TTL_MS) throw fail('the login attempt is unknown or has expired; start again');
    if (cookieState !== query.state) throw fail('the login was started in another browser');
    const d = await this.discover();
    const form = new URLSearchParams({
      grant_type: 'authorization_code', code: query.code, redirect_uri: this.settings.redirectUri, code_verifier: p.verifier,
    });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (this.settings.clientSecret) {
      const enc = (s: string) => encodeURIComponent(s);
      headers.authorization = `Basic ${Buffer.from(`${enc(this.settings.clientId)}:${enc(this.settings.clientSecret)}`).toString('base64')}`;
    } else {
      form.set('client_id', this.settings.clientId);
    }
    const res = await this.fetch(d.token_endpoint, { method: 'POST', headers, body: form.toString() });
    const body = await res.json().catch(() => null) as Record<string, unknown> | null;
    if (!res.ok || !body) throw fail(`the token endpoint answered ${res.status}${body?.error ? ` (${String(body.error)})` : ''}`);
    if (typeof body.id_token !== 'string') throw fail('the token response has no id_token');
    const claims = await verifyIdToken(body.id_token, this.jwks, { issuer: d.issuer, clientId: this.settings.clientId, nonce: p.nonce });
    // Conforming providers put profile claims (name, preferred_username, email) in
    // userinfo rather than the ID token; fetch them when the ID token lacks them.
    if (claims.preferred_username === undefined && claims.name === undefined && d.userinfo_endpoint && typeof body.access_token === 'string') {
      const info = await this.getJson(d.userinfo_endpoint, body.access_token);
      if (info.sub !== claims.sub) throw fail('userinfo describes another subject than the ID token');
      for (const k of ['preferred_username', 'name', 'email'] as const) {
        if (typeof info[k] === 'string') claims[k] = info[k] as string;
      }
    }
    return claims;
  }

  private discover(): Promise<Discovery> {
    this.discovery ??= (async () => {
      const url = `${this.settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
      const d = await this.getJson(url);
      for (const k of ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
        if (typeof d[k] !== 'string') throw fail(`the provider discovery document lacks ${k}`);
      }
      if (d.issuer !== this.settings.issuer) throw fail(`the provider says its issuer is ${String(d.issuer)}, not ${this.settings.issuer}`);
      return d as unknown as Discovery;
    })();
    // A failed discovery is retried on the next login rather than remembered forever.
    this.discovery.catch(() => { this.discovery = null; });
    return this.discovery;
  }

  private async getJson(url: string, bearer?: string): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const res = await this.fetch(url, { headers });
    if (!res.ok) throw fail(`${url} answered ${res.status}`);
    return await res.json() as Record<string, unknown>;
  }

  private async fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    } catch (e) {
      throw new ServiceError('identity-provider-unavailable', `the OIDC provider is unreachable: ${(e as Error).message}`);
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, v] of this.pending) {
      if (now - v.createdMs <= PENDING_TTL_MS && this.pending.size < MAX_PENDING) break; // Map order: oldest first
      this.pending.delete(k);
    }
  }
}
