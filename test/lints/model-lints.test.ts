import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestService, request } from '../helpers/service.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';
import { modelTransaction } from '../../src/model/tx-log.js';
import { insertSeriesRow } from '../../src/series/records.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const def = (name: string, over: Json = {}) => ({
  name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null,
  limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [], ...over,
});

t.test('model lints over HTTP', async (t) => {
  const svc = await startTestService(t);
  const api = async (path: string, method = 'GET', body?: unknown) => {
    const r = await request(`${svc.url}${path}`, { method, body });
    t.ok(r.status < 300, `${method} ${path} answers ${r.status}`);
    return r.json as Json;
  };
  const db = svc.service.context.db;
  const series = async (valueType: ValueType, enumSetId: string | null = null) => {
    const id = randomUUID();
    await modelTransaction(db, { principal: 'test' }, (q, txId) => insertSeriesRow(q, txId, { id, sourceName: `test/${id}`, valueType, enumSetId, writableClass: 'collector', createdNs: 1n }));
    return id;
  };
  const temperature = systemEntryId('quantity-kinds', 'Temperature');
  const pressure = systemEntryId('quantity-kinds', 'Pressure');
  const celsius = systemEntryId('units', 'degree Celsius');
  const motor = await api('/v1/model/registries/enum-sets/entries', 'POST', { name: 'Motor state', members: [{ ordinal: 0, name: 'stopped' }, { ordinal: 1, name: 'running' }] });
  const valve = await api('/v1/model/registries/enum-sets/entries', 'POST', { name: 'Valve position', members: [{ ordinal: 0, name: 'shut' }, { ordinal: 1, name: 'open' }] });
  const empty = await api('/v1/model/registries/enum-sets/entries', 'POST', { name: 'Unfinished set', members: [] });

  const pump = await api('/v1/model/templates', 'POST', { name: 'Pump', attributes: [
    def('Temperature', { quantity_kind_id: temperature, default_unit_id: celsius }),
    def('Discharge pressure', { quantity_kind_id: pressure, default_unit_id: celsius }),
    def('Run state', { enum_set_id: motor.id }),
    def('Valve', { enum_set_id: valve.id }),
  ] });
  const unused = await api('/v1/model/templates', 'POST', { name: 'Compressor', attributes: [] });
  const plant = await api('/v1/model/assets', 'POST', { name: 'Plant' });
  const p1 = await api('/v1/model/assets', 'POST', { name: 'P-101', parent: plant.asset_id, template_id: pump.template_id });
  // Creating P-101 from the template created its attributes.
  const inst = await api('/v1/model/resolve', 'POST', { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: p1.asset_id } } });
  const attr = (name: string) => (inst.results as Json[]).find((a) => a.name === name)!.attribute_id as string;
  await api('/v1/model/bindings', 'POST', { attribute_id: attr('Temperature'), series_id: await series('float64'), from_ns: 0 });
  // The binding route refuses a series that cannot serve the attribute; bindings made
  // before that check (or made wrong by a later definition change) are written directly.
  const bindRaw = (attributeId: string, seriesId: string) => modelTransaction(db, { principal: 'test' }, (q, txId) => q.query(
    'INSERT INTO binding_version (binding_id, attribute_id, series_id, from_ns, to_ns, tx_from) VALUES ($1, $2, $3, 0, NULL, $4)', [randomUUID(), attributeId, seriesId, txId]));
  await bindRaw(attr('Run state'), await series('float64'));
  await bindRaw(attr('Valve'), await series('enum', motor.id));
  const own = await api('/v1/model/attributes', 'POST', { asset_id: plant.asset_id, definition: def('Level', { quantity_kind_id: temperature, default_unit_id: randomUUID() }) });
  const stringSeries = await series('string');
  const flowAttr = await api('/v1/model/attributes', 'POST', { asset_id: plant.asset_id, definition: def('Flow', { quantity_kind_id: pressure }) });
  await bindRaw(flowAttr.attribute_id, stringSeries);

  const lints = (await api('/v1/model/lints')).items as Json[];
  const find = (code: string, id: string) => lints.filter((l) => l.code === code && l.resource.id === id);

  t.test('an attribute with no binding now is unbound', async (t) => {
    const l = find('attribute-unbound', attr('Discharge pressure'));
    t.equal(l.length, 1);
    t.match(l[0], { severity: 'warning', resource: { kind: 'attribute', path: '/Plant/P-101|Discharge pressure', asset_id: p1.asset_id } });
    t.same(find('attribute-unbound', attr('Temperature')), [], 'a bound attribute is not');
  });

  t.test("a unit of another quantity kind is flagged on the attribute and on the template", async (t) => {
    t.equal(find('attribute-unit-not-in-kind', attr('Discharge pressure')).length, 1);
    t.same(find('attribute-unit-not-in-kind', attr('Temperature')), []);
    const tl = find('template-unit-not-in-kind', pump.template_id);
    t.equal(tl.length, 1);
    t.match(tl[0].message, /Discharge pressure/);
    t.equal(find('attribute-unit-unknown', own.attribute_id).length, 1, 'a unit id not in the registry');
  });

  t.test('bindings to series of the wrong value type are errors', async (t) => {
    const wrong = lints.filter((l) => l.code === 'binding-value-type');
    t.same(wrong.map((l) => l.resource.path).sort(), ['/Plant/P-101|Run state', '/Plant|Flow']);
    t.ok(wrong.every((l) => l.severity === 'error' && l.resource.kind === 'binding'));
    const differs = lints.filter((l) => l.code === 'binding-enum-set-differs');
    t.same(differs.map((l) => l.resource.path), ['/Plant/P-101|Valve']);
  });

  t.test('a template with no assets and an empty enum set are reported', async (t) => {
    t.equal(find('template-unused', unused.template_id).length, 1);
    t.same(find('template-unused', pump.template_id), []);
    const e = find('enum-set-empty', empty.id);
    t.equal(e.length, 1);
    t.match(e[0], { severity: 'warning', resource: { kind: 'registry-entry', path: null } });
    t.same(find('enum-set-empty', motor.id), []);
  });

  t.test('errors come first, and the listing filters by code and severity', async (t) => {
    const ranks = lints.map((l) => ({ error: 0, warning: 1, info: 2 } as Json)[l.severity]);
    t.same(ranks, [...ranks].sort((a, b) => a - b));
    const onlyUnused = (await api('/v1/model/lints?code=template-unused')).items as Json[];
    t.ok(onlyUnused.length >= 1 && onlyUnused.every((l) => l.code === 'template-unused'));
    const infos = (await api('/v1/model/lints?severity=info')).items as Json[];
    t.ok(infos.every((l) => l.severity === 'info'));
    const bad = await request(`${svc.url}/v1/model/lints?code=no-such-code`);
    t.equal(bad.status, 400);
  });

  t.test('retiring the asset takes its attribute lints away', async (t) => {
    await api(`/v1/model/assets/${p1.asset_id}`, 'PATCH', { retire: true });
    const after = (await api('/v1/model/lints')).items as Json[];
    t.same(after.filter((l) => l.resource.asset_id === p1.asset_id), []);
    t.ok(after.some((l) => l.code === 'template-unused' && l.resource.id === pump.template_id), 'its template is now unused');
  });
});
