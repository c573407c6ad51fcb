// An open head's columns grow by a quarter or by four commits of the growing batch's size,
// whichever is more, and never past what it holds before it seals (open-head.ts
// ensureCapacity): a bulk load's heads of ~9,900 points used to sit in ~14,400-point columns
// (issue 33, resident memory), and growing by a quarter alone copied them 5 times on the way.
import t from 'tap';
import { OpenHead } from '../../src/storage/open-head.js';
import { allocTimed, type TimedPoints } from '../../src/storage/point-runs.js';

const T0 = 1_700_000_000_000_000_000n, SEC = 1_000_000_000n;

function run(from: number, to: number): TimedPoints {
  const p = allocTimed('float64', to - from);
  for (let i = from; i < to; i++) { p.ts[i - from] = T0 + BigInt(i) * SEC; p.f64![i - from] = i; p.quality[i - from] = 192; }
  p.count = to - from;
  return p;
}

t.test('a head filled 1,000 points a commit holds at most four commits more room than points, grown twice', async (t) => {
  const fullAt = 13_400, h = new OpenHead('float64', null);
  const capacities = new Set<number>();
  for (let at = 0; at < 9_920; at += 1000) {
    const to = Math.min(at + 1000, 9_920);
    h.append(run(at, to), 0, to - at, fullAt);
    t.ok(h.capacity <= Math.max(4096, 1.25 * h.count, h.count + 4 * 1000), `${h.count} points in ${h.capacity}`);
    capacities.add(h.capacity);
  }
  t.same([...capacities], [5_000, 10_000], 'two sizes on the way (a quarter at a time took 4,096, 5,120, 6,400, 8,000 and 10,000)');
  t.equal(h.count, 9_920);
  t.equal(h.cols.f64![9_919], 9_919, 'every point kept through the resizes');
  t.equal(h.lastTs(), T0 + 9_919n * SEC);
});

t.test('a head near its seal takes room for the last batch only', async (t) => {
  const fullAt = 8_500, h = new OpenHead('float64', null);
  for (let at = 0; at < 5_000; at += 1000) h.append(run(at, at + 1000), 0, 1000, fullAt);
  t.equal(h.capacity, 5_000);
  h.append(run(5_000, 6_000), 0, 1000, fullAt);
  t.equal(h.capacity, 9_500, 'fullAt and one more batch of this size, not four more batches (10,000)');
  for (let at = 6_000; at < 9_500; at += 500) h.append(run(at, at + 500), 0, 500, fullAt);
  t.equal(h.capacity, 9_500, 'the batch after full fits without a resize');
  t.equal(h.cols.f64![9_499], 9_499);
});
