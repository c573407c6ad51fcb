// The in-memory cache of current attributes behind resolve: answers equal the SQL path's
// (an as-of resolve at the same instant), every kind of change that alters an answer
// reaches it through the commit feed, and its size stays within its capacity.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { testDb } from '../helpers/db.js';
import { migrate } from '../../src/model/migrate.js';
import { modelTransaction } from '../../src/model/tx-log.js';
import { nowNs } from '../../src/clock.js';
import { AssetModel } from '../../src/model/assets/asset-model.js';
import { createAsset } from '../../src/model/assets/assets.js';
import { createAttribute, instantiateTemplate, patchAttribute } from '../../src/model/attributes/attributes.js';
import { createTemplate, patchTemplate } from '../../src/model/templates/templates.js';
import { bind } from '../../src/model/bindings/bindings.js';
import { resolve, type ResolveRequest } from '../../src/model/resolve/resolve.js';
import { CurrentAttributeCache } from '../../src/model/resolve/attribute-cache.js';
import { insertSeriesRow } from '../../src/series/records.js';
import { tick } from '../helpers/model.js';

const def = (name: string, extra: Record<string, unknown> = {}) => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector',
  enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: ['continuity_class'], ...extra });
const who = { principal: 'test' };
const all = async () => true;

t.test('resolve over the attribute cache', async (t) => {
  const db = await testDb(t);
  await migrate(db);
  const model = new AssetModel(db);
  t.teardown(() => model.close());
  const tpl = await createTemplate(model, who, { name: 'Pump', attributes: [def('Flow'), def('Speed')] });
  const plant = (await createAsset(model, who, { name: 'Plant' })).assetId;
  const pumps: string[] = [];
  for (const name of ['P-2', 'P-1', 'P-10']) {
    const id = (await createAsset(model, who, { name, parent: plant, template_id: tpl.templateId })).assetId;
    await instantiateTemplate(model, who, id);
    pumps.push(id);
  }
  const own = (await createAttribute(model, who, { asset_id: pumps[0], definition: def('Note') })).attributeId;
  const seriesId = randomUUID();
  await modelTransaction(db, who, (q, txId) => insertSeriesRow(q, txId, { id: seriesId, sourceName: 's1', valueType: 'float64', enumSetId: null, writableClass: 'collector', createdNs: 1n }));
  const under: ResolveRequest = { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } };
  const current = async (req: ResolveRequest = under) => (await resolve(model, req, all)).results;
  const sqlPath = async (req: ResolveRequest = under) => { await tick(); return (await resolve(model, { ...req, as_of_ns: nowNs() }, all)).results; };

  t.test('a cached answer equals the SQL answer at the same instant', async (t) => {
    const a = await current();
    t.equal(a.length, 7);
    t.same(a.map((r) => r.path), ['/Plant/P-1|Flow', '/Plant/P-1|Speed', '/Plant/P-10|Flow', '/Plant/P-10|Speed', '/Plant/P-2|Flow', '/Plant/P-2|Note', '/Plant/P-2|Speed']);
    t.same(await current(), await sqlPath(), 'warm cache and SQL agree');
    t.same(await current({ ...under, select: { kind: 'attributes_named', content: { name: 'Speed' } } }), await sqlPath({ ...under, select: { kind: 'attributes_named', content: { name: 'Speed' } } }));
    t.ok(model.attributes.size >= 7);
  });

  t.test('bindings, overrides, retirement and template versions reach the cached answer', async (t) => {
    await current(); // warm
    const flow = (await current()).find((r) => r.path === '/Plant/P-1|Flow')!;
    const b = await bind(model, who, { attribute_id: flow.attribute_id, series_id: seriesId, from_ns: 10n });
    t.same((await current()).find((r) => r.attribute_id === flow.attribute_id)!.bindings.map((x) => x.binding_id), [b.binding!.binding_id]);
    const ranged = await current({ ...under, range: [0, 5] });
    t.same(ranged.find((r) => r.attribute_id === flow.attribute_id)!.bindings, [], 'a range before the binding has none');
    await patchAttribute(model, who, flow.attribute_id, { overrides: { continuity_class: 'stepped' } });
    t.match((await current()).find((r) => r.attribute_id === flow.attribute_id), { continuity_class: 'stepped', overridden_fields: ['continuity_class'] });
    await patchAttribute(model, who, own, { retire: true });
    t.notOk((await current()).some((r) => r.attribute_id === own), 'a retired attribute leaves the answer');
    t.ok((await current({ ...under, include_retired: true })).some((r) => r.attribute_id === own));
    await patchTemplate(model, who, tpl.templateId, { name: 'Pump', attributes: [def('Flow'), def('Speed', { writer_class: 'manual' })] });
    t.ok((await current()).filter((r) => r.name === 'Speed').every((r) => r.writer_class === 'manual'), 'a new template version reaches every asset');
    t.same(await current(), await sqlPath(), 'and the cache still agrees with SQL');
  });

  t.test('the cache keeps within its capacity, dropping the least recently used assets', async (t) => {
    const small = new CurrentAttributeCache(db, 4);
    await small.forAssets([pumps[0]]);
    t.equal(small.size, 3);
    await small.forAssets([pumps[1]]);
    t.equal(small.size, 2, 'the older asset went to make room');
    const again = await small.forAssets([pumps[0], pumps[1]]);
    t.equal(again.get(pumps[0])!.length, 3, 'an evicted asset is read again from the database');
    small.clear();
    t.equal(small.size, 0);
  });
});
