// Episodes over real HTTP with enforced auth, one server for the file: template versions,
// role and cardinality rules, the overlap rule, captures at close over points a real
// collector wrote (gRPC), void, the version check, genealogy links and a traverse around a
// cycle, the query (subtree, overlap, attribute predicates, paging), the episode overlay of
// batches of different lengths with life over life, and who may see and change what.
import t from 'tap';
import { startAuthService, createPerson, grantRole, login, type Client } from '../helpers/auth.js';
import { connect, floatBatch, until } from '../helpers/ingest.js';
import { nowNs } from '../../src/clock.js';
import { modelTransaction } from '../../src/model/tx-log.js';
import { createServiceIdentity } from '../../src/auth/principals.js';
import { mintToken } from '../../src/auth/service-tokens.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';
import { request } from '../helpers/service.js';
import { stringifyJson } from '../../src/json/json.js';
import { unpack } from 'msgpackr';
import { sessionCookieOf, ADMIN_PASSWORD } from '../helpers/auth.js';
import { overlayColumnsAgreeWithReadAt } from './overlay-sampling.js';

const T0 = 1_700_000_000_000_000_000n;
const SEC = 1_000_000_000n;
const at = (s: number) => T0 + BigInt(s) * SEC;
const CELSIUS = systemEntryId('units', 'degree Celsius');
const TEMPERATURE = systemEntryId('quantity-kinds', 'Temperature');

type Json = Record<string, unknown>;
interface Episode { id: string; name: string; state: string; version: number | bigint; template_version: number | bigint; start_ns: bigint | number; end_ns: bigint | number | null; attributes: Record<string, { value: unknown; source: string; no_value?: string }>; void_reason: string | null; tx_id: bigint | number }

const num = (x: unknown) => Number(x);

t.setTimeout(120_000);

