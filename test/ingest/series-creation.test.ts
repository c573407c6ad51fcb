// A collector session declaring many new streams: their series are created in batches of
// one model transaction each (checked in the model's transaction log), a reconnect with
// the same streams creates nothing, and a stream whose declaration fails is refused with
// its reason while every other stream of the session gets its series.
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { connect, floatBatch, readAll, T0 } from '../helpers/ingest.js';
import type { Db } from '../../src/model/db.js';
import type { StreamDeclaration } from '../../src/collector/collector-client.js';

const lastTx = async (db: Db) => BigInt((await db.query<{ v: bigint | null }>('SELECT max(tx_id) AS v FROM model_tx')).rows[0].v ?? 0n);

t.test('a session of many new streams', async (t) => {
  const svc = await startTestService(t);
  const { db } = svc.service.context;
  const catalogue = svc.service.context.parts.series;
  catalogue.createBatchSize = 200;
  const clash = await catalogue.create({ sourceName: 'plant-7/clash', valueType: 'int64' }, { principal: 'test' });
  const types = ['float64', 'int64', 'boolean', 'string'] as const;
  const streams: StreamDeclaration[] = Array.from({ length: 450 }, (_, i) => ({ name: `unit-${Math.floor(i / 10)}/tag-${i % 10}`, type: types[i % 4] }));
  streams.splice(100, 0, { name: 'clash', type: 'float64' });
  streams.splice(300, 0, { name: 'state', type: 'enum', enumSet: 'no-such-set' });
  const before = await lastTx(db);

  const c = await connect(svc, { collectorId: 'plant-7', epoch: 1n, streams });
  const w = c.welcome.streams;
  t.equal(w.length, streams.length);

  t.test('each new stream gets its series once, created in one model transaction per batch', async (t) => {
    const { rows } = await db.query<{ tx_id: bigint; reason: string; n: bigint }>(
      `SELECT t.tx_id, t.reason, count(e.seq)::bigint AS n FROM model_tx t LEFT JOIN model_event e ON e.tx_id = t.tx_id AND e.entity_kind = 'series' AND e.action = 'created'
        WHERE t.tx_id > $1 GROUP BY t.tx_id, t.reason ORDER BY t.tx_id`, [before]);
    t.same(rows.map((r) => Number(r.n)), [200, 200, 50], 'three model transactions: batches of 200, 200 and 50 series');
    t.ok(rows.every((r) => r.reason === `collector plant-7 declared ${streams.length} streams`), 'the reason names the collector');
    const created = await db.query<{ entity_id: string; source_name: string }>(
      `SELECT e.entity_id::text AS entity_id, e.details->>'source_name' AS source_name FROM model_event e WHERE e.tx_id > $1 AND e.entity_kind = 'series' AND e.action = 'created'`, [before]);
    const byName = new Map(created.rows.map((r) => [r.source_name, r.entity_id]));
    t.equal(byName.size, 450, 'one created event per new series');
    let ok = 0;
    for (let i = 0; i < streams.length; i++) {
      const s = streams[i];
      if (s.name === 'clash' || s.name === 'state') continue;
      const rec = await catalogue.get(w[i].series_id);
      if (w[i].accepted && byName.get(`plant-7/${s.name}`) === w[i].series_id && rec?.sourceName === `plant-7/${s.name}` && rec.valueType === s.type
        && svc.service.context.parts.storage.meta(w[i].series_id)?.type === s.type) ok++;
    }
    t.equal(ok, 450, 'every new stream is accepted with its own series of its declared type, in the model and in the engine');
  });

  t.test('a failing declaration is refused with its reason; the others are not lost', async (t) => {
    t.same([w[100].accepted, w[100].series_id], [false, ''], 'the type conflict is refused');
    t.match(w[100].refusal, /plant-7\/clash exists with value type int64, not float64/);
    t.equal(w[300].accepted, false);
    t.match(w[300].refusal, /no-such-set/);
    t.equal(w.filter((s) => s.accepted).length, 450);
    const out = await c.send('LIVE', 101, streams[101].type, floatBatch(T0, 3) as never);
    t.ok(out.ok, 'a stream declared after the refused one takes points');
    t.equal(readAll(svc, w[101].series_id).length, 3);
    t.equal((await catalogue.get(clash.id))?.valueType, 'int64', 'the existing series is untouched');
  });

  t.test('a reconnect with the same streams creates nothing and finds the same series', async (t) => {
    c.close();
    const mark = await lastTx(db);
    const again = await connect(svc, { collectorId: 'plant-7', epoch: 2n, streams });
    t.teardown(() => again.close());
    t.same(again.welcome.streams.map((s) => [s.accepted, s.series_id]), w.map((s) => [s.accepted, s.series_id]), 'same outcome, same series');
    t.equal(again.welcome.streams[101].last_durable_ns, String(T0 + 2_000_000_000n), 'the welcome carries the last durable point');
    t.equal(await lastTx(db), mark, 'no model transaction');
  });
});
