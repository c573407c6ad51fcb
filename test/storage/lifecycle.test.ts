import t from 'tap';
import { listChunks, readRaw, readRollups } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const DAY = 86_400n * SEC;
const all = { startNs: T0 - 100n * DAY, endNs: T0 + 100n * DAY };
const base = { schema: 'service-lifecycle-policy/v1', rollups: { keep: 'forever' }, annotations: { keep: '30d' } };

t.test('enforcement drops raw chunks past keep_days and keeps the rollups when then=rollups', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const times = Array.from({ length: 1000 }, (_, i) => T0 + BigInt(i) * 600n * SEC); // ~7 days at 10 min
  await store.write([f64Batch(id, times, times.map((_, i) => i))], WHO);
  const v1 = await store.setLifecyclePolicy(id, { ...base, raw: { keep_days: 3, then: 'rollups' } });
  t.equal(v1.version, 1n);
  const v2 = await store.setLifecyclePolicy(id, { ...base, raw: { keep_days: 3, then: 'rollups' } }, 1n);
  t.equal(v2.version, 2n);
  await t.rejects(store.setLifecyclePolicy(id, { ...base, raw: { keep: 'forever' } }, 1n), { code: 'conflict' });
  const rollupsBefore = store.read((v) => readRollups(v, id, { interval: '1h', ...all, continuity: 'stepped' })).count;
  const now = T0 + 7n * DAY;
  const report = await store.enforceLifecycle(now);
  t.ok(report.chunksDropped > 0);
  const cutoff = now - 3n * DAY;
  const page = store.read((v) => readRaw(v, id, { ...all, limit: 10_000 }));
  t.equal(page.count, 1000 - report.pointsDropped);
  t.ok(store.read((v) => listChunks(v, id, all)).every((c) => c.endNs >= cutoff), 'no chunk ends before the cutoff');
  t.equal(store.read((v) => readRollups(v, id, { interval: '1h', ...all, continuity: 'stepped' })).count, rollupsBefore, 'rollups kept');
  t.equal(report.series[0].annotationsCutoffNs, now - 30n * DAY);
  await store.setLifecyclePolicy(id, { ...base, raw: { keep_days: 3, then: 'delete' } });
  const r2 = await store.enforceLifecycle(now);
  t.ok(r2.rollupsDropped > 0, 'then=delete trims rollups too');
});

t.test('swinging-door compression at seal time keeps every dropped point within the classic bound (2x deviation) of the stored line and records the lossy range', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 500 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.setLifecyclePolicy(id, { ...base, raw: { keep: 'forever' }, swinging_door: { maxdev_percent_of_range: 1, range_min: 0, range_max: 100 } });
  const n = 1000;
  const times = Array.from({ length: n }, (_, i) => T0 + BigInt(i) * SEC);
  const vals = times.map((_, i) => (i < 500 ? i * 0.01 : 5 + Math.sin(i / 20) * 10));
  await store.write([f64Batch(id, times, vals)], WHO);
  await store.sealHeads();
  const page = store.read((v) => readRaw(v, id, { ...all, limit: 10_000 }));
  t.ok(page.count < n / 2, `kept ${page.count} of ${n}`);
  // classic SDT: a line within the deviation exists from the archived point; the stored line to the
  // next archived point can stray up to twice the deviation
  let worst = 0;
  for (let k = 1; k < page.count; k++) {
    const a = Number(page.ts[k - 1] - T0) / 1e9, b = Number(page.ts[k] - T0) / 1e9;
    for (let i = a + 1; i < b; i++) {
      const line = page.f64![k - 1] + ((page.f64![k] - page.f64![k - 1]) * (i - a)) / (b - a);
      worst = Math.max(worst, Math.abs(line - vals[i]));
    }
  }
  t.ok(worst <= 2 + 1e-9, `worst deviation ${worst}`);
  const lossy = store.meta(id)!.lossyRanges;
  t.same(lossy, [
    { startNs: T0, endNs: T0 + 499n * SEC, tag: 'swinging-door' },
    { startNs: T0 + 500n * SEC, endNs: T0 + BigInt(n - 1) * SEC, tag: 'swinging-door' },
  ], 'one lossy range per sealed run');
});

t.test('invalid lifecycle policies are refused naming the field', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await t.rejects(store.setLifecyclePolicy(id, { ...base, schema: 'x', raw: { keep: 'forever' } }), { code: 'invalid-request', message: /policy.schema/ });
  await t.rejects(store.setLifecyclePolicy(id, { ...base, raw: { keep_days: -1, then: 'rollups' } }), { message: /keep_days/ });
  await t.rejects(store.setLifecyclePolicy(id, { ...base, raw: { keep_days: 1, then: 'archive' } }), { message: /then/ });
  await t.rejects(store.setLifecyclePolicy(id, { ...base, raw: { keep: 'forever' }, swinging_door: { maxdev_percent_of_range: 1, range_min: 5, range_max: 5 } }), { message: /range_max/ });
  await t.rejects(store.setLifecyclePolicy(newId(), { ...base, raw: { keep: 'forever' } }), { code: 'not-found' });
});
