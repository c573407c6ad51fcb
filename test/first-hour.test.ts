// The README's "The first hour", step by step, against a real server in enforced mode and
// the simulator as its own process (as `npm run collector` runs it): log in with the
// generated password and replace it, give the simulator an identity, register its enum set
// from its own --enum-sets output, stream history and live points, build a pump from a
// template, bind its attributes by attribute path, and read a trend of the last hour.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startTestService, request } from './helpers/service.js';
import { cookieClient, sessionCookieOf } from './helpers/auth.js';
import { grpcAddress } from './helpers/ingest.js';

const ROOT = resolve(import.meta.dirname, '..');
const SECOND = 1_000_000_000n;

// A real server, several password hashes and two simulator processes: about 15 s on a quiet
// 2-core box, far more when it is shared.
t.setTimeout(300_000);

/** Runs the simulator's command line (what `npm run collector -- ...` runs). */
function collector(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/collector/simulator-cli.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '', stderr = '';
    child.stdout.on('data', (b: Buffer) => { stdout += b.toString(); });
    child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
    child.on('error', fail);
    child.on('exit', (status) => done({ status, stdout, stderr }));
  });
}

t.test('the first hour: from the generated admin password to a trend of the simulated pump', async (t) => {
  const T0 = Date.now();
  let firstStartMessage = '';
  const svc = await startTestService(t, { env: { SERVICE_AUTH_MODE: 'enforced' }, printBootstrapSecret: (line) => { firstStartMessage += line; } });
  const { url } = svc;

  // 2. Log in with the password the first start wrote, and replace it.
  t.comment(`step 2 at ${((Date.now() - T0) / 1000).toFixed(1)} s`);
  const generated = readFileSync(join(svc.dataDir, 'initial-admin-password'), 'utf8').trim();
  const login = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: generated } });
  t.equal(login.status, 204, 'the generated password logs in');
  const cookie = sessionCookieOf(login);
  const admin = cookieClient(url, cookie);
  const me = ((await admin('/v1/auth/whoami')).json as { principal: { principal_id: string } }).principal.principal_id;
  t.match(firstStartMessage, `POST /v1/auth/principals/${me}/password`, 'the first-start message says how to change the password');
  const changed = await admin(`/v1/auth/principals/${me}/password`, { method: 'POST', body: { current_password: generated, new_password: 'my own admin password' } });
  t.equal(changed.status, 204, changed.text);
  t.equal((await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: generated } })).status, 401, 'the generated password is retired');

  // 3. A collector identity, its token, and the enum set the simulator prints.
  t.comment(`step 3 at ${((Date.now() - T0) / 1000).toFixed(1)} s`);
  const identity = await admin('/v1/auth/service-identities', { method: 'POST', body: { kind: 'collector', name: 'sim-1' } });
  t.equal(identity.status, 201);
  const minted = await admin(`/v1/auth/service-identities/${(identity.json as { identity_id: string }).identity_id}/tokens`, { method: 'POST', body: { comment: 'simulator' } });
  const token = (minted.json as { token: string }).token;
  const sets = await collector(['--enum-sets']);
  t.equal(sets.status, 0, sets.stderr);
  const registered = await request(`${url}/v1/model/registries/enum-sets/entries`, { method: 'POST', rawBody: sets.stdout, headers: { cookie, 'content-type': 'application/json' } });
  t.equal(registered.status, 201, registered.text);
  const contract = (await request(`${url}/v1/openapi.json`)).json as { components: { schemas: Record<string, unknown> } };
  t.ok(contract.components.schemas.EnumSetMember, 'the contract shows the members shape');

  // 4. Stream: ten minutes of history, then live for a few seconds. No --state-dir: it
  t.comment(`step 4 at ${((Date.now() - T0) / 1000).toFixed(1)} s`);
  // keeps its state beside the service's data.
  const started = BigInt(Date.now()) * 1_000_000n;
  const run = await collector(['--address', grpcAddress(svc), '--token', token, '--series', '8', '--history', '10m', '--duration', '3s'], { SERVICE_DATA_DIR: svc.dataDir });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stderr, /done: \d+ points acknowledged/);
  t.notMatch(run.stderr, /refused:/, 'no stream was refused, the enum one included');
  t.ok(existsSync(join(svc.dataDir, 'collector-state', 'sim-1', 'epoch')), 'its state is under the data directory');
  t.notOk(existsSync(join(ROOT, 'collector-state')), 'nothing in the repository');
  const listed = (await admin('/v1/series?name_prefix=sim-1/plant/area-1/pump-101/')).json as { items: Array<{ series_id: string; source_name: string }> };
  t.equal(listed.items.length, 7, 'the pump\'s seven signals are series');

  // 5. A pump template with three attributes, and /Plant/Area-1/Pump-101 made from it.
  t.comment(`step 5 at ${((Date.now() - T0) / 1000).toFixed(1)} s`);
  const units = ((await admin('/v1/model/registries/units?limit=1000')).json as { items: Array<{ id: string; symbol: string; kind_id: string }> }).items;
  const unit = (symbol: string) => units.find((u) => u.symbol === symbol) as { id: string; kind_id: string };
  const states = ((await admin('/v1/model/registries/enum-sets')).json as { items: Array<{ id: string; name: string }> }).items.find((s) => s.name === 'equipment-state');
  const attr = (name: string, u: { id: string; kind_id: string } | null, continuity: string, enumSet: string | null) => ({
    name, quantity_kind_id: u?.kind_id ?? null, default_unit_id: u?.id ?? null, continuity_class: continuity, writer_class: 'collector',
    enum_set_id: enumSet, limit_traits: {}, lifecycle_policy: null, entry_cadence: null, overridable: [],
  });
  const template = await admin('/v1/model/templates', { method: 'POST', body: { name: 'Centrifugal pump', attributes: [
    attr('Flow', unit('m³/h'), 'continuous', null), attr('Discharge pressure', unit('bar'), 'continuous', null), attr('State', null, 'stepped', states?.id ?? null),
  ] } });
  t.equal(template.status, 201, template.status === 201 ? 'a template with three attributes' : template.text);
  const asset = async (body: Record<string, unknown>) => {
    const r = await admin('/v1/model/assets', { method: 'POST', body });
    t.equal(r.status, 200, r.status === 200 ? `asset ${String(body.name)}` : r.text);
    return (r.json as { asset_id: string }).asset_id;
  };
  const plant = await asset({ name: 'Plant', timezone: 'Europe/Berlin' });
  const area = await asset({ name: 'Area-1', parent: plant });
  await asset({ name: 'Pump-101', parent: area, template_id: (template.json as { template_id: string }).template_id });

  // 6. Bind each attribute, found by its path, to the simulator's series, from a day ago.
  t.comment(`step 6 at ${((Date.now() - T0) / 1000).toFixed(1)} s`);
  const since = started / SECOND * SECOND - 86_400n * SECOND;
  for (const [name, signal] of [['Flow', 'flow'], ['Discharge pressure', 'discharge-pressure'], ['State', 'state']]) {
    const found = await admin(`/v1/model/resolve-path?path=${encodeURIComponent(`/Plant/Area-1/Pump-101|${name}`)}`);
    t.equal(found.status, 200, `${name} resolves by its path`);
    const series = listed.items.find((s) => s.source_name === `sim-1/plant/area-1/pump-101/${signal}`);
    const bound = await admin('/v1/model/bindings', { method: 'POST', body: { attribute_id: (found.json as { attribute_id: string }).attribute_id, series_id: series?.series_id, from_ns: since } });
    t.equal(bound.status, 201, `${name} binds: ${bound.text}`);
  }

  // 7. The flow over the last hour, 600 pixels wide: the history and the live points.
  t.comment(`step 7 at ${((Date.now() - T0) / 1000).toFixed(1)} s`);
  const now = BigInt(Date.now()) * 1_000_000n;
  const trend = await admin('/v1/read/render', { method: 'POST', body: {
    resolve: { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { under: { kind: 'path', content: '/Plant/Area-1/Pump-101' } } },
    start_ns: now - 3600n * SECOND, end_ns: now + SECOND, width: 600,
  } });
  t.equal(trend.status, 200, trend.text);
  const [flow] = trend.json as Array<{ path: string; render: { t_ms: number[]; v: number[] } }>;
  t.equal(flow.path, '/Plant/Area-1/Pump-101|Flow');
  t.ok(flow.render.t_ms.length > 100, `a trend to draw (${flow.render.t_ms.length} points)`);
  const first = flow.render.t_ms[0], last = flow.render.t_ms[flow.render.t_ms.length - 1];
  const startedMs = Number(started / 1_000_000n);
  t.ok(first < startedMs - 9 * 60_000, 'it starts in the history, ten minutes back');
  t.ok(last >= startedMs, 'and reaches the live points');
});
