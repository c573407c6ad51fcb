import t from 'tap';
import { startTestService, request } from '../../helpers/service.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const def = (name: string) => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector',
  enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] });

t.test('model jobs: bulk instantiate of a template under parents', async (t) => {
  const svc = await startTestService(t);
  const api = (path: string, method = 'GET', body?: unknown, headers?: Record<string, string>) => request(`${svc.url}${path}`, { method, body, headers });
  const ok = async (path: string, method = 'GET', body?: unknown) => {
    const r = await api(path, method, body);
    t.ok(r.status < 300, `${method} ${path} answers ${r.status}`);
    return r.json as Json;
  };
  const pump = await ok('/v1/model/templates', 'POST', { name: 'Pump', attributes: [def('Flow'), def('Speed')] });
  const valve = await ok('/v1/model/templates', 'POST', { name: 'Valve', attributes: [def('Position')] });
  const skid = await ok('/v1/model/templates', 'POST', { name: 'Skid', permitted_children: [valve.template_id] });
  const plant = await ok('/v1/model/assets', 'POST', { name: 'Plant' });
  const area = await ok('/v1/model/assets', 'POST', { name: 'Area 1', parent: plant.asset_id });
  await ok('/v1/model/assets', 'POST', { name: 'P-100', parent: area.asset_id });
  const skidAsset = await ok('/v1/model/assets', 'POST', { name: 'Skid 1', parent: plant.asset_id, template_id: skid.template_id });

  const params = {
    template_id: pump.template_id,
    assets: [
      { parent: '/Plant/Area 1', name: 'P-101' },
      { parent: area.asset_id, name: 'P-102' },
      { parent: '/Plant/Area 1', name: 'P-100' },
      { parent: '/Plant/Area 1', name: 'P-101' },
      { parent: '/Plant/Nowhere', name: 'P-103' },
      { parent: skidAsset.asset_id, name: 'P-104' },
    ],
  };
  const created = await api('/v1/model/jobs', 'POST', { kind: 'bulk-instantiate', params }, { 'idempotency-key': 'inst-1' });
  t.equal(created.status, 200);
  const job = created.json as Json;

  t.test('the preview lists the assets and attributes it will create, with their ids, and what it skips', async (t) => {
    t.equal(job.state, 'preview');
    t.equal(job.kind, 'bulk-instantiate');
    const v = job.preview;
    t.equal(v.template_id, pump.template_id);
    t.equal(v.template_version, 1);
    t.same(v.assets.map((a: Json) => [a.path, a.parent_id, a.attributes.map((x: Json) => x.name)]),
      [['/Plant/Area 1/P-101', area.asset_id, ['Flow', 'Speed']], ['/Plant/Area 1/P-102', area.asset_id, ['Flow', 'Speed']]]);
    t.match(v.assets[0].asset_id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    t.same(v.skipped.map((s: Json) => [s.index, s.reason]), [[2, 'name-taken'], [3, 'duplicate-in-job'], [4, 'no-parent'], [5, 'not-permitted']]);
    const replay = await api('/v1/model/jobs', 'POST', { kind: 'bulk-instantiate', params }, { 'idempotency-key': 'inst-1' });
    t.equal(replay.headers.get('x-service-idempotent-replay'), 'true');
    t.same(replay.json, job, 'the replay answers the same job, preview included');
    t.equal((await api('/v1/model/jobs', 'POST', { kind: 'bulk-instantiate', params: { ...params, assets: [] } }, { 'idempotency-key': 'inst-1' })).status, 409);
  });

  t.test('bad params are 400 naming the field', async (t) => {
    const cases: Array<[unknown, RegExp]> = [
      [{ template_id: 'nope', assets: [{ parent: null, name: 'X' }] }, /params\.template_id/],
      [{ template_id: pump.template_id, assets: [] }, /params\.assets/],
      [{ template_id: pump.template_id, assets: [{ parent: 'Plant', name: 'X' }] }, /params\.assets\[0\]\.parent/],
      [{ template_id: pump.template_id, assets: [{ parent: null, name: 'a/b' }] }, /params\.assets\[0\]\.name/],
      [{ template_id: pump.template_id, assets: [{ parent: null, name: 'X', extra: 1 }] }, /params\.assets\[0\]\.extra/],
      [{ template_id: '00000000-0000-4000-8000-000000000000', assets: [{ parent: null, name: 'X' }] }, /params\.template_id/],
    ];
    for (const [p, field] of cases) {
      const r = await api('/v1/model/jobs', 'POST', { kind: 'bulk-instantiate', params: p });
      t.equal(r.status, 400, JSON.stringify(p));
      t.match((r.json as Json).error, field);
    }
  });

  t.test('a job whose model moved is refused and applies nothing', async (t) => {
    const other = await ok('/v1/model/jobs', 'POST', { kind: 'bulk-instantiate', params: { template_id: pump.template_id, assets: [{ parent: '/Plant', name: 'P-200' }] } });
    await ok('/v1/model/assets', 'POST', { name: 'P-200', parent: plant.asset_id });
    const r = await api(`/v1/model/jobs/${other.job_id}/commit`, 'POST');
    t.equal(r.status, 409);
    t.equal((r.json as Json).code, 'conflict');
    t.match((r.json as Json).details, { preview_tx: /^[0-9]+$/, current_tx: /^[0-9]+$/ });
    t.equal((await ok(`/v1/model/jobs/${other.job_id}`)).state, 'preview');
    t.equal((await api(`/v1/model/assets/${other.preview.assets[0].asset_id}`)).status, 404, 'the planned asset was not created');
  });

  t.test('a commit creates exactly the previewed assets and attributes in one transaction', async (t) => {
    const r = await api(`/v1/model/jobs/${job.job_id}/commit`, 'POST');
    t.equal(r.status, 200);
    t.equal((r.json as Json).state, 'committed');
    const txs = (await ok('/v1/model/events?since_tx=0&limit=1000')) as unknown as Json[];
    const mine = txs.filter((x) => x.reason === `model job ${job.job_id}`);
    t.equal(mine.length, 1, 'one model transaction');
    t.same(mine[0].events.map((e: Json) => `${e.entity_kind}:${e.action}`), ['asset:created', 'attribute:created', 'attribute:created', 'asset:created', 'attribute:created', 'attribute:created']);
    for (const a of job.preview.assets as Json[]) {
      const asset = await ok(`/v1/model/assets/${a.asset_id}`);
      t.equal(asset.path, a.path);
      t.equal(asset.template_id, pump.template_id);
      for (const x of a.attributes as Json[]) {
        const attr = await ok(`/v1/model/attributes/${x.attribute_id}`);
        t.match(attr, { asset_id: a.asset_id, attr_def_id: x.attr_def_id, name: x.name });
      }
    }
    const tree = await ok('/v1/model/tree?depth=5');
    t.match(JSON.stringify(tree), /P-102/, 'the tree shows the new assets');
    const again = await api(`/v1/model/jobs/${job.job_id}/commit`, 'POST');
    t.equal(again.status, 409);
    t.same((again.json as Json).details, { state: 'committed' });
  });
});
