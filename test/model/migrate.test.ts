import t from 'tap';
import { testDb } from '../helpers/db.js';
import { migrate, listMigrations } from '../../src/model/migrate.js';
import { modelTransaction, txAsOf } from '../../src/model/tx-log.js';

t.test('migrations apply on a fresh database, once', async (t) => {
  const db = await testDb(t);
  const all = await listMigrations();
  const applied = await migrate(db);
  t.same(applied, all.map((m) => m.name), 'every migration applied in number order');
  const again = await migrate(db);
  t.same(again, [], 'an up-to-date database applies nothing');
  const { rows } = await db.query<{ n: bigint }>('SELECT count(*) AS n FROM schema_migration');
  t.equal(Number(rows[0].n), all.length);
});

t.test('two starts migrating at once apply each migration once', async (t) => {
  if (!process.env.DATABASE_URL) { t.pass('PGlite is single-connection: concurrency is moot'); return; }
  const db = await testDb(t);
  const [a, b] = await Promise.all([migrate(db), migrate(db)]);
  const all = await listMigrations();
  t.equal(a.length + b.length, all.length, 'together they applied each migration exactly once');
});

t.test('every model change commits through the transaction log with its events', async (t) => {
  const db = await testDb(t);
  await migrate(db);
  const entity = '11111111-2222-4333-8444-555555555555';
  const one = await modelTransaction(db, { principal: 'alice', reason: 'first' }, async (_tx, _txId, ev) => {
    ev.emit('asset', entity, 'created', { name: 'P-101' });
    ev.emit('asset', entity, 'renamed', { name: 'P-102' });
    return 'done';
  });
  t.equal(one.result, 'done');
  t.type(one.txId, 'bigint');
  const two = await modelTransaction(db, { principal: 'bob' }, async () => null);
  t.ok(two.txId > one.txId, 'tx ids ascend');
  t.ok(two.committedNs > one.committedNs, 'commit times ascend');
  const { rows } = await db.query<{ tx_id: bigint; seq: number; action: string; details: { name: string } }>(
    'SELECT tx_id, seq, action, details FROM model_event ORDER BY tx_id, seq');
  t.same(rows.map((r) => [r.tx_id, r.seq, r.action, r.details.name]), [[one.txId, 0, 'created', 'P-101'], [one.txId, 1, 'renamed', 'P-102']]);
  t.equal(await txAsOf(db, one.committedNs), one.txId, 'as-of resolves to the tx committed at that time');
  t.equal(await txAsOf(db, one.committedNs - 1n), 0n, 'before any change the model is empty');

  await t.rejects(modelTransaction(db, { principal: 'carol' }, async (_tx, _id, ev) => {
    ev.emit('asset', entity, 'deleted');
    throw new Error('changed my mind');
  }));
  const { rows: after } = await db.query<{ n: bigint }>("SELECT count(*) AS n FROM model_tx WHERE principal = 'carol'");
  t.equal(Number(after[0].n), 0, 'a failed change leaves no transaction behind');
});
