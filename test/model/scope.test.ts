import t from 'tap';
import { startAuthService, bearerClient, createServiceWithToken, grantRole } from '../helpers/auth.js';
import { modelClient } from '../helpers/model.js';

const def = (name: string) => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] });

t.test('subtree and view grants scope the model routes', async (t) => {
  const svc = await startAuthService(t);
  const adminToken = await createServiceWithToken(svc.admin, 'model-admin');
  const roleRes = await svc.admin('/v1/auth/roles', { method: 'POST', body: { name: 'model-reader', capabilities: ['read'] } });
  t.equal(roleRes.status, 201, 'a read-only role is created');
  const editRes = await svc.admin('/v1/auth/roles', { method: 'POST', body: { name: 'model-editor', capabilities: ['read', 'model-edit'] } });
  t.equal(editRes.status, 201);
  await grantRole(svc.admin, adminToken.identityId, 'model-editor');
  const m = modelClient(svc.url, { authorization: `Bearer ${adminToken.token}` });

  const north = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'North' });
  const south = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'South' });
  const pumpN = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'Pump', parent: north.asset_id });
  const pumpS = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'Pump', parent: south.asset_id });
  const attrN = await m.ok<{ attribute_id: string }>('POST', '/v1/model/attributes', { asset_id: pumpN.asset_id, definition: def('Flow') }, 201);
  const attrS = await m.ok<{ attribute_id: string }>('POST', '/v1/model/attributes', { asset_id: pumpS.asset_id, definition: def('Flow') }, 201);

  const reader = await createServiceWithToken(svc.admin, 'north-reader');
  await grantRole(svc.admin, reader.identityId, 'model-reader', { kind: 'asset', asset_id: north.asset_id });
  const r = modelClient(svc.url, { authorization: `Bearer ${reader.token}` });

  t.test('a subtree grant reads inside the subtree and never learns of assets outside it', async (t) => {
    t.equal((await r.call('GET', `/v1/model/assets/${pumpN.asset_id}`)).status, 200, 'a descendant of the granted asset is readable');
    t.equal((await r.call('GET', `/v1/model/assets/${pumpS.asset_id}`)).status, 404, 'an asset outside is hidden as not found');
    t.equal((await r.call('GET', `/v1/model/attributes/${attrS.attribute_id}`)).status, 404);
    t.equal((await r.call('GET', `/v1/model/attributes/${attrN.attribute_id}`)).status, 200);
    const tree = await r.ok<{ roots: Array<{ name: string; path: string }>; node_count: number }>('GET', '/v1/model/tree');
    t.same(tree.roots.map((x) => x.path), ['/North'], 'the tree shows only the granted subtree');
    t.equal(tree.node_count, 2);
    const res = await r.ok<{ results: Array<{ path: string }> }>('POST', '/v1/model/resolve', { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: {} });
    t.same(res.results.map((x) => x.path), ['/North/Pump|Flow'], 'resolve filters each result');
    t.equal((await r.call('GET', `/v1/model/resolve-path?path=${encodeURIComponent('/South/Pump')}`)).status, 404);
    const events = await r.ok<Array<{ events: Array<{ entity_id: string; details: { asset_id?: string } }> }>>('GET', '/v1/model/events?limit=1000');
    const seen = new Set(events.flatMap((tx) => tx.events.map((e) => e.details.asset_id ?? e.entity_id)));
    t.ok(seen.has(pumpN.asset_id), 'events of the subtree are listed');
    t.notOk(seen.has(pumpS.asset_id) || seen.has(south.asset_id), 'events outside the subtree are not');
  });

  t.test('a read grant does not allow changes, and a move out of the subtree takes access away', async (t) => {
    const denied = await r.call('PATCH', `/v1/model/assets/${pumpN.asset_id}`, { rename: 'Pump 2' });
    t.equal(denied.status, 403);
    await m.ok('PATCH', `/v1/model/assets/${pumpN.asset_id}`, { move: south.asset_id, rename: 'Pump N' });
    t.equal((await r.call('GET', `/v1/model/assets/${pumpN.asset_id}`)).status, 404, 'ancestry is re-read after the move');
    await m.ok('PATCH', `/v1/model/assets/${pumpN.asset_id}`, { move: north.asset_id, rename: 'Pump' });
  });

  t.test('a view grant covers the assets the view places and their subtrees', async (t) => {
    const viewer = await createServiceWithToken(svc.admin, 'south-viewer');
    const v = await m.ok<{ view_id: string }>('POST', '/v1/model/views', { name: 'Southern pumps', members: [{ asset_id: pumpS.asset_id, parent_asset_id: null }] }, 201);
    await grantRole(svc.admin, viewer.identityId, 'model-reader', { kind: 'view', view_id: v.view_id });
    const c = bearerClient(svc.url, viewer.token);
    t.equal((await c(`/v1/model/assets/${pumpS.asset_id}`)).status, 200);
    t.equal((await c(`/v1/model/assets/${south.asset_id}`)).status, 404, 'the member\'s parent is not in the view');
    t.equal((await c(`/v1/model/views/${v.view_id}`)).status, 200);
    const res = await c('/v1/model/resolve', { method: 'POST', body: { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/South' } } } });
    t.same((res.json as { results: Array<{ attribute_id: string }> }).results.map((x) => x.attribute_id), [attrS.attribute_id]);
    await m.ok('PATCH', `/v1/model/views/${v.view_id}`, { members: [] });
    t.equal((await c(`/v1/model/assets/${pumpS.asset_id}`)).status, 404, 'removing the member removes access');
  });
});
