// mTLS on the collector port: the verified client certificate's URI or DNS subject
// alternative name must name a service identity of kind `collector`, and the session's
// collector_id must be that name. Certificates are made with openssl for this test.
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { connect, floatBatch, readAll, T0 } from '../helpers/ingest.js';
import { makeTestPki } from '../helpers/tls.js';
import { modelTransaction } from '../../src/model/tx-log.js';
import { createServiceIdentity } from '../../src/auth/principals.js';
import type { Db } from '../../src/model/db.js';

async function identity(db: Db, name: string, kind: string): Promise<void> {
  await modelTransaction(db, { principal: 'test' }, (tx, txId, events) => createServiceIdentity(tx, txId, events, { name, kind }));
}

t.test('collector authentication with client certificates (mTLS, enforced posture)', async (t) => {
  const pki = await makeTestPki(t);
  const svc = await startTestService(t, { env: {
    SERVICE_AUTH_MODE: 'enforced', SERVICE_ADMIN_PASSWORD: 'correct horse battery staple',
    SERVICE_GRPC_TLS_CERT: pki.server.certFile, SERVICE_GRPC_TLS_KEY: pki.server.keyFile, SERVICE_GRPC_CLIENT_CA: pki.caFile,
  } });
  const db = svc.service.context.db;
  await identity(db, 'spiffe://plant/line-9', 'collector');
  await identity(db, 'press-3.collectors.plant', 'collector');
  await identity(db, 'etl.plant', 'integration');
  const uriCert = await pki.client('line-9', ['URI:spiffe://plant/line-9']);
  const dnsCert = await pki.client('press-3', ['DNS:press-3.collectors.plant']);
  const strangerCert = await pki.client('stranger', ['URI:spiffe://plant/nobody', 'DNS:nobody.plant']);
  const integrationCert = await pki.client('etl', ['DNS:etl.plant']);
  const streams = [{ name: 'p', type: 'float64' as const }];
  const tls = (c: { cert: Buffer; key: Buffer } | null) => ({ caPem: pki.ca, certPem: c?.cert, keyPem: c?.key, serverName: 'localhost' });

  t.test('a certificate whose URI SAN names the collector identity opens the session and writes', async (t) => {
    const c = await connect(svc, { collectorId: 'spiffe://plant/line-9', streams, tls: tls(uriCert) });
    t.teardown(() => c.close());
    t.ok(c.welcome.streams[0].accepted);
    t.ok((await c.send('LIVE', 0, 'float64', floatBatch(T0, 10))).ok, 'acknowledged over mTLS');
    t.equal(readAll(svc, c.welcome.streams[0].series_id).length, 10);
  });

  t.test('a certificate whose DNS SAN names the collector identity is accepted too', async (t) => {
    const c = await connect(svc, { collectorId: 'press-3.collectors.plant', streams, tls: tls(dnsCert) });
    t.teardown(() => c.close());
    t.ok((await c.send('LIVE', 0, 'float64', floatBatch(T0, 3))).ok);
  });

  t.test('a certificate of one collector used for another collector_id is PERMISSION_DENIED', async (t) => {
    await t.rejects(connect(svc, { collectorId: 'press-3.collectors.plant', streams, tls: tls(uriCert) }), { code: 7, message: /spiffe:\/\/plant\/line-9/ });
  });

  t.test('a certificate from the right CA whose SANs name no identity is PERMISSION_DENIED', async (t) => {
    await t.rejects(connect(svc, { collectorId: 'spiffe://plant/nobody', streams, tls: tls(strangerCert) }), { code: 7 });
  });

  t.test('a SAN naming an identity of kind integration is PERMISSION_DENIED', async (t) => {
    await t.rejects(connect(svc, { collectorId: 'etl.plant', streams, tls: tls(integrationCert) }), { code: 7 });
  });

  t.test('no client certificate fails the TLS handshake: UNAVAILABLE', async (t) => {
    await t.rejects(connect(svc, { collectorId: 'spiffe://plant/line-9', streams, tls: tls(null) }), { code: 14 });
  });

  t.test('a client certificate from another CA fails the handshake: UNAVAILABLE', async (t) => {
    const other = await makeTestPki(t);
    const foreign = await other.client('line-9', ['URI:spiffe://plant/line-9']);
    await t.rejects(connect(svc, { collectorId: 'spiffe://plant/line-9', streams, tls: tls(foreign) }), { code: 14 });
  });
});
