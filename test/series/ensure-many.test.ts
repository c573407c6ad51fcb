// SeriesCatalogue.ensureManyForSource (many streams of a collector at once) against a real
// model database and engine: one model transaction per batch, every series created once
// (model row, LMDB meta, one 'created' event), a second call creates nothing, and a
// failure of one input (a batch that fails) costs only that input.
import t, { type Test } from 'tap';
import { testDb } from '../helpers/db.js';
import { tempStore } from '../helpers/series-store.js';
import { SeriesCatalogue, type CreateSeriesInput } from '../../src/series/catalogue.js';
import type { Db } from '../../src/model/db.js';
import { migrate } from '../../src/model/migrate.js';
import { randomUUID } from 'node:crypto';

const who = { principal: 'test', reason: 'many streams' };

async function setup(t: Test) {
  const db = await testDb(t);
  await migrate(db);
  const { store } = await tempStore(t);
  const catalogue = new SeriesCatalogue(db, store);
  t.teardown(() => catalogue.close());
  return { db, store, catalogue };
}

const lastTx = async (db: Db) => BigInt((await db.query<{ v: bigint | null }>('SELECT max(tx_id) AS v FROM model_tx')).rows[0].v ?? 0n);

/** Model transactions after sinceTx with their 'series created' events' entity ids. */
async function txsSince(db: Db, sinceTx: bigint): Promise<Array<{ txId: bigint; reason: string; created: string[] }>> {
  const { rows } = await db.query<{ tx_id: bigint; reason: string; ids: string[] | null }>(
    `SELECT t.tx_id, t.reason, array_agg(e.entity_id::text ORDER BY e.seq) FILTER (WHERE e.entity_kind = 'series' AND e.action = 'created') AS ids
       FROM model_tx t LEFT JOIN model_event e ON e.tx_id = t.tx_id WHERE t.tx_id > $1 GROUP BY t.tx_id, t.reason ORDER BY t.tx_id`, [sinceTx]);
  return rows.map((r) => ({ txId: BigInt(r.tx_id), reason: r.reason, created: r.ids ?? [] }));
}

t.test('many new series: one model transaction per batch, each series created once with its row, meta and event; a second call creates nothing', async (t) => {
  const { db, store, catalogue } = await setup(t);
  catalogue.createBatchSize = 40;
  const types = ['float64', 'int64', 'boolean', 'string'] as const;
  const inputs: CreateSeriesInput[] = Array.from({ length: 100 }, (_, i) => ({ sourceName: `c1/tag-${i}`, valueType: types[i % 4] }));
  const enumSet = { id: randomUUID(), ordinals: [0, 1, 7] };
  inputs.push({ sourceName: 'c1/state', valueType: 'enum', enumSet });
  const before = await lastTx(db);
  const out = await catalogue.ensureManyForSource(inputs, who);
  t.equal(out.length, inputs.length);
  t.ok(out.every((o) => o.record && o.created), 'every input created');
  const txs = await txsSince(db, before);
  t.same(txs.map((x) => x.created.length), [40, 40, 21], 'one model transaction per batch of 40, none other');
  t.ok(txs.every((x) => x.reason === 'many streams'), 'each carries the caller\'s reason');
  const createdIds = txs.flatMap((x) => x.created);
  t.equal(new Set(createdIds).size, inputs.length, 'one created event per series');
  t.same(new Set(createdIds), new Set(out.map((o) => o.record?.id)), 'the events name the series returned');
  for (let i = 0; i < inputs.length; i++) {
    const rec = out[i].record!;
    t.equal(rec.sourceName, inputs[i].sourceName);
    t.equal(rec.valueType, inputs[i].valueType);
    t.equal(rec.createdTx, txs[Math.floor(i / 40)].txId, 'stamped with its batch\'s transaction');
    const meta = store.meta(rec.id);
    t.equal(meta?.type, inputs[i].valueType, 'the engine has the series with its type');
  }
  t.same(store.meta(out[100].record!.id)?.enumSet, enumSet, 'the enum series carries its set in the engine');
  t.equal(out[100].record!.enumSetId, enumSet.id);

  const mark = await lastTx(db);
  const again = await catalogue.ensureManyForSource(inputs, who);
  t.ok(again.every((o, i) => o.record?.id === out[i].record?.id && o.created === false), 'found again, not created');
  t.equal(await lastTx(db), mark, 'no model transaction');
});