t.test('episodes', async (t) => {
  const svc = await startAuthService(t);
  const admin = svc.admin;
  const adminCookie = sessionCookieOf(await request(`${svc.url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } }));
  const call = (path: string, method = 'GET', body?: unknown, client: Client = admin) => client(path, { method, body });
  const ok = async <T = Json>(path: string, method: string, body: unknown, status: number, client: Client = admin): Promise<T> => {
    const r = await call(path, method, body, client);
    if (r.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${r.status}: ${r.text}`);
    return r.json as T;
  };

  // ---- the plant: registry entries, a reactor template, assets, a collector feeding two reactors
  for (const role of ['reactor', 'feed-tank', 'operator-desk']) await ok(`/v1/model/registries/episode-roles/entries`, 'POST', { name: role }, 201);
  await ok(`/v1/model/registries/link-types/entries`, 'POST', { name: 'consumed-by' }, 201);
  await ok(`/v1/model/registries/link-types/entries`, 'POST', { name: 'produced-from' }, 201);
  const modelTpl = await ok<{ template_id: string }>('/v1/model/templates', 'POST', {
    name: 'Reactor', attributes: [{ name: 'Temperature', quantity_kind_id: TEMPERATURE, default_unit_id: CELSIUS, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] }],
  }, 201);
  const asset = async (name: string, parent?: string, template?: string) =>
    (await ok<{ asset_id: string }>('/v1/model/assets', 'POST', { name, parent: parent ?? null, ...(template ? { template_id: template } : {}) }, 200)).asset_id;
  const plant = await asset('Plant');
  const line1 = await asset('Line1', plant);
  const line2 = await asset('Line2', plant);
  const r1 = await asset('R1', line1, modelTpl.template_id);
  const r2 = await asset('R2', line1, modelTpl.template_id);
  const r3 = await asset('R3', line2, modelTpl.template_id);
  const tank = await asset('Tank', line1);
  const line3 = await asset('Line3', plant);
  const r4 = await asset('R4', line3, modelTpl.template_id);
  const r5 = await asset('R5', line3, modelTpl.template_id);
  const attrs = (await ok<{ results: Array<{ attribute_id: string; asset_id: string }> }>('/v1/model/resolve', 'POST', { select: { kind: 'attributes_named', content: { name: 'Temperature' } }, scope: {} }, 200)).results;
  const attrOf = (a: string) => attrs.find((x) => x.asset_id === a)!.attribute_id;

  const token = (await modelTransaction(svc.service.context.db, { principal: 'test' }, async (q, txId, events) => {
    const p = await createServiceIdentity(q, txId, events, { name: 'line-1', kind: 'collector' });
    return (await mintToken(q, txId, events, { principalId: p.principal_id, comment: 'test', expiresNs: null })).plaintext;
  })).result;
  const collector = await connect(svc, { collectorId: 'line-1', token, streams: [{ name: 'r1-temp', type: 'float64' }, { name: 'r2-temp', type: 'float64' }, { name: 'r4-temp', type: 'float64' }, { name: 'r5-temp', type: 'float64' }] });
  t.teardown(() => collector.close());
  for (const [k, a] of [[0, r1], [1, r2], [2, r4], [3, r5]] as const) {
    await ok('/v1/model/bindings', 'POST', { attribute_id: attrOf(a), series_id: collector.welcome.streams[k].series_id, from_ns: at(-1000) }, 201);
  }
  // the model before any episode: include_episodes as of then attaches none
  const beforeEpisodesNs = BigInt(Date.now()) * 1_000_000n;
  await new Promise((r) => setTimeout(r, 5));
  // R1 reads its own age in seconds (0..599); R2 reads 1000 + seconds
  t.ok((await collector.send('LIVE', 0, 'float64', floatBatch(at(0), 600, SEC, 0))).ok, 'R1 points written');
  t.ok((await collector.send('LIVE', 1, 'float64', floatBatch(at(0), 600, SEC, 1000))).ok, 'R2 points written');

  const batchBody = (extra: Json = {}) => ({
    name: 'Batch', family: 'batch', overlap: 'forbidden-per-asset', retro_edit_approval: 'none',
    roles: [{ role: 'reactor', cardinality: 'one', required: true }, { role: 'feed-tank', cardinality: 'many', required: false }],
    attributes: [
      { name: 'T open', class: 'number', capture: 'at-open(reactor|Temperature)', unit: null, quantity_kind: null, enum_set: null },
      { name: 'T close', class: 'number', capture: 'at-close(reactor|Temperature)', unit: null, quantity_kind: null, enum_set: null },
      { name: 'T min', class: 'number', capture: 'min(reactor|Temperature)', unit: null, quantity_kind: null, enum_set: null },
      { name: 'T max', class: 'number', capture: 'max(reactor|Temperature)', unit: null, quantity_kind: null, enum_set: null },
      { name: 'T avg', class: 'number', capture: 'avg(reactor|Temperature)', unit: null, quantity_kind: null, enum_set: null },
      { name: 'T twa', class: 'number', capture: 'twa(reactor|Temperature)', unit: 'degree Celsius', quantity_kind: 'Temperature', enum_set: null },
      { name: 'Lot', class: 'string', capture: null, unit: null, quantity_kind: null, enum_set: null },
    ],
    naming_pattern: '{template} {asset:reactor} {start}',
    permitted_children: ['Phase'],
    ...extra,
  });
  const batch = await ok<{ id: string; version: number }>('/v1/episodes/templates', 'POST', batchBody(), 201);
  const phase = await ok<{ id: string }>('/v1/episodes/templates', 'POST', { name: 'Phase', family: 'batch', overlap: 'allowed', retro_edit_approval: 'none', roles: [{ role: 'reactor', cardinality: 'one', required: false }] }, 201);
  const create = (body: Json, status = 201, client: Client = admin) => ok<Episode>('/v1/episodes', 'POST', body, status, client);
  const inR1 = [{ role: 'reactor', asset_id: r1 }];

  t.test('template versions: PUT writes the next version and episodes keep theirs', async (t) => {
    t.equal(num(batch.version), 1);
    const first = await create({ template_id: batch.id, assets: [{ role: 'reactor', asset_id: r2 }], start_ns: at(5000), end_ns: at(5001) });
    t.equal(num(first.template_version), 1);
    t.equal(first.name, 'Batch R2 2023-11-14T23:36:40Z', 'named by the naming pattern');
    const v2 = await ok<{ id: string; version: number }>(`/v1/episodes/templates/${batch.id}`, 'PUT', batchBody({ naming_pattern: 'B-{asset:reactor}' }), 200);
    t.same([v2.id, num(v2.version)], [batch.id, 2]);
    const second = await create({ template_id: batch.id, assets: [{ role: 'reactor', asset_id: r2 }], start_ns: at(6000), end_ns: at(6001) });
    t.equal(num(second.template_version), 2);
    t.equal(second.name, 'B-R2');
    t.equal(num((await ok<Episode>(`/v1/episodes/${first.id}`, 'GET', undefined, 200)).template_version), 1, 'the first episode still names version 1');
    const old = await ok<{ naming_pattern: string; version: number }>(`/v1/episodes/templates/${batch.id}?version=1`, 'GET', undefined, 200);
    t.same([old.naming_pattern, num(old.version)], ['{template} {asset:reactor} {start}', 1]);
    const list = await ok<{ templates: Array<{ name: string; version: number }> }>('/v1/episodes/templates?family=batch', 'GET', undefined, 200);
    t.same(list.templates.map((x) => [x.name, num(x.version)]), [['Batch', 2], ['Phase', 1]]);
    await ok(`/v1/episodes/${first.id}/void`, 'POST', { reason: 'test setup' }, 200);
    await ok(`/v1/episodes/${second.id}/void`, 'POST', { reason: 'test setup' }, 200);
  });

  t.test('bad templates are refused naming the field', async (t) => {
    const bad = async (body: Json, field: string) => {
      const r = await call('/v1/episodes/templates', 'POST', body);
      t.equal(r.status, 400, `${field}: ${r.text}`);
      t.match((r.json as { details: { errors: Array<{ field: string }> } }).details.errors[0].field, field);
    };
    await bad(batchBody({ name: 'X1', retro_edit_approval: 'supervisor' }), 'retro_edit_approval');
    await bad(batchBody({ name: 'X2', overlap: 'sometimes' }), 'overlap');
    await bad(batchBody({ name: 'X3', roles: [{ role: 'no-such-role', cardinality: 'one', required: true }] }), 'roles/0/role');
    await bad(batchBody({ name: 'X4', attributes: [{ name: 'A', class: 'number', capture: 'median(reactor|Temperature)', unit: null, quantity_kind: null, enum_set: null }] }), 'attributes/0/capture');
    await bad(batchBody({ name: 'X5', attributes: [{ name: 'A', class: 'number', capture: 'twa(feed-tank|Level)', unit: null, quantity_kind: null, enum_set: null }] }), 'attributes/0/capture');
    await bad(batchBody({ name: 'X6', attributes: [{ name: 'A', class: 'number', capture: null, unit: 'furlongs', quantity_kind: null, enum_set: null }] }), 'attributes/0/unit');
    await bad(batchBody({ name: 'X7', naming_pattern: '{serial}' }), 'naming_pattern');
    const dup = await call('/v1/episodes/templates', 'POST', batchBody());
    t.equal(dup.status, 409, 'a second template named Batch');
    t.equal((await call(`/v1/episodes/templates/${crypto.randomUUID()}`, 'PUT', batchBody({ name: 'X8' }))).status, 404);
  });

  t.test('role rules: unknown role, cardinality and required roles are refused naming the rule', async (t) => {
    const rule = async (body: Json, name: string) => {
      const r = await call('/v1/episodes', 'POST', body);
      t.equal(r.status, 400, r.text);
      t.equal((r.json as { code: string; details: { rule: string } }).details.rule, name);
      t.equal((r.json as { code: string }).code, 'episode-rule');
    };
    await rule({ template_id: batch.id, assets: [...inR1, { role: 'operator-desk', asset_id: tank }], start_ns: at(7000) }, 'role-unknown');
    await rule({ template_id: batch.id, assets: [...inR1, { role: 'reactor', asset_id: r2 }], start_ns: at(7000) }, 'role-cardinality');
    await rule({ template_id: batch.id, assets: [{ role: 'feed-tank', asset_id: tank }], start_ns: at(7000) }, 'role-required');
    await rule({ template_id: batch.id, assets: inR1, start_ns: at(7000), attributes: { Colour: 'red' } }, 'attribute-unknown');
    const wrong = await call('/v1/episodes', 'POST', { template_id: batch.id, assets: inR1, start_ns: at(7000), attributes: { Lot: 12 } });
    t.equal(wrong.status, 400, 'an entered value of the wrong class');
  });

  let closedA: Episode;
  t.test('captures at close are computed from the collector\'s points and stored', async (t) => {
    const open = await create({ template_id: batch.id, assets: [...inR1, { role: 'feed-tank', asset_id: tank }], start_ns: at(100), attributes: { Lot: 'L-7', 'T max': -1 } });
    t.equal(open.state, 'open');
    t.same(open.attributes.Lot, { value: 'L-7', source: 'entered' });
    const closed = await ok<Episode>(`/v1/episodes/${open.id}/close`, 'POST', { end_ns: at(200), expected_version: 1 }, 200);
    t.equal(closed.state, 'closed');
    t.equal(num(closed.version), 2);
    const v = (n: string) => closed.attributes[n];
    t.same(v('T open'), { value: 100, source: 'captured' }, 'the value at the start');
    t.same(v('T close'), { value: 200, source: 'captured' }, 'the value at the end');
    t.same(v('T min'), { value: 100, source: 'captured' });
    t.same(v('T max'), { value: -1, source: 'entered' }, 'an entered value survives the capture');
    t.same(v('T avg'), { value: 149.5, source: 'captured' }, 'the mean of the 100 points in [100 s, 200 s)');
    t.equal(v('T twa').source, 'captured');
    t.ok(Math.abs(num(v('T twa').value) - 150) < 1e-9, `time-weighted average 150 (${String(v('T twa').value)})`);
    const again = await call(`/v1/episodes/${open.id}/close`, 'POST', { end_ns: at(300) });
    t.equal(again.status, 409, 'a closed episode does not close again');
    t.equal((again.json as { code: string }).code, 'episode-state');
    // data-less window: the capture says why
    const empty = await create({ template_id: batch.id, assets: [{ role: 'reactor', asset_id: r3 }], start_ns: at(100), end_ns: at(200) });
    t.equal(empty.attributes['T twa'].value, null);
    t.ok(empty.attributes['T twa'].no_value, `no_value says why: ${empty.attributes['T twa'].no_value}`);
    closedA = closed;
  });

  t.test('the overlap rule and the version check', async (t) => {
    const r = await call('/v1/episodes', 'POST', { template_id: batch.id, assets: inR1, start_ns: at(150), end_ns: at(250) });
    t.equal(r.status, 409, r.text);
    t.match(r.json, { code: 'episode-overlap', details: { rule: 'forbidden-per-asset', episode_id: closedA.id } });
    const openOverlap = await call('/v1/episodes', 'POST', { template_id: batch.id, assets: inR1, start_ns: at(50) });
    t.equal(openOverlap.status, 409, 'an open episode from before overlaps too');
    const next = await create({ template_id: batch.id, assets: inR1, start_ns: at(200), end_ns: at(500) });
    t.equal(next.state, 'closed', 'touching at the end is not overlapping');
    const stale = await call(`/v1/episodes/${closedA.id}`, 'PUT', { expected_version: 1, name: 'renamed' });
    t.equal(stale.status, 409, 'a stale edit');
    t.match(stale.json, { code: 'conflict', details: { current_version: 2 } });
    const grow = await call(`/v1/episodes/${closedA.id}`, 'PUT', { expected_version: 2, end_ns: at(250) });
    t.equal(grow.status, 409, 'an edit into the next batch breaks the overlap rule');
    const renamed = await ok<Episode>(`/v1/episodes/${closedA.id}`, 'PUT', { expected_version: 2, name: 'Batch A', attributes: { Lot: 'L-8' } }, 200);
    t.same([renamed.name, num(renamed.version), renamed.attributes.Lot.value, renamed.attributes['T open'].value], ['Batch A', 3, 'L-8', 100]);
    const perRole = await ok<{ id: string }>('/v1/episodes/templates', 'POST', {
      name: 'Transfer', family: 'transfer', overlap: 'forbidden-per-role', retro_edit_approval: 'none',
      roles: [{ role: 'reactor', cardinality: 'one', required: false }, { role: 'feed-tank', cardinality: 'one', required: false }],
    }, 201);
    await create({ template_id: perRole.id, assets: [{ role: 'reactor', asset_id: tank }], start_ns: at(0), end_ns: at(100) });
    await create({ template_id: perRole.id, assets: [{ role: 'feed-tank', asset_id: tank }], start_ns: at(0), end_ns: at(100) });
    t.equal((await call('/v1/episodes', 'POST', { template_id: perRole.id, assets: [{ role: 'feed-tank', asset_id: tank }], start_ns: at(50) })).status, 409, 'forbidden-per-role: same asset, same role');
  });

  t.test('permitted children', async (t) => {
    const child = await create({ template_id: phase.id, assets: inR1, start_ns: at(120), end_ns: at(150), parent_id: closedA.id });
    t.equal(child.name.startsWith('Phase '), true);
    const other = await ok<{ id: string }>('/v1/episodes/templates', 'POST', { name: 'Cleaning', family: 'maintenance', overlap: 'allowed', retro_edit_approval: 'none' }, 201);
    const r = await call('/v1/episodes', 'POST', { template_id: other.id, start_ns: at(120), parent_id: closedA.id });
    t.equal(r.status, 400);
    t.equal((r.json as { details: { rule: string } }).details.rule, 'permitted-children');
  });

  t.test('void: kept and auditable, out of queries unless asked, final', async (t) => {
    const e = await create({ template_id: batch.id, assets: [{ role: 'reactor', asset_id: r2 }], start_ns: at(1000), end_ns: at(1100) });
    const voided = await ok<Episode>(`/v1/episodes/${e.id}/void`, 'POST', { reason: 'wrong reactor' }, 200);
    t.same([voided.state, voided.void_reason], ['void', 'wrong reactor']);
    const asOf = await ok<Episode>(`/v1/episodes/${e.id}?as_of_ns=${await committedAt(e.tx_id)}`, 'GET', undefined, 200);
    t.equal(asOf.state, 'closed', 'as of its creation the episode was closed');
    t.equal((await call(`/v1/episodes/${e.id}`, 'PUT', { expected_version: 2, name: 'x' })).status, 409, 'a void episode is not edited');
    t.equal((await call(`/v1/episodes/${e.id}/void`, 'POST', { reason: 'again' })).status, 409);
    const q = (states?: string[]) => ok<{ items: Episode[] }>('/v1/episodes/query', 'POST', { template_ids: [batch.id], asset: { kind: 'asset_id', content: r2 }, overlaps: { start_ns: at(1000), end_ns: at(1100) }, ...(states ? { states } : {}) }, 200);
    t.same((await q()).items, [], 'left out by default');
    t.same((await q(['void'])).items.map((x) => x.id), [e.id], 'there when asked');
    const events = await ok<Array<{ events: Array<{ entity_kind: string; entity_id: string; action: string }> }>>('/v1/model/events?since_tx=0&limit=100000', 'GET', undefined, 200);
    const actions = events.flatMap((x) => x.events).filter((x) => x.entity_id === e.id).map((x) => x.action);
    t.same(actions, ['created', 'voided'], 'each change is a model transaction');
  });
  async function committedAt(txId: bigint | number): Promise<bigint> {
    const { rows } = await svc.service.context.db.query<{ committed_ns: bigint }>('SELECT committed_ns FROM model_tx WHERE tx_id = $1', [txId]);
    return rows[0].committed_ns;
  }

  t.test('links and a traverse around a cycle', async (t) => {
    const lot = (s: number) => create({ template_id: phase.id, start_ns: at(s), end_ns: at(s + 10) });
    const [a, b, c] = [await lot(10), await lot(20), await lot(30)];
    const link = (from: string, to: string, type = 'consumed-by') => call(`/v1/episodes/${from}/links`, 'POST', { to_episode: to, link_type: type });
    t.equal((await link(a.id, b.id)).status, 201);
    t.equal((await link(b.id, c.id)).status, 201);
    t.equal((await link(c.id, a.id)).status, 201, 'the cycle closes');
    t.equal((await link(a.id, b.id)).status, 409, 'the same link twice');
    const badType = await link(a.id, c.id, 'welded-to');
    t.equal(badType.status, 400);
    t.match(badType.json, { details: { errors: [{ field: 'link_type' }] } });
    const links = await ok<{ links: Array<{ from_episode: string; to_episode: string; link_type: string }> }>(`/v1/episodes/${a.id}/links`, 'GET', undefined, 200);
    t.same(links.links.map((l) => [l.from_episode, l.to_episode, l.link_type]).sort(), [[a.id, b.id, 'consumed-by'], [c.id, a.id, 'consumed-by']].sort());
    type Walk = { episodes: Array<{ depth: number; episode: { id: string } }>; links: unknown[]; truncated: boolean };
    const down = await ok<Walk>('/v1/episodes/traverse', 'POST', { start: [a.id], direction: 'downstream', depth: 10 }, 200);
    const depths = (w: Walk) => Object.fromEntries(w.episodes.map((x) => [x.episode.id, x.depth]));
    t.same(depths(down), { [a.id]: 0, [b.id]: 1, [c.id]: 2 }, 'each episode once, at its nearest depth');
    t.equal(down.links.length, 3, 'the link back to the start is reported, not followed again');
    t.equal(down.truncated, false);
    const up = await ok<Walk>('/v1/episodes/traverse', 'POST', { start: [a.id], direction: 'upstream', depth: 1 }, 200);
    t.same(depths(up), { [a.id]: 0, [c.id]: 1 });
    t.equal(up.truncated, true, 'depth 1 leaves links unexplored');
    const none = await ok<Walk>('/v1/episodes/traverse', 'POST', { start: [a.id], direction: 'downstream', link_types: ['produced-from'] }, 200);
    t.same(depths(none), { [a.id]: 0 });
  });

  t.test('query: subtree, overlap, attribute predicates and paging', async (t) => {
    type Page = { items: Episode[]; next_cursor: string | null };
    const q = (body: Json) => ok<Page>('/v1/episodes/query', 'POST', { template_ids: [batch.id], ...body }, 200);
    const line1Day = await q({ asset: { kind: 'under', content: line1 }, overlaps: { start_ns: at(0), end_ns: at(600) } });
    t.same(line1Day.items.map((e) => num(e.start_ns)), [num(at(100)), num(at(200))], 'both batches on R1, in start order');
    t.same((await q({ asset: { kind: 'under', content: line2 }, overlaps: { start_ns: at(0), end_ns: at(600) } })).items.length, 1, 'R3\'s batch under Line2');
    t.same((await q({ overlaps: { start_ns: at(190), end_ns: at(199) } })).items.map((e) => e.id).sort(), [closedA.id, (await q({ asset: { kind: 'asset_id', content: r3 } })).items[0].id].sort());
    t.same((await q({ attributes: [{ name: 'T twa', op: '>', value: 149 }, { name: 'Lot', op: '=', value: 'L-8' }] })).items.map((e) => e.id), [closedA.id]);
    t.same((await q({ attributes: [{ name: 'T twa', op: '<', value: 149 }] })).items, []);
    const first = await q({ asset: { kind: 'under', content: plant }, limit: 1 });
    t.equal(first.items.length, 1);
    t.ok(first.next_cursor);
    const second = await q({ asset: { kind: 'under', content: plant }, limit: 1, cursor: first.next_cursor });
    t.not(second.items[0].id, first.items[0].id, 'the next page goes on after the first');
    t.equal((await call('/v1/episodes/query', 'POST', { cursor: 'bm90LWEtY3Vyc29y' })).status, 400, 'a forged cursor');
    t.equal((await call('/v1/episodes/query', 'POST', { overlaps: { start_ns: at(10), end_ns: at(5) } })).status, 400, 'an empty range');
  });

  t.test('include_episodes on a resolved read attaches the episodes over each attribute\'s asset', async (t) => {
    type Item = { attribute_id: string; episodes?: Array<{ id: string; state: string; roles: string[] }> };
    const resolve = { select: { kind: 'attribute_ids', content: [attrOf(r1), attrOf(r3)] }, scope: {} };
    const raw = await ok<Item[]>('/v1/read/raw', 'POST', { resolve, start_ns: at(150), end_ns: at(250), include_episodes: { template_ids: [batch.id] } }, 200);
    const of = (a: string) => raw.find((x) => x.attribute_id === attrOf(a))!.episodes!;
    t.same(of(r1).map((e) => e.id).includes(closedA.id), true, 'R1\'s batch over [150 s, 250 s)');
    t.same(of(r1).find((e) => e.id === closedA.id)!.roles, ['reactor']);
    t.equal(of(r1).length, 2, 'both batches touch the window');
    t.equal(of(r3).length, 1, 'R3 has its own');
    const asOf = await ok<Item[]>('/v1/read/raw', 'POST', { resolve: { ...resolve, as_of_ns: beforeEpisodesNs }, start_ns: at(150), end_ns: at(250), include_episodes: true }, 200);
    t.same(asOf.map((x) => x.episodes), [[], []], 'as of a time before the episodes, none is attached');
    const plain = await ok<Item[]>('/v1/read/raw', 'POST', { resolve, start_ns: at(150), end_ns: at(250) }, 200);
    t.equal(plain[0].episodes, undefined, 'not asked, not attached');
    t.equal((await call('/v1/read/raw', 'POST', { resolve, start_ns: at(150), end_ns: at(250), include_episodes: { states: ['ended'] } })).status, 400);
  });

  t.test('overlay of batches of different lengths on the u grid, life over life', async (t) => {
    type Overlay = { episodes: Array<{ episode: { id: string; start_ns: bigint }; series: Array<{ attribute_id: string; points: Array<{ u: number; ts_ns: bigint | number; value?: number; interpolated?: boolean; no_value?: string }> }> }>; unresolved_lives?: Array<{ asset_id: string; reason: string }> };
    const resolve = { select: { kind: 'attributes_named', content: { name: 'Temperature' } }, scope: { under: { kind: 'path', content: '/Plant' } } };
    const o = await ok<Overlay>('/v1/read/episode-overlay', 'POST', {
      resolve, mode: 'u-grid', points: 11,
      episodes: { kind: 'lives', template_id: batch.id, asset_ids: [r1, r2], lives: 2, before_ns: at(1000) },
    }, 200);
    t.equal(o.episodes.length, 2, 'the two batches on R1 (R2 has none closed and unvoided before 1000 s)');
    const [short, long] = o.episodes;
    for (const e of o.episodes) {
      t.equal(e.series.length, 1, 'the reactor\'s Temperature only');
      t.equal(e.series[0].attribute_id, attrOf(r1));
      t.same(e.series[0].points.map((p) => p.u), Array.from({ length: 11 }, (_, i) => i / 10));
    }
    // the 100 s batch from 100 s and the 300 s batch from 200 s: the values are the seconds since T0
    t.same(short.series[0].points.map((p) => p.value), [100, 110, 120, 130, 140, 150, 160, 170, 180, 190, 200]);
    t.same(long.series[0].points.map((p) => p.value), [200, 230, 260, 290, 320, 350, 380, 410, 440, 470, 500]);
    t.same(short.series[0].points.map((p) => num(p.ts_ns)), Array.from({ length: 11 }, (_, i) => num(at(100 + 10 * i))));
    t.same(o.unresolved_lives?.map((u) => u.asset_id), [r2], 'R2 cannot fill its lives');
    const half = await ok<Overlay>('/v1/read/episode-overlay', 'POST', { resolve, mode: 'u-grid', points: 3, episodes: { kind: 'ids', ids: [closedA.id] } }, 200);
    t.same(half.episodes[0].series[0].points.map((p) => [p.u, p.value]), [[0, 100], [0.5, 150], [1, 200]]);
    t.equal(half.unresolved_lives, undefined, 'no lives asked, none unresolved');
    const gap = await create({ template_id: batch.id, assets: [{ role: 'reactor', asset_id: r2 }], start_ns: at(550), end_ns: at(650) });
    const tail = await ok<Overlay>('/v1/read/episode-overlay', 'POST', { resolve, mode: 'u-grid', points: 3, episodes: { kind: 'ids', ids: [gap.id] } }, 200);
    t.same(tail.episodes[0].series[0].points.map((p) => p.value), [1550, undefined, undefined]);
    t.ok(tail.episodes[0].series[0].points[2].no_value, 'after the last point: no value, with the reason');
    t.equal((await call('/v1/read/episode-overlay', 'POST', { resolve, mode: 'x-grid', points: 3, episodes: { kind: 'ids', ids: [gap.id] } })).status, 400);

    // the columns layout answers the same values as the rows, in JSON and in msgpack
    const body = { resolve, mode: 'u-grid', points: 11, episodes: { kind: 'ids', ids: [closedA.id, gap.id] } };
    const rows = await ok<Overlay>('/v1/read/episode-overlay', 'POST', body, 200);
    type Columns = { layout: string; u: unknown; episodes: Array<{ episode: { id: string }; ts_ns: unknown; series: Array<{ attribute_id: string; count: number; points: { value: unknown; quality: unknown; interpolated: unknown }; no_value: Array<{ from: number; to: number; reason: string }>; segments: Array<{ series: string; from: number; to: number }> }> }> };
    const json = await ok<Columns>('/v1/read/episode-overlay', 'POST', { ...body, layout: 'columns' }, 200);
    const res = await fetch(`${svc.url}/v1/read/episode-overlay`, { method: 'POST', headers: { cookie: adminCookie, 'content-type': 'application/json', accept: 'application/x-msgpack' }, body: stringifyJson({ ...body, layout: 'columns' }) });
    t.equal(res.headers.get('content-type'), 'application/x-msgpack');
    const mp = unpack(new Uint8Array(await res.arrayBuffer())) as Columns;
    const f64 = (b: unknown) => { const u = b as Uint8Array; return Array.from(new Float64Array(u.slice().buffer)); };
    const i64 = (b: unknown) => { const u = b as Uint8Array; return Array.from(new BigInt64Array(u.slice().buffer), Number); };
    t.same(json.u, rows.episodes[0].series[0].points.map((p) => p.u), 'u once, as in the rows');
    t.same(f64(mp.u), json.u);
    for (const [k, e] of rows.episodes.entries()) {
      const [sj, sm] = [json.episodes[k].series[0], mp.episodes[k].series[0]];
      t.equal(json.episodes[k].episode.id, e.episode.id);
      t.same((json.episodes[k].ts_ns as unknown[]).map(num), e.series[0].points.map((p) => num(p.ts_ns)), 'ts_ns once per episode');
      t.same(i64(mp.episodes[k].ts_ns), (json.episodes[k].ts_ns as unknown[]).map(num));
      const want = e.series[0].points.map((p) => p.value ?? null);
      t.same(sj.points.value, want, 'JSON values as the rows, null where no value');
      t.same(f64(sm.points.value).map((v, i) => (sm.no_value.some((r) => i >= r.from && i < r.to) ? null : v)), want, 'msgpack float64 values as the rows');
      t.same(Array.from(sm.points.interpolated as Uint8Array), (sj.points.interpolated as number[]), 'interpolation flags');
      t.same(Array.from(sm.points.quality as Uint8Array), (sj.points.quality as number[]), 'qualities (uint8 bin) as in JSON');
      t.same(sj.points.interpolated, e.series[0].points.map((p) => (p.interpolated ? 1 : 0)));
      const reasons = e.series[0].points.map((p) => p.no_value ?? null);
      const fromRuns = Array.from({ length: 11 }, (_, i) => sj.no_value.find((r) => i >= r.from && i < r.to)?.reason ?? null);
      t.same(fromRuns, reasons, 'no_value runs name the rows\' reasons');
      t.same(sm.no_value, sj.no_value);
      t.same(sj.segments, [{ series: sj.segments[0].series, from: 0, to: 11 }], 'one binding covers the batch: its series named once');
    }
  });

  t.test('triggers: an episode opened by live data, and one by a late point in the past', async (t) => {
    const bad = await call('/v1/episodes/templates', 'POST', { name: 'Bad trigger', family: 'excursion', overlap: 'allowed', retro_edit_approval: 'none', roles: [{ role: 'reactor', cardinality: 'one', required: true }], trigger: { open_when: 'Pressure > 2', min_duration_ms: 0 } });
    t.equal(bad.status, 400, 'a trigger reading an attribute no asset has');
    t.match(bad.json, { details: { errors: [{ field: 'trigger/open_when' }] } });
    const notBool = await call('/v1/episodes/templates', 'POST', { name: 'Bad trigger', family: 'excursion', overlap: 'allowed', retro_edit_approval: 'none', roles: [{ role: 'reactor', cardinality: 'one', required: true }], trigger: { open_when: 'Temperature + 1', min_duration_ms: 0 } });
    t.equal(notBool.status, 400, 'a trigger that is not a condition');
    const ex = await ok<{ id: string }>('/v1/episodes/templates', 'POST', {
      name: 'Excursion', family: 'excursion', overlap: 'forbidden-per-asset', retro_edit_approval: 'none',
      roles: [{ role: 'reactor', cardinality: 'one', required: true }],
      trigger: { open_when: 'Temperature > 50', min_duration_ms: 1000 },
    }, 201);
    await until(() => svc.service.context.parts.episodes.triggers.targetCount >= 4);
    const onAsset = async (a: string) => (await ok<{ items: Array<Episode & { origin: string }> }>('/v1/episodes/query', 'POST', { template_ids: [ex.id], asset: { kind: 'asset_id', content: a } }, 200)).items;
    const send = (k: number, ts: bigint, value: number) => collector.send('LIVE', k, 'float64', { times: BigInt64Array.of(ts), values: Float64Array.of(value), quality: null });

    // live: 20 °C, then 60 °C now; the episode opens once it held for a second, starting when it began
    const t1 = nowNs();
    await send(2, t1 - 5_000_000_000n, 20);
    await send(2, t1, 60);
    t.same(await onAsset(r4), [], 'not yet: the condition has not held for a second');
    await until(async () => (await onAsset(r4)).length === 1, 5_000);
    const [live] = await onAsset(r4);
    t.same([live.state, live.origin, num(live.start_ns)], ['open', 'trigger', num(t1)]);
    const t2 = nowNs();
    await send(2, t2, 30);
    await until(async () => (await onAsset(r4))[0]?.state === 'closed', 5_000);
    t.equal(num((await onAsset(r4))[0].end_ns), num(t2), 'closed when the condition stopped holding');

    // late: ten minutes of 20 °C, then a point from five minutes ago at 90 °C that held until the next point 5 s later
    const base = nowNs() - 600_000_000_000n;
    await collector.send('LIVE', 3, 'float64', { times: floatBatch(base, 60, 10_000_000_000n).times, values: new Float64Array(60).fill(20), quality: null });
    await new Promise((r) => setTimeout(r, 300));
    t.same(await onAsset(r5), [], 'nothing above 50 yet');
    await collector.send('BACKFILL', 3, 'float64', { times: BigInt64Array.of(base + 305_000_000_000n), values: Float64Array.of(90), quality: null });
    await until(async () => (await onAsset(r5)).length === 1, 5_000);
    const [late] = await onAsset(r5);
    t.same([late.state, num(late.start_ns), num(late.end_ns)], ['closed', num(base + 305_000_000_000n), num(base + 310_000_000_000n)], 'opened and closed in the past');

    // a person's edit survives re-evaluation: renaming the late episode, then another late point in the same run
    const edited = await ok<Episode>(`/v1/episodes/${late.id}`, 'PUT', { expected_version: 1, name: 'checked by QA' }, 200);
    await collector.send('BACKFILL', 3, 'float64', { times: BigInt64Array.of(base + 307_000_000_000n), values: Float64Array.of(95), quality: null });
    await new Promise((r) => setTimeout(r, 500));
    const after = await onAsset(r5);
    t.same(after.map((e) => [e.id, e.name, num(e.version)]), [[edited.id, 'checked by QA', 2]], 'no second episode, the edit kept');

    // a trigger saved over existing data backfills: R5's spike of five minutes ago opens (and closes) a past episode
    const spike = await ok<{ id: string }>('/v1/episodes/templates', 'POST', {
      name: 'Spike', family: 'excursion', overlap: 'forbidden-per-asset', retro_edit_approval: 'none',
      roles: [{ role: 'reactor', cardinality: 'one', required: true }], trigger: { open_when: 'Temperature > 80', min_duration_ms: 1000 },
    }, 201);
    const spikes = async () => (await ok<{ items: Array<Episode & { origin: string; assets: Array<{ asset_id: string }> }> }>('/v1/episodes/query', 'POST', { template_ids: [spike.id] }, 200)).items;
    await until(async () => (await spikes()).length >= 1, 5_000);
    await new Promise((r) => setTimeout(r, 300));
    t.same((await spikes()).map((e) => [e.assets[0].asset_id, e.state, e.origin, num(e.start_ns), num(e.end_ns)]),
      [[r5, 'closed', 'trigger', num(base + 305_000_000_000n), num(base + 310_000_000_000n)]], 'the past run over 80 on R5, and nothing else');
  });

  t.test('authorization: episodes follow their assets', async (t) => {
    await ok('/v1/auth/roles', 'POST', { name: 'episode-reader', capabilities: ['read'] }, 201);
    await ok('/v1/auth/roles', 'POST', { name: 'episode-manager', capabilities: ['read', 'episode-manage'] }, 201);
    const readerId = await createPerson(admin, 'line2-reader', 'line2 reader password');
    await grantRole(admin, readerId, 'episode-reader', { kind: 'asset', asset_id: line2 });
    const managerId = await createPerson(admin, 'line1-manager', 'line1 manager password');
    await grantRole(admin, managerId, 'episode-manager', { kind: 'asset', asset_id: line1 });
    const reader = await login(svc.url, 'line2-reader', 'line2 reader password');
    const manager = await login(svc.url, 'line1-manager', 'line1 manager password');
    t.equal((await call(`/v1/episodes/${closedA.id}`, 'GET', undefined, reader)).status, 404, 'an episode on Line1 is not found for a Line2 reader');
    const seen = await ok<{ items: Episode[] }>('/v1/episodes/query', 'POST', { template_ids: [batch.id] }, 200, reader);
    t.ok(seen.items.length >= 1 && seen.items.every((e) => (e as unknown as { assets: Array<{ asset_id: string }> }).assets.every((a) => a.asset_id === r3)), 'the query shows only Line2\'s episodes');
    const one = await ok<{ items: Array<{ assets: Array<{ asset_id: string }> }>; next_cursor: string | null }>('/v1/episodes/query', 'POST', { template_ids: [batch.id], limit: 1 }, 200, reader);
    t.same(one.items.map((e) => e.assets[0].asset_id), [r3], 'a page of one holds Line2\'s batch: the page reads on past the episodes the reader may not see');
    t.equal((await call('/v1/episodes', 'POST', { template_id: phase.id, assets: [{ role: 'reactor', asset_id: r3 }], start_ns: at(1) }, reader)).status, 403, 'reading is not managing');
    t.equal((await call('/v1/episodes', 'POST', { template_id: phase.id, assets: [{ role: 'reactor', asset_id: r3 }], start_ns: at(1) }, manager)).status, 403, 'managing Line1 is not managing Line2');
    const mine = await create({ template_id: phase.id, assets: [{ role: 'reactor', asset_id: r2 }], start_ns: at(1) }, 201, manager);
    t.equal(mine.state, 'open');
    t.equal((await call('/v1/episodes/templates', 'POST', { name: 'Nope', family: 'x', overlap: 'allowed', retro_edit_approval: 'none' }, reader)).status, 403);
    const walk = await ok<{ episodes: Array<{ episode: { id: string } }> }>('/v1/episodes/traverse', 'POST', { start: [closedA.id], direction: 'both' }, 200, reader);
    t.same(walk.episodes, [], 'a traverse from an episode the caller cannot read finds nothing');
  });

  t.test('overlay: the columns layout samples as read-at does (fast-check; seals every head, so last)', (t) => overlayColumnsAgreeWithReadAt(t, svc));
});
