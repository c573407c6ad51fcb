import t from 'tap';
import { startTestService, request } from '../../helpers/service.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const def = (name: string, overridable: string[] = []) => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector',
  enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable });

t.test('model jobs: template propagation of a new template version', async (t) => {
  const svc = await startTestService(t);
  const api = (path: string, method = 'GET', body?: unknown, headers?: Record<string, string>) => request(`${svc.url}${path}`, { method, body, headers });
  const ok = async (path: string, method = 'GET', body?: unknown) => {
    const r = await api(path, method, body);
    t.ok(r.status < 300, `${method} ${path} answers ${r.status}`);
    return r.json as Json;
  };
  const attrsOf = async (assetId: string) => {
    const r = await ok('/v1/model/resolve', 'POST', { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: assetId } }, include_retired: true });
    return Object.fromEntries((r.results as Json[]).map((a) => [a.name as string, a])) as Record<string, Json>;
  };
  const v1 = [def('Flow'), def('Speed', ['continuity_class']), def('Temp')];
  const tpl = await ok('/v1/model/templates', 'POST', { name: 'Pump', attributes: v1 });
  const plant = await ok('/v1/model/assets', 'POST', { name: 'Plant' });
  const p1 = await ok('/v1/model/assets', 'POST', { name: 'P-1', parent: plant.asset_id, template_id: tpl.template_id });
  const p2 = await ok('/v1/model/assets', 'POST', { name: 'P-2', parent: plant.asset_id, template_id: tpl.template_id });
  for (const a of [p1, p2]) await ok(`/v1/model/assets/${a.asset_id}/instantiate`, 'POST', {});
  const speed1 = (await attrsOf(p1.asset_id))['Speed'];
  await ok(`/v1/model/attributes/${speed1.attribute_id}`, 'PATCH', { overrides: { continuity_class: 'stepped' } });
  const ownLevel = await ok('/v1/model/attributes', 'POST', { asset_id: p2.asset_id, definition: def('Level') });
  // Version 2: Temp removed, Level added, Speed's text changed.
  await ok(`/v1/model/templates/${tpl.template_id}`, 'PATCH', { name: 'Pump', attributes: [def('Flow'), { ...def('Speed', ['continuity_class']), writer_class: 'manual' }, def('Level')] });
  const temp1 = (await attrsOf(p1.asset_id))['Temp'];
  const temp2 = (await attrsOf(p2.asset_id))['Temp'];

  const params = { template_id: tpl.template_id, under: '/Plant' };
  const created = await api('/v1/model/jobs', 'POST', { kind: 'template-propagate', params }, { 'idempotency-key': 'prop-1' });
  t.equal(created.status, 200);
  const job = created.json as Json;

  t.test('the preview adds missing attributes, retires removed ones, lists kept overrides and skips taken names', async (t) => {
    const v = job.preview;
    t.equal(v.template_version, 2);
    t.equal(v.unchanged_assets, 0);
    const byAsset = new Map<string, Json>((v.assets as Json[]).map((a) => [a.asset_id, a]));
    t.same(byAsset.get(p1.asset_id)!.add.map((x: Json) => x.name), ['Level']);
    t.same(byAsset.get(p1.asset_id)!.retire.map((x: Json) => x.attribute_id), [temp1.attribute_id]);
    t.same(byAsset.get(p2.asset_id)!.add, []);
    t.same(byAsset.get(p2.asset_id)!.retire.map((x: Json) => x.attribute_id), [temp2.attribute_id]);
    t.same(v.skipped.map((s: Json) => [s.asset_id, s.name, s.reason]), [[p2.asset_id, 'Level', 'name-taken']]);
    t.same(v.overrides_kept, [{ attribute_id: speed1.attribute_id, path: '/Plant/P-1|Speed', fields: ['continuity_class'] }]);
    const replay = await api('/v1/model/jobs', 'POST', { kind: 'template-propagate', params }, { 'idempotency-key': 'prop-1' });
    t.equal(replay.headers.get('x-service-idempotent-replay'), 'true');
    t.same(replay.json, job);
    const bad = await api('/v1/model/jobs', 'POST', { kind: 'template-propagate', params: { template_id: tpl.template_id, under: 'Plant' } });
    t.equal(bad.status, 400);
    t.match((bad.json as Json).error, /params\.under/);
  });

  t.test('a commit applies the preview in one transaction and leaves overrides alone', async (t) => {
    const speedBefore = (await attrsOf(p1.asset_id))['Speed'];
    const r = await api(`/v1/model/jobs/${job.job_id}/commit`, 'POST');
    t.equal(r.status, 200);
    t.equal((r.json as Json).state, 'committed');
    const txs = (await ok('/v1/model/events?since_tx=0&limit=1000')) as unknown as Json[];
    const mine = txs.filter((x) => x.reason === `model job ${job.job_id}`);
    t.equal(mine.length, 1, 'one model transaction');
    t.equal(mine[0].events.length, 3, 'one attribute added, two retired');
    const a1 = await attrsOf(p1.asset_id);
    const planned = job.preview.assets.find((a: Json) => a.asset_id === p1.asset_id).add[0];
    t.equal(a1['Level'].attribute_id, planned.attribute_id, 'the attribute has the id the preview showed');
    t.equal(a1['Temp'].retired, true);
    t.match(a1['Speed'], { continuity_class: 'stepped', writer_class: 'manual', overridden_fields: ['continuity_class'], tx_id: speedBefore.tx_id }, 'the overridden attribute was not written');
    const a2 = await attrsOf(p2.asset_id);
    t.equal(a2['Level'].attribute_id, ownLevel.attribute_id, 'the asset\'s own Level attribute is untouched');
    t.equal(a2['Temp'].retired, true);
  });

  t.test('a propagation whose model moved is refused, and one with nothing left to do previews empty', async (t) => {
    const next = await ok('/v1/model/jobs', 'POST', { kind: 'template-propagate', params });
    t.same(next.preview.assets, [], 'nothing left to propagate');
    t.equal(next.preview.unchanged_assets, 2);
    await ok(`/v1/model/templates/${tpl.template_id}`, 'PATCH', { name: 'Pump', attributes: [def('Flow'), def('Speed', ['continuity_class']), def('Level'), def('Vibration')] });
    const stale = await api(`/v1/model/jobs/${next.job_id}/commit`, 'POST');
    t.equal(stale.status, 409);
    t.equal((stale.json as Json).code, 'conflict');
    t.equal((await ok(`/v1/model/jobs/${next.job_id}`)).state, 'preview');
    t.notOk('Vibration' in (await attrsOf(p1.asset_id)), 'nothing applied');
  });
});
