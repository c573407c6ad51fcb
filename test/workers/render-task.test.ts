import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { renderSeries, type SignificantPoints } from '../../src/storage/series-store.js';

const BASE = 1_700_000_000_000_000_000n;
const MS = 1_000_000n;

t.test('the render body through the read pool carries the engine\'s times and values exactly, whole and fractional milliseconds alike', async (t) => {
  const svc = await startTestService(t);
  const parts = svc.service.context.parts;
  const who = { principal: 'tester' };
  const s = await parts.series.create({ sourceName: 'render/times', valueType: 'float64' }, who);
  // Whole milliseconds (the common grid) with a few fractional times and negative values among them.
  const n = 20_000;
  const times = new BigInt64Array(n), values = new Float64Array(n), quality = new Uint32Array(n).fill(192);
  for (let i = 0; i < n; i++) {
    times[i] = BASE + BigInt(i) * 7n * MS + (i % 997 === 0 ? 123_456n : 0n);
    values[i] = Math.round(1000 * Math.sin(i / 300)) / 10;
  }
  await parts.storage.write([{ series: s.id, times, values, quality }], who);
  const startNs = BASE - 5n * MS, endNs = BASE + BigInt(n) * 7n * MS;
  for (const width of [1, 37, 1000, 5000]) {
    const out = await parts.readPool.run('render', { series: s.id, startNs: String(startNs), endNs: String(endNs), width, mode: 'significant-points', stat: null, continuity: 'continuous', format: 'json' });
    const body = JSON.parse(Buffer.from(out.bytes).toString('utf8')) as { t_ms: number[]; v: number[] };
    out.release();
    const r = parts.storage.read((v) => renderSeries(v, s.id, { startNs, endNs, width, mode: 'significant-points' })) as SignificantPoints;
    t.same(body.t_ms, Array.from(r.tMs), `width ${width}: every t_ms is the engine's double`);
    t.same(body.v, Array.from(r.v), `width ${width}: every value is the engine's`);
    t.ok(body.t_ms.some((x) => !Number.isInteger(x)) || width < 1000, `width ${width}: fractional times are among them`);
  }
});
