// Auth test helpers: a real service in enforced mode with its bootstrap administrator,
// and small clients that log in with real cookies or call with real bearer tokens.
import type { Test } from 'tap';
import { startTestService, request, type TestService, type HttpResult } from './service.js';

export const ADMIN_PASSWORD = 'correct horse battery staple';

export interface AuthFixture extends TestService {
  /** Requests as the bootstrap administrator through a real session cookie. */
  admin: Client;
}

export type Client = (path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }) => Promise<HttpResult>;

export async function startAuthService(t: Test, env: Record<string, string> = {}, logLevel?: string): Promise<AuthFixture> {
  const ts = await startTestService(t, { env: { SERVICE_AUTH_MODE: 'enforced', SERVICE_ADMIN_PASSWORD: ADMIN_PASSWORD, ...env }, logLevel });
  const admin = await login(ts.url, 'admin', ADMIN_PASSWORD);
  return { ...ts, admin };
}

/** The `service_session=...` pair from a Set-Cookie header. */
export function sessionCookieOf(res: HttpResult): string {
  const set = res.headers.getSetCookie().find((c) => c.startsWith('service_session='));
  if (!set) throw new Error(`no session cookie in response ${res.status}: ${res.text}`);
  return set.split(';')[0];
}

/** Logs in and returns a client that sends the cookie, as curl with a cookie jar does. */
export async function login(url: string, username: string, password: string): Promise<Client> {
  const res = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username, password } });
  if (res.status !== 204) throw new Error(`login of ${username} failed: ${res.status} ${res.text}`);
  return cookieClient(url, sessionCookieOf(res));
}

export function cookieClient(url: string, cookie: string): Client {
  return (path, init = {}) => {
    const method = init.method ?? 'GET';
    const headers: Record<string, string> = { cookie, ...init.headers };
    return request(`${url}${path}`, { ...init, method, headers });
  };
}

export function bearerClient(url: string, token: string): Client {
  return (path, init = {}) => request(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });
}

/** Creates a person with the given built-in role granted everywhere (or none) and returns its id. */
export async function createPerson(admin: Client, username: string, password: string, role?: string): Promise<string> {
  const p = await admin('/v1/auth/principals', { method: 'POST', body: { username, password } });
  if (p.status !== 201) throw new Error(`create ${username}: ${p.status} ${p.text}`);
  const id = (p.json as { principal_id: string }).principal_id;
  if (role) await grantRole(admin, id, role);
  return id;
}

export async function grantRole(admin: Client, principalId: string, roleName: string, scope: Record<string, string> = { kind: 'everywhere' }): Promise<string> {
  const roles = await admin('/v1/auth/roles');
  const role = (roles.json as { items: Array<{ role_id: string; name: string }> }).items.find((r) => r.name === roleName);
  if (!role) throw new Error(`no role ${roleName}`);
  const g = await admin('/v1/auth/grants', { method: 'POST', body: { principal_id: principalId, role_id: role.role_id, scope } });
  if (g.status !== 201) throw new Error(`grant ${roleName}: ${g.status} ${g.text}`);
  return (g.json as { grant_id: string }).grant_id;
}

/** Creates a service identity and mints a token for it; returns both. */
export async function createServiceWithToken(admin: Client, name: string, kind = 'integration', role?: string): Promise<{ identityId: string; token: string; tokenId: string }> {
  const s = await admin('/v1/auth/service-identities', { method: 'POST', body: { kind, name } });
  if (s.status !== 201) throw new Error(`create identity ${name}: ${s.status} ${s.text}`);
  const identityId = (s.json as { identity_id: string }).identity_id;
  const k = await admin(`/v1/auth/service-identities/${identityId}/tokens`, { method: 'POST', body: { comment: 'test' } });
  if (k.status !== 201) throw new Error(`mint token: ${k.status} ${k.text}`);
  const { token, token_id } = k.json as { token: string; token_id: string };
  if (role) await grantRole(admin, identityId, role);
  return { identityId, token, tokenId: token_id };
}
