import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestService } from '../helpers/service.js';
import { modelClient, tick } from '../helpers/model.js';
import { nowNs } from '../../src/clock.js';
import { modelTransaction } from '../../src/model/tx-log.js';
import { insertSeriesRow } from '../../src/series/records.js';
import { owningAsset } from '../../src/model/series-owner.js';

const def = (name: string, overridable: string[] = []) => ({
  name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector',
  enum_set_id: null, limit_traits: { hi: 100 }, lifecycle_policy: null, entry_cadence: null, overridable,
});
const UNIT = '11111111-2222-4333-8444-555555555555';

interface Template { template_id: string; version: number; attributes: Array<[string, { name: string }]>; tx_id: number | bigint }
interface Attr { attribute_id: string; name: string; attr_def_id: string | null; display_unit_id: string | null; limit_traits: unknown; overridden_fields: string[]; retired: boolean; tx_id: number | bigint }
interface Binding { binding_id: string; series_id: string; from_ns: bigint | number; to_ns: bigint | number | null }

t.test('templates, attributes, bindings, resolve, views and links over HTTP', async (t) => {
  const svc = await startTestService(t);
  const m = modelClient(svc.url);
  const db = svc.service.context.db;
  const newSeries = async (name: string) => {
    const id = randomUUID();
    await modelTransaction(db, { principal: 'test' }, (q, txId) => insertSeriesRow(q, txId, { id, sourceName: name, valueType: 'float64', enumSetId: null, writableClass: 'collector', createdNs: nowNs() }));
    return id;
  };

  const pumpT = await m.ok<Template>('POST', '/v1/model/templates', { name: 'Pump', attributes: [def('Flow', ['display_unit_id']), def('Speed')] }, 201);
  const areaT = await m.ok<Template>('POST', '/v1/model/templates', { name: 'Area', permitted_children: [pumpT.template_id] }, 201);
  const plant = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'Plant' });
  const area = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'Area', parent: plant.asset_id, template_id: areaT.template_id });
  const p1 = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'P1', parent: area.asset_id, template_id: pumpT.template_id });
  const p2 = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'P2', parent: area.asset_id, template_id: pumpT.template_id });

  t.test('permitted children are enforced on create and on move', async (t) => {
    const r = await m.call('POST', '/v1/model/assets', { name: 'Loose', parent: area.asset_id });
    t.equal(r.status, 400);
    t.match(r.json, { code: 'invalid-request', error: /permit/ });
    const loose = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'Loose', parent: plant.asset_id });
    const mv = await m.call('PATCH', `/v1/model/assets/${loose.asset_id}`, { move: area.asset_id });
    t.equal(mv.status, 400);
  });

  // Creating an asset from a template created its attributes in the same transaction.
  const attributesOf = async (assetId: string) => ({
    attributes: (await m.ok<{ results: Attr[] }>('POST', '/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: assetId } } })).results,
  });
  const inst1 = await attributesOf(p1.asset_id);
  const inst2 = await attributesOf(p2.asset_id);
  const flow1 = inst1.attributes.find((a) => a.name === 'Flow') as Attr;
  const speed1 = inst1.attributes.find((a) => a.name === 'Speed') as Attr;
  const flow2 = inst2.attributes.find((a) => a.name === 'Flow') as Attr;

  t.test('creating from a template creates one attribute per definition; instantiate then creates nothing', async (t) => {
    t.same(inst1.attributes.map((a) => a.name).sort(), ['Flow', 'Speed']);
    const again = await m.ok<{ attributes: Attr[] }>('POST', `/v1/model/assets/${p1.asset_id}/instantiate`, {});
    t.same(again.attributes, [], 'nothing is created twice');
    const dup = await m.call('POST', '/v1/model/attributes', { asset_id: p1.asset_id, definition: def('Flow') });
    t.equal(dup.status, 409);
    t.match(dup.json, { code: 'name-conflict' });
  });

  t.test('only overridable fields may be overridden, and the effective attribute shows them', async (t) => {
    const bad = await m.call('PATCH', `/v1/model/attributes/${flow1.attribute_id}`, { overrides: { limit_traits: { hi: 5 } } });
    t.equal(bad.status, 400);
    t.match(bad.json, { code: 'invalid-request', error: /overridable/ });
    const unknown = await m.call('PATCH', `/v1/model/attributes/${flow1.attribute_id}`, { overrides: { colour: 'red' } });
    t.equal(unknown.status, 400);
    const ok = await m.ok<Attr>('PATCH', `/v1/model/attributes/${flow1.attribute_id}`, { overrides: { display_unit_id: UNIT } });
    t.equal(ok.display_unit_id, UNIT);
    t.same(ok.overridden_fields, ['display_unit_id']);
    const other = await m.ok<Attr>('GET', `/v1/model/attributes/${flow2.attribute_id}`);
    t.equal(other.display_unit_id, null, 'the other pump keeps the definition');
    const stale = await m.call('PATCH', `/v1/model/attributes/${flow1.attribute_id}`, { retire: true, expected_tx: 1 });
    t.equal(stale.status, 409);
  });

  t.test('a template PATCH is a new version that attributes follow; as_of_ns reads the old one', async (t) => {
    await tick();
    const before = nowNs();
    await tick();
    const v2 = await m.ok<Template>('PATCH', `/v1/model/templates/${pumpT.template_id}`, { name: 'Pump', attributes: [{ ...def('Flow', ['display_unit_id']), limit_traits: { hi: 250 } }, def('Speed'), def('Vibration')] });
    t.equal(v2.version, 2);
    t.equal(v2.attributes[0][0], pumpT.attributes[0][0], 'a definition keeps its id while its name stays');
    const now = await m.ok<Attr>('GET', `/v1/model/attributes/${flow1.attribute_id}`);
    t.same(now.limit_traits, { hi: 250 });
    t.equal(now.display_unit_id, UNIT, 'the override survives the new version');
    const then = await m.ok<Attr>('GET', `/v1/model/attributes/${flow1.attribute_id}?as_of_ns=${before}`);
    t.same(then.limit_traits, { hi: 100 });
    const oldT = await m.ok<Template>('GET', `/v1/model/templates/${pumpT.template_id}?as_of_ns=${before}`);
    t.equal(oldT.version, 1);
    t.equal(oldT.attributes.length, 2);
    const more = await m.ok<{ attributes: Attr[] }>('POST', `/v1/model/assets/${p1.asset_id}/instantiate`, {});
    t.same(more.attributes.map((a) => a.name), ['Vibration'], 'instantiate adds what the new version defines');
  });

  const s1 = await newSeries('opc/p1-flow-a');
  const s2 = await newSeries('opc/p1-flow-b');
  const s3 = await newSeries('opc/unbound');

  t.test('bindings never overlap; rebinding closes the previous one at that instant', async (t) => {
    const staged = await m.ok<{ items: Array<{ series_id: string }> }>('GET', '/v1/model/staging');
    t.ok(staged.items.some((s) => s.series_id === s1), 'a fresh series is in staging');
    const b1 = await m.ok<{ binding: Binding }>('POST', '/v1/model/bindings', { attribute_id: flow1.attribute_id, series_id: s1, from_ns: 1000n }, 201);
    t.equal(await owningAsset(db, s1), p1.asset_id);
    const staged2 = await m.ok<{ items: Array<{ series_id: string }> }>('GET', '/v1/model/staging');
    t.notOk(staged2.items.some((s) => s.series_id === s1), 'a bound series leaves staging');
    t.ok(staged2.items.some((s) => s.series_id === s3));
    const before = await m.call('POST', '/v1/model/bindings', { attribute_id: flow1.attribute_id, series_id: s2, from_ns: 500n, to_ns: 1500n });
    t.equal(before.status, 409, 'a range overlapping an existing binding is refused');
    t.match(before.json, { code: 'conflict' });
    const taken = await m.call('POST', '/v1/model/bindings', { attribute_id: flow2.attribute_id, series_id: s1, from_ns: 2000n });
    t.equal(taken.status, 409, 'a series is behind one attribute at a time');
    const rebind = await m.ok<{ binding: Binding; closed: string[] }>('POST', '/v1/model/bindings', { attribute_id: flow1.attribute_id, series_id: s2, from_ns: 5000n }, 201);
    t.same(rebind.closed, [b1.binding.binding_id]);
    const hist = await m.ok<{ bindings: Binding[] }>('GET', `/v1/model/attributes/${flow1.attribute_id}/bindings`);
    t.same(hist.bindings.map((b) => [b.series_id, Number(b.from_ns), b.to_ns === null ? null : Number(b.to_ns)]), [[s1, 1000, 5000], [s2, 5000, null]]);
    const moved = await m.ok<{ binding: Binding }>('POST', '/v1/model/bindings', { attribute_id: flow2.attribute_id, series_id: s1, from_ns: 6000n }, 201);
    t.equal(moved.binding.series_id, s1, 'once its binding ended the series can be bound elsewhere');
    const missing = await m.call('POST', '/v1/model/bindings', { attribute_id: flow2.attribute_id, series_id: randomUUID(), from_ns: 9000n });
    t.equal(missing.status, 400);
  });

  t.test('resolve: names under a path, templates, retired, ranges and as-of', async (t) => {
    type Res = { results: Array<{ attribute_id: string; path: string; bindings: Binding[] }> };
    const flows = await m.ok<Res>('POST', '/v1/model/resolve', { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { under: { kind: 'path', content: '/Plant/Area' } } });
    t.same(flows.results.map((r) => r.path), ['/Plant/Area/P1|Flow', '/Plant/Area/P2|Flow']);
    const ranged = await m.ok<Res>('POST', '/v1/model/resolve', { select: { kind: 'attribute_ids', content: [flow1.attribute_id] }, scope: {}, range: [2000n, 7000n] });
    t.same(ranged.results[0].bindings.map((b) => b.series_id), [s1, s2], 'both bindings cover part of the range');
    const byTemplate = await m.ok<Res>('POST', '/v1/model/resolve', { select: { kind: 'all' }, scope: { template: { kind: 'template_name', content: 'Pump' }, under: { kind: 'asset_id', content: plant.asset_id } } });
    t.equal(byTemplate.results.length, 5);
    await tick();
    const before = nowNs();
    await tick();
    await m.ok('PATCH', `/v1/model/assets/${p2.asset_id}`, { retire: true });
    const after = await m.ok<Res>('POST', '/v1/model/resolve', { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { under: { kind: 'path', content: '/Plant' } } });
    t.same(after.results.map((r) => r.path), ['/Plant/Area/P1|Flow'], 'a retired asset drops out');
    const withRetired = await m.ok<Res>('POST', '/v1/model/resolve', { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { under: { kind: 'path', content: '/Plant' } }, include_retired: true });
    t.equal(withRetired.results.length, 2);
    const asOf = await m.ok<Res>('POST', '/v1/model/resolve', { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { under: { kind: 'path', content: '/Plant' } }, as_of_ns: before });
    t.equal(asOf.results.length, 2, 'as of before the retirement both pumps resolve');
    const badKind = await m.call('POST', '/v1/model/resolve', { select: { kind: 'everything' }, scope: {} });
    t.equal(badKind.status, 400);
  });

  t.test('links are typed and directed; downstream_of and upstream_of walk them', async (t) => {
    const tank = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'Tank', parent: plant.asset_id });
    await m.ok('POST', `/v1/model/attributes`, { asset_id: tank.asset_id, definition: def('Flow') }, 201);
    const l1 = await m.ok<{ link_id: string }>('POST', '/v1/model/links', { from_asset: p1.asset_id, to_asset: tank.asset_id, link_type: 'feeds' }, 201);
    await m.ok('POST', '/v1/model/links', { from_asset: tank.asset_id, to_asset: p1.asset_id, link_type: 'returns-to' }, 201);
    type Res = { results: Array<{ path: string }> };
    const down = await m.ok<Res>('POST', '/v1/model/resolve', { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { downstream_of: { asset: p1.asset_id, via: ['feeds'], depth: 1 } } });
    t.same(down.results.map((r) => r.path), ['/Plant/Area/P1|Flow', '/Plant/Tank|Flow']);
    const up = await m.ok<Res>('POST', '/v1/model/resolve', { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { upstream_of: { asset: tank.asset_id, via: ['feeds'] } } });
    t.same(up.results.map((r) => r.path), ['/Plant/Area/P1|Flow', '/Plant/Tank|Flow']);
    await tick();
    const before = nowNs();
    await tick();
    await m.ok('PATCH', `/v1/model/links/${l1.link_id}`, { retire: true });
    const links = await m.ok<{ links: unknown[] }>('GET', `/v1/model/assets/${p1.asset_id}/links?direction=out`);
    t.same(links.links, [], 'a retired link is not listed');
    const old = await m.ok<{ links: unknown[] }>('GET', `/v1/model/assets/${p1.asset_id}/links?direction=out&as_of_ns=${before}`);
    t.equal(old.links.length, 1, 'as of before retirement it is');
    const restored = await m.ok<{ retired: boolean }>('PATCH', `/v1/model/links/${l1.link_id}`, { restore: true });
    t.equal(restored.retired, false);
  });

  t.test('views: alternate hierarchies, renamed with as-of history', async (t) => {
    const v = await m.ok<{ view_id: string; name: string; tx_id: number | bigint }>('POST', '/v1/model/views', {
      name: 'Maintenance', members: [{ asset_id: area.asset_id, parent_asset_id: null }, { asset_id: p1.asset_id, parent_asset_id: area.asset_id }],
    }, 201);
    t.same(Object.keys(v).sort(), ['name', 'retired', 'tx_id', 'view_id'], 'the View projection has exactly its four fields');
    const tree = await m.ok<{ roots: Array<{ asset_id: string; children: Array<{ asset_id: string; path: string }> }> }>('GET', `/v1/model/views/${v.view_id}/tree`);
    t.equal(tree.roots[0].asset_id, area.asset_id);
    t.equal(tree.roots[0].children[0].path, '/Plant/Area/P1');
    const dup = await m.call('POST', '/v1/model/views', { name: 'Maintenance' });
    t.equal(dup.status, 409);
    const cyc = await m.call('PATCH', `/v1/model/views/${v.view_id}`, { members: [{ asset_id: area.asset_id, parent_asset_id: p1.asset_id }, { asset_id: p1.asset_id, parent_asset_id: area.asset_id }] });
    t.equal(cyc.status, 400);
    await tick();
    const before = nowNs();
    await tick();
    await m.ok('PATCH', `/v1/model/views/${v.view_id}`, { name: 'Maint', expected_tx: v.tx_id });
    const old = await m.ok<{ name: string }>('GET', `/v1/model/views/${v.view_id}?as_of_ns=${before}`);
    t.equal(old.name, 'Maintenance');
    const list = await m.ok<{ views: Array<{ name: string }> }>('GET', '/v1/model/views');
    t.same(list.views.map((x) => x.name), ['Maint']);
  });
});
