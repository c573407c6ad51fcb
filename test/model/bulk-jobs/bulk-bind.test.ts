import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestService, request } from '../../helpers/service.js';
import { modelTransaction } from '../../../src/model/tx-log.js';
import { insertSeriesRow } from '../../../src/series/records.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const def = (name: string) => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector',
  enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] });

t.test('model jobs: bulk bind of staging series by name pattern', async (t) => {
  const svc = await startTestService(t);
  const api = (path: string, method = 'GET', body?: unknown, headers?: Record<string, string>) => request(`${svc.url}${path}`, { method, body, headers });
  const ok = async (path: string, method = 'GET', body?: unknown) => {
    const r = await api(path, method, body);
    t.ok(r.status < 300, `${method} ${path} answers ${r.status}`);
    return r.json as Json;
  };
  const db = svc.service.context.db;
  const series = async (name: string) => {
    const id = randomUUID();
    await modelTransaction(db, { principal: 'test' }, (q, txId) => insertSeriesRow(q, txId, { id, sourceName: name, valueType: 'float64', enumSetId: null, writableClass: 'collector', createdNs: 1n }));
    return id;
  };
  const tpl = await ok('/v1/model/templates', 'POST', { name: 'Pump', attributes: [def('Temperature'), def('Speed')] });
  const plant = await ok('/v1/model/assets', 'POST', { name: 'Plant' });
  const assets: Json = {};
  for (const n of ['P-101', 'P-102']) {
    assets[n] = await ok('/v1/model/assets', 'POST', { name: n, parent: plant.asset_id, template_id: tpl.template_id });
    await ok(`/v1/model/assets/${assets[n].asset_id}/instantiate`, 'POST', {});
  }
  const s1 = await series('opc/P-101.Temperature');
  const s2 = await series('opc/P-101.Speed');
  const s3 = await series('opc/P-102.Temperature');
  const s4 = await series('opc/P-999.Temperature');
  await series('modbus/P-101.Speed');

  const params = { pattern: 'opc/{asset}.{attribute}', under: '/Plant', from_ns: 1700000000000000000n };
  const created = await api('/v1/model/jobs', 'POST', { kind: 'bulk-bind', params }, { 'idempotency-key': 'job-1' });
  t.equal(created.status, 200);
  const job = created.json as Json;

  t.test('a job is created in preview with the bindings it would make and what it skips', async (t) => {
    t.equal(job.state, 'preview');
    t.equal(job.kind, 'bulk-bind');
    t.equal(job.committed_ns, null);
    t.equal(job.error, null);
    t.equal(job.principal, 'local-administrator');
    t.equal(typeof job.job_id === 'number' || typeof job.job_id === 'bigint', true);
    t.same(job.preview.bindings.map((b: Json) => [b.series_id, b.path]), [[s2, '/Plant/P-101|Speed'], [s1, '/Plant/P-101|Temperature'], [s3, '/Plant/P-102|Temperature']]);
    t.same(job.preview.skipped, [{ series_id: s4, source_name: 'opc/P-999.Temperature', reason: 'no-asset' }]);
    t.equal(job.preview.from_ns, '1700000000000000000');
    const replay = await api('/v1/model/jobs', 'POST', { kind: 'bulk-bind', params }, { 'idempotency-key': 'job-1' });
    t.equal(replay.headers.get('x-service-idempotent-replay'), 'true');
    t.equal(String((replay.json as Json).job_id), String(job.job_id));
    const read = await api(`/v1/model/jobs/${job.job_id}`);
    t.same(read.json, job);
    const list = (await ok('/v1/model/jobs')).items as Json[];
    t.ok(list.some((j) => String(j.job_id) === String(job.job_id)));
  });

  t.test('bad kinds and params are 400 naming the field', async (t) => {
    const kind = await api('/v1/model/jobs', 'POST', { kind: 'bulk-delete' });
    t.equal(kind.status, 400);
    t.match((kind.json as Json).error, /kind/);
    const pattern = await api('/v1/model/jobs', 'POST', { kind: 'bulk-bind', params: { pattern: 'opc/{asset}' } });
    t.equal(pattern.status, 400);
    t.match((pattern.json as Json).error, /params\.pattern/);
    const under = await api('/v1/model/jobs', 'POST', { kind: 'bulk-bind', params: { pattern: '{asset}.{attribute}', under: '/Nowhere' } });
    t.equal(under.status, 400);
  });

  t.test('a job whose model moved is refused, and the model is unchanged', async (t) => {
    const other = (await ok('/v1/model/jobs', 'POST', { kind: 'bulk-bind', params: { pattern: 'opc/{asset}.{attribute}' } }));
    // Someone binds one of the planned attributes by hand: the preview no longer holds.
    const temp = { attribute_id: (job.preview.bindings as Json[]).find((b) => b.path === '/Plant/P-102|Temperature')!.attribute_id };
    await ok('/v1/model/bindings', 'POST', { attribute_id: temp.attribute_id, series_id: s3, from_ns: 0 });
    const r = await api(`/v1/model/jobs/${other.job_id}/commit`, 'POST');
    t.equal(r.status, 409);
    t.equal((r.json as Json).code, 'conflict');
    t.match((r.json as Json).details, { preview_tx: /^[0-9]+$/, current_tx: /^[0-9]+$/ });
    t.equal(((await ok(`/v1/model/jobs/${other.job_id}`)) as Json).state, 'preview');
    const b = (await ok(`/v1/model/attributes/${job.preview.bindings[0].attribute_id}/bindings`)).bindings as Json[];
    t.same(b, [], 'nothing of the refused job was applied');
    // Unbind again, so the first job's preview holds once more.
    await ok('/v1/model/bindings', 'POST', { attribute_id: temp.attribute_id, series_id: null, from_ns: 1 });
  });

  t.test('a commit applies exactly the preview in one transaction', async (t) => {
    const moved = await api(`/v1/model/jobs/${job.job_id}/commit`, 'POST');
    t.equal(moved.status, 409, 'the unbinding left history behind: P-102 Temperature is no longer a staging series');
    const fresh = await ok('/v1/model/jobs', 'POST', { kind: 'bulk-bind', params });
    t.same(fresh.preview.bindings.map((b: Json) => b.series_id), [s2, s1]);
    const r = await api(`/v1/model/jobs/${fresh.job_id}/commit`, 'POST');
    t.equal(r.status, 200);
    const done = r.json as Json;
    t.equal(done.state, 'committed');
    t.ok(BigInt(done.committed_ns) > 0n);
    const txs = (await ok(`/v1/model/events?since_tx=0&limit=1000`)) as unknown as Json[];
    const mine = txs.filter((x) => x.reason === `model job ${fresh.job_id}`);
    t.equal(mine.length, 1, 'one model transaction');
    t.same(mine[0].events.map((e: Json) => [e.entity_kind, e.action, e.details.series_id]), [['binding', 'created', s2], ['binding', 'created', s1]]);
    for (const b of fresh.preview.bindings as Json[]) {
      const h = (await ok(`/v1/model/attributes/${b.attribute_id}/bindings`)).bindings as Json[];
      t.match(h, [{ series_id: b.series_id, from_ns: 1700000000000000000n, to_ns: null }]);
    }
    const again = await api(`/v1/model/jobs/${fresh.job_id}/commit`, 'POST');
    t.equal(again.status, 409);
    t.same((again.json as Json).details, { state: 'committed' });
    t.equal((await api('/v1/model/jobs/999999/commit', 'POST')).status, 404);
  });
});
