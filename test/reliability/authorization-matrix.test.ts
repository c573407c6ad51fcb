// The authorization matrix (issue 31 item 4), generated from the served contract: every
// operation's x-access, x-capability and x-scope decide what each principal must get,
//   anonymous, a revoked service token, an expired session, a logged-out session -> 401
//   a principal with no grants                    -> 403 on every capability route
//   each built-in role (viewer, operator, engineer, administrator), everywhere
//   an engineer granted one asset subtree, an engineer granted one view (in and out of scope)
//   one principal per capability holding exactly that capability
// -> 401 / 403 / 404 (an out-of-scope read answers as if absent) / allowed (neither 401 nor 403).
// A route whose declared access the matrix does not understand fails with a message saying
// so: a new route cannot ship without its row. (This replaces test/http/authorization-matrix.test.ts.)
import t from 'tap';
import { allRoutes } from '../../src/http/routes/index.js';
import { contractCapability } from '../../src/http/openapi.js';
import { BUILTIN_ROLES } from '../../src/auth/roles.js';
import { CAPABILITIES, type Capability } from '../../src/auth/capabilities.js';
import { startAuthService, createPerson, grantRole, createServiceWithToken, sessionCookieOf, ADMIN_PASSWORD, type Client } from '../helpers/auth.js';
import { request } from '../helpers/service.js';
import { concretePath, statusOf, METHOD } from '../../reliability/authorization/calls.js';
import { expectedOutcome, outcomeHolds, type MatrixPrincipal, type ContractAccess } from '../../reliability/authorization/expected.js';

t.setTimeout(600_000);

interface ContractOp { 'x-capability': string | null; 'x-access': string; 'x-scope': string }

async function login(url: string, username: string, password: string): Promise<string> {
  return sessionCookieOf(await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username, password } }));
}

async function bearerPrincipal(admin: Client, name: string, grants: Array<{ role: string; scope?: Record<string, string> }>): Promise<string> {
  const { identityId, token } = await createServiceWithToken(admin, name);
  for (const g of grants) await grantRole(admin, identityId, g.role, g.scope);
  return `Bearer ${token}`;
}

