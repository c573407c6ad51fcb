// Series-storage routes are scoped by the asset that owns the series through its current
// binding, or by the staging root while unbound: a subtree grant reads the series bound
// inside it, and never learns of the others.
import t from 'tap';
import { startAuthService, createServiceWithToken, grantRole } from '../helpers/auth.js';
import { modelClient } from '../helpers/model.js';
import type { SeriesCatalogue } from '../../src/series/catalogue.js';
import { nowNs } from '../../src/clock.js';

const def = (name: string) => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] });

t.test('series routes follow the binding to the owning asset', async (t) => {
  const svc = await startAuthService(t);
  const editor = await createServiceWithToken(svc.admin, 'series-scope-editor', 'integration', 'engineer');
  const m = modelClient(svc.url, { authorization: `Bearer ${editor.token}` });
  const north = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'North' });
  const south = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'South' });
  const flowN = await m.ok<{ attribute_id: string }>('POST', '/v1/model/attributes', { asset_id: north.asset_id, definition: def('Flow') }, 201);
  const flowS = await m.ok<{ attribute_id: string }>('POST', '/v1/model/attributes', { asset_id: south.asset_id, definition: def('Flow') }, 201);

  const catalogue = (svc.service.context.parts as { series: SeriesCatalogue }).series;
  const who = { principal: 'test' };
  const sN = await catalogue.create({ sourceName: 'opc/north/flow', valueType: 'float64' }, who);
  const sS = await catalogue.create({ sourceName: 'opc/south/flow', valueType: 'float64' }, who);
  const sStaged = await catalogue.create({ sourceName: 'opc/unbound/flow', valueType: 'float64' }, who);
  await m.ok('POST', '/v1/model/bindings', { attribute_id: flowN.attribute_id, series_id: sN.id, from_ns: 0 }, 201);
  await m.ok('POST', '/v1/model/bindings', { attribute_id: flowS.attribute_id, series_id: sS.id, from_ns: 0 }, 201);

  const reader = await createServiceWithToken(svc.admin, 'north-series-reader');
  await grantRole(svc.admin, reader.identityId, 'viewer', { kind: 'asset', asset_id: north.asset_id });
  const r = modelClient(svc.url, { authorization: `Bearer ${reader.token}` });

  t.equal((await r.call('GET', `/v1/series/${sN.id}/snapshot`)).status, 200, 'a series bound inside the granted subtree is readable');
  t.equal((await r.call('GET', `/v1/series/${sS.id}/snapshot`)).status, 404, 'a series bound elsewhere is hidden as not found');
  t.equal((await r.call('GET', `/v1/series/${sStaged.id}/snapshot`)).status, 404, 'a staging series needs a grant everywhere');
  t.equal((await m.call('GET', `/v1/series/${sStaged.id}/snapshot`)).status, 200, 'a principal granted everywhere reads staging');

  const nobody = await createServiceWithToken(svc.admin, 'no-grants');
  const n = modelClient(svc.url, { authorization: `Bearer ${nobody.token}` });
  t.equal((await n.call('GET', `/v1/series/${sN.id}/snapshot`)).status, 403, 'without read anywhere the answer is 403');
  t.equal((await modelClient(svc.url).call('GET', `/v1/series/${sN.id}/snapshot`)).status, 401, 'without credentials 401');

  t.test('the cached record and scope follow every model change that alters them', async (t) => {
    // warm the caches with the current answers
    t.equal((await r.call('GET', `/v1/series/${sS.id}/raw?start_ns=0&end_ns=1`)).status, 404);
    t.equal((await r.call('GET', `/v1/series/${sN.id}/raw?start_ns=0&end_ns=1`)).status, 200);
    // move sS under North: unbind it from South's attribute, bind it to a North attribute
    const levelN = await m.ok<{ attribute_id: string }>('POST', '/v1/model/attributes', { asset_id: north.asset_id, definition: def('Level') }, 201);
    const at = nowNs();
    await m.ok('POST', '/v1/model/bindings', { attribute_id: flowS.attribute_id, series_id: null, from_ns: at }, 201);
    t.equal((await r.call('GET', `/v1/series/${sS.id}/raw?start_ns=0&end_ns=1`)).status, 404, 'unbound: staging, still hidden');
    t.equal((await m.call('GET', `/v1/series/${sS.id}/snapshot`)).status, 200);
    await m.ok('POST', '/v1/model/bindings', { attribute_id: levelN.attribute_id, series_id: sS.id, from_ns: at }, 201);
    t.equal((await r.call('GET', `/v1/series/${sS.id}/raw?start_ns=0&end_ns=1`)).status, 200, 'bound under North: readable at once');
    // unbinding sN puts it in staging: the reader loses it on the next request
    await m.ok('POST', '/v1/model/bindings', { attribute_id: flowN.attribute_id, series_id: null, from_ns: nowNs() }, 201);
    t.equal((await r.call('GET', `/v1/series/${sN.id}/raw?start_ns=0&end_ns=1`)).status, 404, 'unbound: no longer readable');
    // the writable class seen by readers of the record changes with the commit
    t.equal((await catalogue.get(sS.id))?.writableClass, 'collector');
    await m.ok('PUT', `/v1/series/${sS.id}/writable-class`, { writable_class: 'manual' });
    t.equal((await catalogue.get(sS.id))?.writableClass, 'manual', 'the record is not served stale');
  });

  t.test('moving the owning asset under a granted subtree makes its series readable at once', async (t) => {
    const east = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'East' });
    const flowE = await m.ok<{ attribute_id: string }>('POST', '/v1/model/attributes', { asset_id: east.asset_id, definition: def('Flow') }, 201);
    const sE = await catalogue.create({ sourceName: 'opc/east/flow', valueType: 'float64' }, who);
    await m.ok('POST', '/v1/model/bindings', { attribute_id: flowE.attribute_id, series_id: sE.id, from_ns: 0 }, 201);
    t.equal((await r.call('GET', `/v1/series/${sE.id}/raw?start_ns=0&end_ns=1`)).status, 404, 'East is outside the grant');
    await m.ok('PATCH', `/v1/model/assets/${east.asset_id}`, { move: north.asset_id, reason: 'regrouped under North' });
    t.equal((await r.call('GET', `/v1/series/${sE.id}/raw?start_ns=0&end_ns=1`)).status, 200, 'under North now');
    await m.ok('PATCH', `/v1/model/assets/${east.asset_id}`, { move: null, reason: 'back to the top' });
    t.equal((await r.call('GET', `/v1/series/${sE.id}/raw?start_ns=0&end_ns=1`)).status, 404, 'moved out again');
  });

  t.test('a binding that starts later changes the scope when it starts, with no commit in between', async (t) => {
    const flowN2 = await m.ok<{ attribute_id: string }>('POST', '/v1/model/attributes', { asset_id: north.asset_id, definition: def('Flow 2') }, 201);
    const startsNs = nowNs() + 1_500_000_000n;
    await m.ok('POST', '/v1/model/bindings', { attribute_id: flowN2.attribute_id, series_id: sStaged.id, from_ns: startsNs }, 201);
    t.equal((await r.call('GET', `/v1/series/${sStaged.id}/snapshot`)).status, 404, 'before the binding starts: staging');
    t.equal((await r.call('GET', `/v1/series/${sStaged.id}/snapshot`)).status, 404, 'again, from the cache');
    while (nowNs() < startsNs + 50_000_000n) await new Promise((resolve) => setTimeout(resolve, 100));
    t.equal((await r.call('GET', `/v1/series/${sStaged.id}/snapshot`)).status, 200, 'once it has started: under North');
  });
});