t.test('per input outcomes: a bad input and a type conflict are refused with their reason; the others are created', async (t) => {
  const { db, catalogue } = await setup(t);
  const clash = await catalogue.create({ sourceName: 'c2/clash', valueType: 'int64' }, { principal: 'test' });
  const before = await lastTx(db);
  const out = await catalogue.ensureManyForSource([
    { sourceName: 'c2/a', valueType: 'float64' },
    { sourceName: 'c2/clash', valueType: 'float64' },
    { sourceName: 'x'.repeat(600), valueType: 'float64' },
    { sourceName: 'c2/clash', valueType: 'int64' },
    { sourceName: 'c2/b', valueType: 'string' },
  ], who);
  t.ok(out[0].created && out[4].created, 'the good inputs are created');
  t.match(out[1].error, { code: 'conflict', message: /exists with value type int64, not float64/ });
  t.match(out[2].error, { code: 'invalid-request', message: /source_name/ });
  t.same([out[3].record?.id, out[3].created], [clash.id, false], 'a re-declaration of the same type finds the series');
  t.same((await txsSince(db, before)).map((x) => x.created.length), [2], 'one transaction for the two new series');
});

t.test('a batch that fails is created one series at a time: only the input that failed it is refused', async (t) => {
  const { db, store, catalogue } = await setup(t);
  // an engine meta without a model row, as a model commit that failed after its LMDB write leaves
  const orphan = randomUUID();
  await store.createSeries({ id: orphan, type: 'int64', writableClass: 'collector' });
  const before = await lastTx(db);
  const out = await catalogue.ensureManyForSource([
    { sourceName: 'c3/a', valueType: 'float64' },
    { id: orphan, sourceName: 'c3/orphan', valueType: 'float64' },
    { sourceName: 'c3/b', valueType: 'float64' },
  ], who);
  t.ok(out[0].created && out[2].created, 'the others are created');
  t.match(out[1].error, { code: 'conflict', message: new RegExp(`${orphan} exists with type int64`) });
  t.equal(store.meta(out[0].record!.id)?.type, 'float64');
  const txs = await txsSince(db, before);
  t.same(txs.map((x) => x.created.length), [1, 1], 'the failed batch left nothing; each survivor in its own transaction');
  const { rows } = await db.query<{ n: bigint }>(`SELECT count(*)::bigint AS n FROM series WHERE source_name LIKE 'c3/%'`);
  t.equal(Number(rows[0].n), 2, 'no model row for the refused input');
});

t.test('names seen once are answered from memory: a second call of known names sends no query, and a new name among them still is created', async (t) => {
  const { db, store } = await setup(t);
  // the real database, counting the statements the catalogue sends through it
  let queries = 0;
  const counting: Db = { ...db, query: (...a: Parameters<Db['query']>) => { queries++; return db.query(...a); } } as Db;
  const catalogue = new SeriesCatalogue(counting, store);
  t.teardown(() => catalogue.close());
  const inputs: CreateSeriesInput[] = Array.from({ length: 30 }, (_, i) => ({ sourceName: `c4/tag-${i}`, valueType: 'float64' }));
  const first = await catalogue.ensureManyForSource(inputs, who);
  t.ok(first.every((o) => o.created), 'created');
  queries = 0;
  const again = await catalogue.ensureManyForSource(inputs, who);
  t.equal(queries, 0, 'no statement for names this process found or created');
  t.ok(again.every((o, i) => o.record?.id === first[i].record?.id && o.created === false), 'the same series, not created');
  t.match(again.map((o) => o.record), first.map((o) => ({ sourceName: o.record?.sourceName, valueType: 'float64', createdTx: o.record?.createdTx })));
  const conflict = await catalogue.ensureManyForSource([{ sourceName: 'c4/tag-3', valueType: 'int64' }], who);
  t.match(conflict[0].error, { code: 'conflict', message: /exists with value type float64, not int64/ }, 'a known name of another type is still a conflict');
  const mixed = await catalogue.ensureManyForSource([...inputs, { sourceName: 'c4/new', valueType: 'boolean' }], who);
  t.ok(mixed.slice(0, 30).every((o) => o.created === false) && mixed[30].created === true, 'only the new name is created');
  t.equal(store.meta(mixed[30].record!.id)?.type, 'boolean');
});
