import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { modelClient, tick } from '../helpers/model.js';
import { nowNs } from '../../src/clock.js';

interface Asset { asset_id: string; parent_id: string | null; name: string; path: string; tx_id: bigint | number; retired: boolean; timezone: string | null; effective_timezone: string; timezone_source_asset: string | null }

t.test('assets over HTTP', async (t) => {
  const svc = await startTestService(t);
  const m = modelClient(svc.url);
  const plant = await m.ok<Asset>('POST', '/v1/model/assets', { name: 'Plant', timezone: 'Europe/Berlin', reason: 'commissioning' });
  const area = await m.ok<Asset>('POST', '/v1/model/assets', { name: 'Area 1', parent: plant.asset_id });
  const pump = await m.ok<Asset>('POST', '/v1/model/assets', { name: 'Pump 1', parent: area.asset_id });

  t.test('a child inherits the time zone of its nearest ancestor that sets one', async (t) => {
    t.equal(pump.path, '/Plant/Area 1/Pump 1');
    t.equal(pump.timezone, null);
    t.equal(pump.effective_timezone, 'Europe/Berlin');
    t.equal(pump.timezone_source_asset, plant.asset_id);
    const got = await m.ok<Asset>('GET', `/v1/model/assets/${pump.asset_id}`);
    t.same(got, pump);
  });

  t.test('an unknown time zone is refused naming the field', async (t) => {
    const r = await m.call('POST', '/v1/model/assets', { name: 'X', timezone: 'Mars/Olympus' });
    t.equal(r.status, 400);
    t.match(r.json, { code: 'invalid-request', error: /timezone/ });
  });

  t.test('a sibling with the same name is a name conflict, a cousin is not', async (t) => {
    const r = await m.call('POST', '/v1/model/assets', { name: 'Area 1', parent: plant.asset_id });
    t.equal(r.status, 409);
    t.match(r.json, { code: 'name-conflict' });
    await m.ok('POST', '/v1/model/assets', { name: 'Area 1', parent: area.asset_id });
    const rename = await m.call('PATCH', `/v1/model/assets/${pump.asset_id}`, { rename: 'Area 1' });
    t.equal(rename.status, 409, 'renaming onto a sibling conflicts too');
    t.match(rename.json, { code: 'name-conflict' });
  });

  t.test('moving an asset under itself or its own descendant is refused', async (t) => {
    const self = await m.call('PATCH', `/v1/model/assets/${plant.asset_id}`, { move: plant.asset_id });
    t.equal(self.status, 400);
    const under = await m.call('PATCH', `/v1/model/assets/${plant.asset_id}`, { move: pump.asset_id });
    t.equal(under.status, 400);
    t.match(under.json, { code: 'invalid-request', error: /cycle/ });
    const still = await m.ok<Asset>('GET', `/v1/model/assets/${plant.asset_id}`);
    t.equal(still.parent_id, null, 'nothing moved');
  });

  t.test('expected_tx that is not the current tx is a conflict', async (t) => {
    const cur = await m.ok<Asset>('GET', `/v1/model/assets/${area.asset_id}`);
    const r = await m.call('PATCH', `/v1/model/assets/${area.asset_id}`, { rename: 'Area One', expected_tx: BigInt(cur.tx_id) - 1n });
    t.equal(r.status, 409);
    t.match(r.json, { code: 'conflict' });
    const ok = await m.ok<Asset>('PATCH', `/v1/model/assets/${area.asset_id}`, { rename: 'Area One', expected_tx: cur.tx_id });
    t.ok(BigInt(ok.tx_id) > BigInt(cur.tx_id), 'a new tx_id is echoed');
    t.equal(ok.path, '/Plant/Area One');
    const child = await m.ok<Asset>('GET', `/v1/model/assets/${pump.asset_id}`);
    t.equal(child.path, '/Plant/Area One/Pump 1', 'descendant paths follow the rename');
  });

  t.test('as_of_ns reads the asset, the tree and paths as they were', async (t) => {
    const site = await m.ok<Asset>('POST', '/v1/model/assets', { name: 'Site', timezone: 'America/Chicago' });
    await tick();
    const before = nowNs();
    await tick();
    await m.ok('PATCH', `/v1/model/assets/${area.asset_id}`, { move: site.asset_id, reason: 'reorganisation' });
    const now = await m.ok<Asset>('GET', `/v1/model/assets/${pump.asset_id}`);
    t.equal(now.path, '/Site/Area One/Pump 1');
    t.equal(now.effective_timezone, 'America/Chicago');
    const then = await m.ok<Asset>('GET', `/v1/model/assets/${pump.asset_id}?as_of_ns=${before}`);
    t.equal(then.path, '/Plant/Area One/Pump 1');
    t.equal(then.effective_timezone, 'Europe/Berlin');
    const byPath = await m.ok<Asset>('GET', `/v1/model/resolve-path?path=${encodeURIComponent('/Plant/Area One')}&as_of_ns=${before}`);
    t.equal(byPath.asset_id, area.asset_id);
    const gone = await m.call('GET', `/v1/model/resolve-path?path=${encodeURIComponent('/Plant/Area One')}`);
    t.equal(gone.status, 404);
    const early = await m.call('GET', `/v1/model/assets/${site.asset_id}?as_of_ns=1`);
    t.equal(early.status, 404, 'before it was created the asset does not exist');
    const tree = await m.ok<{ roots: Array<{ name: string; children: Array<{ name: string }> }> }>('GET', `/v1/model/tree?as_of_ns=${before}`);
    const plantNode = tree.roots.find((r) => r.name === 'Plant');
    t.ok(plantNode?.children.some((c) => c.name === 'Area One'), 'the historical tree has the area under the plant');
  });

  t.test('retire hides an asset from the tree unless asked, unretire brings it back', async (t) => {
    const r = await m.ok<Asset>('PATCH', `/v1/model/assets/${pump.asset_id}`, { retire: true });
    t.equal(r.retired, true);
    const again = await m.call('PATCH', `/v1/model/assets/${pump.asset_id}`, { retire: true });
    t.equal(again.status, 409);
    const tree = await m.ok<{ node_count: number }>('GET', '/v1/model/tree');
    const all = await m.ok<{ node_count: number }>('GET', '/v1/model/tree?include_retired=true');
    t.equal(all.node_count, tree.node_count + 1);
    const back = await m.ok<Asset>('PATCH', `/v1/model/assets/${pump.asset_id}`, { unretire: true });
    t.equal(back.retired, false);
  });

  t.test('tree depth limits the levels returned', async (t) => {
    const tree = await m.ok<{ roots: Array<{ children: unknown[] }> }>('GET', '/v1/model/tree?depth=0');
    t.ok(tree.roots.length >= 2);
    t.ok(tree.roots.every((r) => r.children.length === 0));
  });

  t.test('properties: own rows, inherited effective rows, delete, and as-of', async (t) => {
    await m.ok('PUT', `/v1/model/assets/${plant.asset_id}/properties/owner`, { value: 'North ops' });
    await m.ok('PUT', `/v1/model/assets/${plant.asset_id}/properties/rated_kw`, { value: 500 });
    const p = await m.ok<{ property_id: string }>('PUT', `/v1/model/assets/${pump.asset_id}/properties/rated_kw`, { value: 15 });
    await m.ok('PATCH', `/v1/model/assets/${area.asset_id}`, { move: plant.asset_id });
    const own = await m.ok<{ properties: Array<{ key: string; value: unknown }> }>('GET', `/v1/model/assets/${pump.asset_id}/properties`);
    t.same(own.properties.map((x) => [x.key, x.value]), [['rated_kw', 15]]);
    const eff = await m.ok<{ properties: Array<{ key: string; value: unknown; source_asset: string }> }>('GET', `/v1/model/assets/${pump.asset_id}/properties?effective=true`);
    t.same(eff.properties.map((x) => [x.key, x.value, x.source_asset]), [['owner', 'North ops', plant.asset_id], ['rated_kw', 15, pump.asset_id]]);
    await tick();
    const before = nowNs();
    await tick();
    const upd = await m.ok<{ property_id: string; value: unknown }>('PUT', `/v1/model/assets/${pump.asset_id}/properties/rated_kw`, { value: 18 });
    t.equal(upd.property_id, p.property_id, 'a new version keeps the property id');
    const del = await m.call('DELETE', `/v1/model/assets/${pump.asset_id}/properties/rated_kw`);
    t.equal(del.status, 204);
    const after = await m.ok<{ properties: unknown[] }>('GET', `/v1/model/assets/${pump.asset_id}/properties`);
    t.same(after.properties, []);
    const then = await m.ok<{ properties: Array<{ value: unknown }> }>('GET', `/v1/model/assets/${pump.asset_id}/properties?as_of_ns=${before}`);
    t.same(then.properties.map((x) => x.value), [15]);
    const missing = await m.call('DELETE', `/v1/model/assets/${pump.asset_id}/properties/rated_kw`);
    t.equal(missing.status, 404);
  });
});