t.test('authorization matrix over every operation of the contract', async (t) => {
  const svc = await startAuthService(t);
  const { url, admin } = svc;
  const routes = allRoutes();
  const contract = (await request(`${url}/v1/openapi.json`)).json as { paths: Record<string, Record<string, ContractOp>> };

  // The model the scoped principals see: asset A with child A1, asset B apart; view V holds B, view W nothing.
  const mk = async (path: string, body: unknown) => {
    const r = await admin(path, { method: 'POST', body });
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json as Record<string, string>;
  };
  const siteA = (await mk('/v1/model/assets', { name: 'Matrix-A' })).asset_id;
  const areaA1 = (await mk('/v1/model/assets', { name: 'Matrix-A1', parent: siteA })).asset_id;
  const siteB = (await mk('/v1/model/assets', { name: 'Matrix-B' })).asset_id;
  const viewV = (await mk('/v1/model/views', { name: 'Matrix-V', members: [{ asset_id: siteB, parent_asset_id: null }] })).view_id;
  const viewW = (await mk('/v1/model/views', { name: 'Matrix-W' })).view_id;

  const principals: MatrixPrincipal[] = [];
  const live = (name: string, auth: Record<string, string>, grants: MatrixPrincipal['grants'], extra: Partial<MatrixPrincipal> = {}) =>
    principals.push({ name, headers: auth, live: true, grants, ...extra });
  const everywhere = (role: keyof typeof BUILTIN_ROLES) => ({ capabilities: BUILTIN_ROLES[role].capabilities as readonly Capability[], scope: { kind: 'everywhere' as const } });

  principals.push({ name: 'anonymous', headers: {}, live: false, grants: [] });
  live('no grants', { authorization: await bearerPrincipal(admin, 'matrix-nobody', []) }, []);
  for (const role of Object.keys(BUILTIN_ROLES) as Array<keyof typeof BUILTIN_ROLES>) {
    live(`${role} everywhere`, { authorization: await bearerPrincipal(admin, `matrix-${role}`, [{ role }]) }, [everywhere(role)]);
  }
  live('administrator by session cookie', { cookie: await login(url, 'admin', ADMIN_PASSWORD) }, [everywhere('administrator')]);
  const engineer = BUILTIN_ROLES.engineer.capabilities as readonly Capability[];
  live('engineer on asset subtree A', { authorization: await bearerPrincipal(admin, 'matrix-subtree', [{ role: 'engineer', scope: { kind: 'asset', asset_id: siteA } }]) },
    [{ capabilities: engineer, scope: { kind: 'asset', id: siteA } }]);
  live('engineer on view V', { authorization: await bearerPrincipal(admin, 'matrix-view', [{ role: 'engineer', scope: { kind: 'view', view_id: viewV } }]) },
    [{ capabilities: engineer, scope: { kind: 'view', id: viewV } }]);
  for (const cap of CAPABILITIES) {
    const role = await admin('/v1/auth/roles', { method: 'POST', body: { name: `only-${cap}`, capabilities: [cap] } });
    t.equal(role.status, 201, `role only-${cap}`);
    live(`only ${cap}`, { authorization: await bearerPrincipal(admin, `matrix-only-${cap}`, [{ role: `only-${cap}` }]) }, [{ capabilities: [cap], scope: { kind: 'everywhere' } }], { onlyCapability: cap });
  }

  // Dead credentials: a revoked token, an expired session, a logged-out session.
  const revoked = await createServiceWithToken(admin, 'matrix-revoked', 'integration', 'administrator');
  t.equal((await admin(`/v1/auth/service-identities/tokens/${revoked.tokenId}/revoke`, { method: 'POST', body: {} })).status, 200, 'token revoked');
  principals.push({ name: 'revoked service token', headers: { authorization: `Bearer ${revoked.token}` }, live: false, grants: [] });
  await createPerson(admin, 'matrix-expired', 'matrix expired password', 'administrator');
  const expiredCookie = await login(url, 'matrix-expired', 'matrix expired password');
  t.equal((await request(`${url}/v1/auth/whoami`, { headers: { cookie: expiredCookie } })).status, 200, 'the session works before it expires');
  // No session TTL short enough for a test: the expiry is written where the service keeps it.
  await svc.service.context.db.query(`UPDATE auth_session SET expires_ns = $1 WHERE principal_id = (SELECT principal_id FROM auth_principal WHERE subject = 'matrix-expired')`, [String(BigInt(Date.now() - 1000) * 1_000_000n)]);
  principals.push({ name: 'expired session', headers: { cookie: expiredCookie }, live: false, grants: [] });
  await createPerson(admin, 'matrix-out', 'matrix logged out password', 'administrator');
  const outCookie = await login(url, 'matrix-out', 'matrix logged out password');
  t.equal((await request(`${url}/v1/auth/logout`, { method: 'POST', headers: { cookie: outCookie } })).status, 204, 'logged out');
  principals.push({ name: 'logged-out session', headers: { cookie: outCookie }, live: false, grants: [] });

  const assetsInScope = new Map<string, Set<string>>([[siteA, new Set([siteA, areaA1])], [viewV, new Set([siteB])]]);
  const targets = { asset: { inA: areaA1, outA: siteB }, view: { granted: viewV, other: viewW }, assetsInScope };

  // Logging out ends the caller's own session: that row goes last.
  const ordered = [...routes].sort((a, b) => Number(a.operationId === 'logout') - Number(b.operationId === 'logout'));
  let rows = 0;
  const mismatches: string[] = [];
  const contractDrift: string[] = [];
  const byOutcome: Record<string, number> = {};
  const byArea: Record<string, { rows: number; mismatches: number }> = {};
  for (const route of ordered) {
    const label = `${METHOD[route.method]} ${route.path}`;
    const op = contract.paths[route.path]?.[route.method];
    if (!op) { t.fail(`${label} is not in the contract`); continue; }
    if (op['x-capability'] !== contractCapability(route.access)) contractDrift.push(`${label}: contract says ${op['x-capability']}, the route enforces ${contractCapability(route.access)}`);
    const access: ContractAccess = { access: op['x-access'], capability: op['x-capability'], scope: op['x-scope'], scopeParam: route.access.kind === 'capability' ? route.access.scopeParam : undefined };
    for (const p of principals) {
      if (p.onlyCapability && p.onlyCapability !== op['x-capability']) continue;
      for (const target of targetsFor(access, p, targets)) {
        const expected = expectedOutcome(access, p, target, targets);
        if (expected.kind === 'not-understood') {
          t.fail(`${label}: x-access ${access.access} / x-scope ${access.scope} is not understood by the authorization matrix; give it expected outcomes in reliability/authorization/expected.ts`);
          continue;
        }
        const path = concretePath(route, target.pathValue);
        const status = await statusOf(`${url}${path}`, METHOD[route.method], route.body ? {} : undefined, p.headers);
        rows++;
        byOutcome[expected.text] = (byOutcome[expected.text] ?? 0) + 1;
        const area = (byArea[route.area] ??= { rows: 0, mismatches: 0 });
        area.rows++;
        if (!outcomeHolds(expected, status)) area.mismatches++;
        if (!outcomeHolds(expected, status)) mismatches.push(`${label} as ${p.name}${target.label ? ` (${target.label})` : ''}: expected ${expected.text}, got ${status}`);
      }
    }
  }
  t.comment(`matrix rows checked: ${rows}, mismatches: ${mismatches.length}, principals: ${principals.length}, operations: ${routes.length}`);
  t.comment(`expected outcomes: ${Object.entries(byOutcome).map(([k, v]) => `${k}: ${v}`).join(', ')}`);
  t.comment(`by area: ${Object.entries(byArea).map(([k, v]) => `${k} ${v.rows}${v.mismatches ? ` (${v.mismatches} mismatches)` : ''}`).join(', ')}`);
  t.same(contractDrift, [], 'every operation\'s x-capability in the contract is the capability the route enforces');
  t.same(mismatches, [], `every row of the matrix holds (${rows} rows)`);
});

/** The calls a principal makes to one operation: path-scoped ones once inside and once outside its scope. */
function targetsFor(access: ContractAccess, p: MatrixPrincipal, targets: { asset: { inA: string; outA: string }; view: { granted: string; other: string } }) {
  if (access.access === 'capability' && access.scope === 'path-asset' && p.live) {
    return [{ label: 'asset A1', pathValue: targets.asset.inA }, { label: 'asset B', pathValue: targets.asset.outA }];
  }
  if (access.access === 'capability' && access.scope === 'path-view' && p.live) {
    return [{ label: 'view V', pathValue: targets.view.granted }, { label: 'view W', pathValue: targets.view.other }];
  }
  return [{ label: '', pathValue: undefined }];
}
