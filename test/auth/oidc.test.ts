// OIDC login against a real OpenID provider (the maintained `oidc-provider` package)
// running in this test process: authorization code + PKCE, state, nonce, ID token
// signature and claims, principal mapping, session cookie, redirect to the portal.
import t, { type Test } from 'tap';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { request } from '../helpers/service.js';
import { startAuthService, cookieClient, sessionCookieOf } from '../helpers/auth.js';

async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const ACCOUNTS: Record<string, { preferred_username: string; name: string; email: string }> = {
  'sub-jdoe': { preferred_username: 'jdoe', name: 'Jane Doe', email: 'jdoe@example.test' },
};

async function startProvider(t: Test, redirectUri: string): Promise<string> {
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'historian', client_secret: 'historian-secret', redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
    cookies: { keys: ['test-cookie-key'] },
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email'] },
    pkce: { required: () => true },
    async findAccount(_ctx, id) {
      const a = ACCOUNTS[id];
      return a ? { accountId: id, async claims() { return { sub: id, ...a }; } } : undefined;
    },
  });
  server.on('request', provider.callback());
  t.teardown(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  return issuer;
}

/** A browser at the provider: follows redirects, keeps its cookies, signs in and consents, until sent back to redirectUri. */
async function signInAtProvider(start: string, redirectUri: string, accountId: string): Promise<URL> {
  const jar = new Map<string, string>();
  const send = async (url: string, init: { method?: string; body?: string } = {}) => {
    const res = await fetch(url, {
      method: init.method ?? 'GET', redirect: 'manual', body: init.body,
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(init.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    await res.arrayBuffer();
    return res;
  };
  let url = start;
  let res = await send(url);
  for (let hop = 0; hop < 20; hop++) {
    const location = res.headers.get('location');
    if (location) {
      url = new URL(location, url).toString();
      if (url.startsWith(redirectUri)) return new URL(url);
      res = await send(url);
      continue;
    }
    if (res.status === 200 && /\/interaction\//.test(url)) {
      const prompt = jar.has('_login_done') ? 'consent' : 'login';
      jar.set('_login_done', '1');
      res = await send(url, { method: 'POST', body: prompt === 'login' ? `prompt=login&login=${encodeURIComponent(accountId)}&password=x` : 'prompt=consent' });
      continue;
    }
    throw new Error(`unexpected provider answer ${res.status} at ${url}`);
  }
  throw new Error('too many redirects at the provider');
}

t.test('OIDC login with a real provider', async (t) => {
  const port = await freePort();
  const redirectUri = `http://127.0.0.1:${port}/v1/auth/callback`;
  const issuer = await startProvider(t, redirectUri);
  const svc = await startAuthService(t, {
    SERVICE_HTTP_PORT: String(port),
    SERVICE_OIDC_ISSUER: issuer,
    SERVICE_OIDC_CLIENT_ID: 'historian',
    SERVICE_OIDC_CLIENT_SECRET: 'historian-secret',
    SERVICE_OIDC_REDIRECT_URI: redirectUri,
    SERVICE_PORTAL_URL: '/portal/',
    SERVICE_OIDC_DEFAULT_ROLE: 'viewer',
  });
  const { url } = svc;

  const startLogin = async () => {
    const r = await request(`${url}/v1/auth/login`);
    const stateCookie = r.headers.getSetCookie().find((c) => c.startsWith('service_oidc_state='));
    return { r, stateCookie: stateCookie?.split(';')[0] ?? '', location: r.headers.get('location') ?? '' };
  };

  await t.test('methods offer oidc when an issuer is configured, and nothing about the provider', async (t) => {
    const m = await request(`${url}/v1/auth/methods`);
    t.same(m.json, { auth_mode: 'enforced', login_methods: ['local', 'oidc'] });
  });

  let firstPrincipal = '';
  await t.test('login redirects with PKCE, state and nonce; the callback sets the session cookie and goes to the portal', async (t) => {
    const { r, stateCookie, location } = await startLogin();
    t.equal(r.status, 302);
    t.equal(r.headers.get('content-length'), '0', 'a bodiless redirect says so, so the browser does not wait for a body');
    const auth = new URL(location);
    t.equal(auth.origin, issuer);
    t.equal(auth.searchParams.get('code_challenge_method'), 'S256');
    t.ok(auth.searchParams.get('code_challenge'));
    t.ok(auth.searchParams.get('state'));
    t.ok(auth.searchParams.get('nonce'));
    t.equal(auth.searchParams.get('redirect_uri'), redirectUri);
    t.match(stateCookie, /^service_oidc_state=/);

    const back = await signInAtProvider(location, redirectUri, 'sub-jdoe');
    t.ok(back.searchParams.get('code'));
    const cb = await request(`${url}/v1/auth/callback${back.search}`, { headers: { cookie: stateCookie } });
    t.equal(cb.status, 302, cb.text);
    t.equal(cb.headers.get('location'), '/portal/');
    const set = cb.headers.getSetCookie().find((c) => c.startsWith('service_session='));
    t.match(set, /HttpOnly/);
    t.match(set, /SameSite=Lax/);
    const client = cookieClient(url, sessionCookieOf(cb));
    const who = (await client('/v1/auth/whoami')).json as { principal: { principal_id: string; subject: string; display: string }; roles: Array<{ name: string }> };
    t.equal(who.principal.subject, 'jdoe');
    t.equal(who.principal.display, 'Jane Doe');
    t.same(who.roles.map((x) => x.name), ['viewer'], 'the configured default role is granted at first login');
    firstPrincipal = who.principal.principal_id;

    const replay = await request(`${url}/v1/auth/callback${back.search}`, { headers: { cookie: stateCookie } });
    t.equal(replay.status, 401, 'a callback cannot be replayed');
  });

  await t.test('a second login maps to the same principal', async (t) => {
    const { stateCookie, location } = await startLogin();
    const back = await signInAtProvider(location, redirectUri, 'sub-jdoe');
    const cb = await request(`${url}/v1/auth/callback${back.search}`, { headers: { cookie: stateCookie } });
    t.equal(cb.status, 302);
    const who = (await cookieClient(url, sessionCookieOf(cb))('/v1/auth/whoami')).json as { principal: { principal_id: string } };
    t.equal(who.principal.principal_id, firstPrincipal);
    const sessions = (await svc.admin('/v1/auth/sessions?all=true')).json as { items: Array<{ subject: string; method: string }> };
    t.ok(sessions.items.some((s) => s.subject === 'jdoe' && s.method === 'oidc'));
  });

  await t.test('a callback carried into another browser (no or other state cookie) is refused', async (t) => {
    const { location } = await startLogin();
    const back = await signInAtProvider(location, redirectUri, 'sub-jdoe');
    const cb = await request(`${url}/v1/auth/callback${back.search}`, { headers: { cookie: 'service_oidc_state=someone-else' } });
    t.equal(cb.status, 401);
    t.equal((cb.json as { code: string }).code, 'unauthenticated');
  });

  await t.test('a provider error and a made-up state are refused', async (t) => {
    t.equal((await request(`${url}/v1/auth/callback?error=access_denied&state=x`)).status, 401);
    t.equal((await request(`${url}/v1/auth/callback?code=abc&state=never-issued`, { headers: { cookie: 'service_oidc_state=never-issued' } })).status, 401);
    t.equal((await request(`${url}/v1/auth/callback?unexpected=1`)).status, 400);
  });
});

t.test('without an issuer the OIDC routes answer 404', async (t) => {
  const svc = await startAuthService(t);
  t.equal((await request(`${svc.url}/v1/auth/login`)).status, 404);
  t.equal((await request(`${svc.url}/v1/auth/callback?code=a&state=b`)).status, 404);
});
