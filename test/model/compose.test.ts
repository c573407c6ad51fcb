// Asset-model writes composed into one model transaction through the *In functions:
// everything commits as one tx_id with one event list, the in-memory tree follows the
// commit, and a failure at the last step leaves neither the database nor the tree changed.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { testDb } from '../helpers/db.js';
import { migrate } from '../../src/model/migrate.js';
import { modelTransaction } from '../../src/model/tx-log.js';
import { AssetModel } from '../../src/model/assets/asset-model.js';
import { createAsset, createAssetIn, patchAssetIn } from '../../src/model/assets/assets.js';
import { createAttributeIn, instantiateTemplateIn, patchAttributeIn } from '../../src/model/attributes/attributes.js';
import { createTemplateIn } from '../../src/model/templates/templates.js';
import { bindIn, bindingHistory } from '../../src/model/bindings/bindings.js';
import { putPropertyIn } from '../../src/model/assets/properties.js';
import { insertSeriesRow } from '../../src/series/records.js';
import { ServiceError } from '../../src/errors.js';

const def = (name: string) => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector',
  enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] });
const who = { principal: 'test', reason: 'composed' };

t.test('asset-model writes compose into one model transaction', async (t) => {
  const db = await testDb(t);
  await migrate(db);
  const model = new AssetModel(db);
  t.teardown(() => model.close());
  const plant = (await createAsset(model, who, { name: 'Plant' })).assetId;
  const tree = await model.tree(); // loaded now, so later commits must reach it through the commit feed
  const seriesId = randomUUID();
  await modelTransaction(db, who, (q, txId) => insertSeriesRow(q, txId, { id: seriesId, sourceName: 'opc/P-1.Flow', valueType: 'float64', enumSetId: null, writableClass: 'collector', createdNs: 1n }));

  t.test('a template, an asset, its attributes, a property, a binding and a rename commit as one transaction', async (t) => {
    const c = await modelTransaction(db, who, async (q, txId, events) => {
      const tpl = await createTemplateIn(q, txId, events, { name: 'Pump', attributes: [def('Flow'), def('Speed')] });
      const pump = await createAssetIn(q, txId, events, { name: 'P-1', parent: plant, template_id: tpl });
      const attrs = await instantiateTemplateIn(q, txId, events, pump);
      const own = await createAttributeIn(q, txId, events, { asset_id: pump, definition: def('Note') });
      await putPropertyIn(q, txId, events, pump, 'maker', 'ACME');
      const b = await bindIn(q, txId, events, { attribute_id: attrs[0], series_id: seriesId, from_ns: 5n });
      await patchAssetIn(q, txId, events, pump, { rename: 'P-1A' });
      await patchAttributeIn(q, txId, events, own, { retire: true });
      return { pump, attrs, binding: b.binding };
    });
    t.same(c.events.map((e) => `${e.entity_kind}:${e.action}`),
      ['template:created', 'asset:created', 'attribute:created', 'attribute:created', 'attribute:created', 'property:created', 'binding:created', 'asset:renamed', 'attribute:retired']);
    const node = tree.get(c.result.pump);
    t.ok(node, 'the current tree learnt of the new asset at commit');
    t.equal(tree.path(node!), '/Plant/P-1A', 'with the name it has at the end of the transaction');
    t.equal(node!.tx_id, c.txId);
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM asset_version WHERE asset_id = $1', [c.result.pump]);
    t.equal(rows[0].n, 1, 'a version written and replaced in the same transaction leaves one row');
    const history = await bindingHistory(db, null, c.result.attrs[0]);
    t.same(history.map((b) => [b.series_id, b.from_ns, b.tx_id]), [[seriesId, 5n, c.txId]]);
  });

  t.test('a failure at the last step leaves the database and the tree as they were', async (t) => {
    const before = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM asset_version')).rows[0].n;
    const txBefore = (await db.query<{ tx: bigint }>('SELECT max(tx_id) AS tx FROM model_tx')).rows[0].tx;
    const nodesBefore = tree.nodes.size;
    let created = '';
    const err = await modelTransaction(db, who, async (q, txId, events) => {
      created = await createAssetIn(q, txId, events, { name: 'P-2', parent: plant });
      await createAssetIn(q, txId, events, { name: 'P-3', parent: plant });
      await patchAssetIn(q, txId, events, created, { rename: 'P-3' }); // a sibling has that name now
    }).catch((e: unknown) => e);
    t.ok(err instanceof ServiceError && err.code === 'name-conflict', 'the inner function maps the unique index to name-conflict');
    t.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM asset_version')).rows[0].n, before);
    t.equal((await db.query<{ tx: bigint }>('SELECT max(tx_id) AS tx FROM model_tx')).rows[0].tx, txBefore, 'no transaction was recorded');
    t.equal(tree.nodes.size, nodesBefore);
    t.equal(tree.get(created), undefined);
  });
});
