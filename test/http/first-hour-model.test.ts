// Issue 32, items 8-12, over real HTTP: closed continuity and writer vocabularies, assets made
// from a template get their attributes, one attribute-path notation, bindings refused when
// the series cannot serve the attribute, grants by role name.
import t from 'tap';
import { startTestService, request } from '../helpers/service.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const def = (name: string, over: Json = {}) => ({
  name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null,
  limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: ['continuity_class', 'writer_class'], ...over,
});

t.test('the first hour with the asset model', async (t) => {
  const svc = await startTestService(t);
  const call = (method: string, path: string, body?: unknown, extra: { rawBody?: string; headers?: Record<string, string> } = {}) =>
    request(`${svc.url}${path}`, { method, body, ...extra });
  const ok = async (method: string, path: string, body?: unknown, status = 200): Promise<Json> => {
    const r = await call(method, path, body);
    if (r.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${r.status}: ${r.text}`);
    return r.json as Json;
  };
  const who = { principal: 'tester' };
  const parts = svc.service.context.parts;
  const frequency = systemEntryId('quantity-kinds', 'Frequency');

  const pump = await ok('POST', '/v1/model/templates', { name: 'Pump', attributes: [
    def('Flow'), def('Speed', { quantity_kind_id: frequency }), def('Running', { continuity_class: 'stepped' }),
  ] }, 201);
  const site = await ok('POST', '/v1/model/assets', { name: 'Site1' });
  const area = await ok('POST', '/v1/model/assets', { name: 'Area1', parent: site.asset_id });
  const p101 = await ok('POST', '/v1/model/assets', { name: 'Pump-101', parent: area.asset_id, template_id: pump.template_id });
  const attrs = (await ok('POST', '/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: p101.asset_id } } })).results as Json[];
  const attr = (name: string) => attrs.find((a) => a.name === name) as Json;

  t.test('continuity_class and writer_class take only their vocabularies, listed in the 400 and in the contract', async (t) => {
    const bad = await call('POST', '/v1/model/templates', { name: 'Valve', attributes: [def('Position', { continuity_class: 'foo' })] });
    t.equal(bad.status, 400);
    t.match(bad.json, { code: 'invalid-request' });
    for (const word of ['continuous', 'stepped', 'event']) t.match((bad.json as Json).error, word, `the 400 lists ${word}`);
    const badWriter = await call('POST', '/v1/model/templates', { name: 'Valve', attributes: [def('Position', { writer_class: 'robot' })] });
    t.equal(badWriter.status, 400);
    for (const word of ['collector', 'calculation', 'manual', 'import']) t.match((badWriter.json as Json).error, word, `the 400 lists ${word}`);
    const override = await call('PATCH', `/v1/model/attributes/${attr('Flow').attribute_id}`, { overrides: { continuity_class: 'wobbly' } });
    t.equal(override.status, 400, 'an override takes the same vocabulary');
    t.match((override.json as Json).error, /overrides\.continuity_class: must be one of continuous, stepped, event; received "wobbly"/);
    const stepped = await ok('PATCH', `/v1/model/attributes/${attr('Flow').attribute_id}`, { overrides: { continuity_class: 'event' } });
    t.equal(stepped.continuity_class, 'event');

    const s = await parts.series.create({ sourceName: 'lab/sample', valueType: 'float64' }, who);
    const wc = await call('PUT', `/v1/series/${s.id}/writable-class`, { writable_class: 'robot' });
    t.equal(wc.status, 400, 'a series writable class is a writer class');
    t.equal((await call('PUT', `/v1/series/${s.id}/writable-class`, { writable_class: 'manual' })).status, 200);

    const contract = (await ok('GET', '/v1/openapi.json')) as Json;
    const values = (schema: Json) => (schema.anyOf as Json[]).map((x) => x.const);
    t.same(values(contract.components.schemas.ContinuityClass), ['continuous', 'stepped', 'event']);
    t.same(values(contract.components.schemas.WriterClass), ['collector', 'calculation', 'manual', 'import']);
    t.same(contract.components.schemas.AttributeDefinition.properties.continuity_class, { $ref: '#/components/schemas/ContinuityClass' });
  });

  t.test('an asset made from a template has its attributes at once; instantiate takes no body', async (t) => {
    t.same(attrs.map((a) => a.name).sort(), ['Flow', 'Running', 'Speed']);
    t.ok(attrs.every((a) => a.tx_id === p101.tx_id), 'created in the asset\'s own transaction');
    const noBody = await call('POST', `/v1/model/assets/${p101.asset_id}/instantiate`);
    t.equal(noBody.status, 200, 'no body at all');
    t.same((noBody.json as Json).attributes, [], 'nothing to add');
    await ok('PATCH', `/v1/model/templates/${pump.template_id}`, { name: 'Pump', attributes: [
      def('Flow'), def('Speed', { quantity_kind_id: frequency }), def('Running', { continuity_class: 'stepped' }), def('Vibration'),
    ] });
    const more = await call('POST', `/v1/model/assets/${p101.asset_id}/instantiate`, undefined, { rawBody: '', headers: { 'content-type': 'application/json' } });
    t.equal(more.status, 200, 'an empty JSON body');
    t.same((more.json as Json).attributes.map((a: Json) => a.name), ['Vibration'], 'a definition added later is instantiated');
    const contract = (await ok('GET', '/v1/openapi.json')) as Json;
    t.equal(contract.paths['/v1/model/assets/{uuid}/instantiate'].post.requestBody.required, false);
  });

  t.test('attribute paths are /asset/path|Attribute everywhere, and resolve-path answers them', async (t) => {
    // A child asset named like an attribute: the notation keeps them apart.
    const child = await ok('POST', '/v1/model/assets', { name: 'Flow', parent: p101.asset_id });
    t.equal(attr('Flow').path, '/Site1/Area1/Pump-101|Flow');
    t.equal(attr('Flow').asset_path, '/Site1/Area1/Pump-101');
    const asAttr = await ok('GET', `/v1/model/resolve-path?path=${encodeURIComponent('/Site1/Area1/Pump-101|Flow')}`);
    t.equal(asAttr.attribute_id, attr('Flow').attribute_id, 'the attribute path answers the attribute');
    t.equal(asAttr.path, '/Site1/Area1/Pump-101|Flow');
    t.same(asAttr.bindings, []);
    const asAsset = await ok('GET', `/v1/model/resolve-path?path=${encodeURIComponent('/Site1/Area1/Pump-101/Flow')}`);
    t.equal(asAsset.asset_id, child.asset_id, 'the asset path answers the child asset');
    t.notOk('attribute_id' in asAsset);
    const none = await call('GET', `/v1/model/resolve-path?path=${encodeURIComponent('/Site1/Area1/Pump-101|Nope')}`);
    t.equal(none.status, 404);
    t.match((none.json as Json).error, /no attribute named "Nope"/);
    const lints = (await ok('GET', '/v1/model/lints?code=attribute-unbound')).items as Json[];
    t.ok(lints.some((l) => l.resource.path === '/Site1/Area1/Pump-101|Speed'), 'lints write the same notation');
    const bar = await call('POST', '/v1/model/assets', { name: 'A|B', parent: site.asset_id });
    t.equal(bar.status, 400, 'a name may not contain "|"');
  });

  t.test('a binding whose series cannot serve the attribute is refused, naming both types', async (t) => {
    const bool = await parts.series.create({ sourceName: 'sim/pump-101/running', valueType: 'boolean' }, who);
    const r = await call('POST', '/v1/model/bindings', { attribute_id: attr('Speed').attribute_id, series_id: bool.id, from_ns: 0 });
    t.equal(r.status, 400);
    t.match(r.json, { code: 'invalid-request', details: { series_value_type: 'boolean', attribute_quantity_kind_id: frequency } });
    t.match((r.json as Json).error, /holds boolean values/);
    t.match((r.json as Json).error, /quantity kind "Frequency"/);
    const set = await ok('POST', '/v1/model/registries/enum-sets/entries', { name: 'Run state', members: [{ ordinal: 0, name: 'stopped' }, { ordinal: 1, name: 'running' }] }, 201);
    const other = await ok('POST', '/v1/model/registries/enum-sets/entries', { name: 'Valve travel', members: [{ ordinal: 0, name: 'shut' }, { ordinal: 1, name: 'open' }] }, 201);
    const own = await ok('POST', '/v1/model/attributes', { asset_id: p101.asset_id, definition: def('State', { enum_set_id: set.id }) }, 201);
    const wrongSet = await parts.series.create({ sourceName: 'sim/pump-101/valve', valueType: 'enum', enumSet: { id: other.id, ordinals: [0, 1] } }, who);
    const e = await call('POST', '/v1/model/bindings', { attribute_id: own.attribute_id, series_id: wrongSet.id, from_ns: 0 });
    t.equal(e.status, 400);
    t.match((e.json as Json).error, /enum set "Valve travel".*enum set "Run state"/);
    const right = await parts.series.create({ sourceName: 'sim/pump-101/state', valueType: 'enum', enumSet: { id: set.id, ordinals: [0, 1] } }, who);
    t.equal((await call('POST', '/v1/model/bindings', { attribute_id: own.attribute_id, series_id: right.id, from_ns: 0 })).status, 201);
    const speed = await parts.series.create({ sourceName: 'sim/pump-101/speed', valueType: 'float64' }, who);
    t.equal((await call('POST', '/v1/model/bindings', { attribute_id: attr('Speed').attribute_id, series_id: speed.id, from_ns: 0 })).status, 201, 'a float64 series serves a quantity');
    t.equal((await call('POST', '/v1/model/bindings', { attribute_id: attr('Running').attribute_id, series_id: bool.id, from_ns: 0 })).status, 201, 'an attribute with neither takes any series');
  });

  t.test('a grant names its role by uuid or by name', async (t) => {
    const person = await ok('POST', '/v1/auth/principals', { username: 'olga', password: 'a long enough password' }, 201);
    const g = await ok('POST', '/v1/auth/grants', { principal_id: person.principal_id, role_id: 'viewer', scope: { kind: 'asset', asset_id: site.asset_id } }, 201);
    t.match(g, { role_id: '00000000-0000-4000-a000-000000000001', role_name: 'viewer' });
    const upper = await ok('POST', '/v1/auth/grants', { principal_id: person.principal_id, role_id: 'Operator', scope: { kind: 'everywhere' } }, 201);
    t.equal(upper.role_name, 'operator', 'names match ignoring case');
    const byId = await call('POST', '/v1/auth/grants', { principal_id: person.principal_id, role_id: '00000000-0000-4000-a000-000000000003', scope: { kind: 'everywhere' } });
    t.equal(byId.status, 201);
    const none = await call('POST', '/v1/auth/grants', { principal_id: person.principal_id, role_id: 'superuser', scope: { kind: 'everywhere' } });
    t.equal(none.status, 404);
    t.match(none.json, { code: 'not-found', details: { role_id: 'superuser' } });
  });
});
