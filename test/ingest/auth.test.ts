import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { connect, floatBatch, T0 } from '../helpers/ingest.js';
import { modelTransaction } from '../../src/model/tx-log.js';
import { createServiceIdentity } from '../../src/auth/principals.js';
import { mintToken } from '../../src/auth/service-tokens.js';
import type { Db } from '../../src/model/db.js';

async function identityWithToken(db: Db, name: string, kind: string): Promise<string> {
  const r = await modelTransaction(db, { principal: 'test' }, async (tx, txId, events) => {
    const p = await createServiceIdentity(tx, txId, events, { name, kind });
    return (await mintToken(tx, txId, events, { principalId: p.principal_id, comment: 'test', expiresNs: null })).plaintext;
  });
  return r.result;
}

t.test('collector authentication with bearer service tokens (enforced posture)', async (t) => {
  const svc = await startTestService(t, { env: { SERVICE_AUTH_MODE: 'enforced', SERVICE_ADMIN_PASSWORD: 'correct horse battery staple' } });
  const db = svc.service.context.db;
  const token = await identityWithToken(db, 'line-4', 'collector');
  const integration = await identityWithToken(db, 'etl', 'integration');
  const streams = [{ name: 'p', type: 'float64' as const }];

  t.test('no token is UNAUTHENTICATED', async (t) => {
    await t.rejects(connect(svc, { collectorId: 'line-4', streams }), { code: 16 });
  });
  t.test('an unknown token is UNAUTHENTICATED', async (t) => {
    await t.rejects(connect(svc, { collectorId: 'line-4', streams, token: `svc_${'0'.repeat(32)}_${'A'.repeat(43)}` }), { code: 16 });
  });
  t.test('a collector token used for another collector_id is PERMISSION_DENIED', async (t) => {
    await t.rejects(connect(svc, { collectorId: 'line-5', streams, token }), { code: 7 });
  });
  t.test('a token of an integration identity is PERMISSION_DENIED', async (t) => {
    await t.rejects(connect(svc, { collectorId: 'etl', streams, token: integration }), { code: 7 });
  });
  t.test('the collector\'s own token opens the session and writes', async (t) => {
    const c = await connect(svc, { collectorId: 'line-4', streams, token });
    t.teardown(() => c.close());
    t.ok((await c.send('LIVE', 0, 'float64', floatBatch(T0, 10))).ok);
  });
});
