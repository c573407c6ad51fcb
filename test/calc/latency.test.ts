// The latency recorder's percentiles, over every sample kept and over those added after a
// mark (bench/calc.ts reports both), including after its ring of samples has wrapped.
import t from 'tap';
import { LatencyRecorder } from '../../src/calc/engine/latency.js';

t.test('percentiles over all samples and over those after a mark', async (t) => {
  const r = new LatencyRecorder();
  t.same(r.percentiles([50]), [null]);
  for (let i = 1; i <= 100; i++) r.add(1000 + i); // a slow start
  const mark = r.count;
  for (let i = 1; i <= 100; i++) r.add(i);
  t.equal(r.count, 200);
  t.same(r.percentiles([0, 50, 100]), [1, 1001, 1100]);
  t.same(r.percentiles([0, 50, 99, 100], mark), [1, 51, 100, 100]);
  t.same(r.percentiles([50], r.count), [null], 'nothing after a mark taken last');
});

t.test('a mark older than the samples kept counts from the oldest kept', async (t) => {
  const r = new LatencyRecorder();
  const kept = 200_000;
  for (let i = 0; i < kept; i++) r.add(5000);
  const mark = r.count;
  for (let i = 0; i < kept / 2; i++) r.add(1); // wraps: half the kept samples replaced
  t.same(r.percentiles([0, 100], mark), [1, 1]);
  t.same(r.percentiles([0, 49, 51, 100], 0), [1, 1, 5000, 5000], 'since 0: the newest 200,000');
});
