// An open head's columns grow by a quarter at a time and never past what it holds before it
// seals (open-head.ts ensureCapacity): a bulk load's heads of ~9,900 points used to sit in
// ~14,400-point columns (issue 33, resident memory).
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

t.test('a head filled 1,000 points a commit holds at most a quarter more room than points', async (t) => {
  const fullAt = 13_400, h = new OpenHead('float64', null);
  for (let at = 0; at < 9_920; at += 1000) {
    const to = Math.min(at + 1000, 9_920);
    h.append(run(at, to), 0, to - at, fullAt);
    t.ok(h.capacity <= Math.max(4096, 1.25 * h.count + 1000), `${h.count} points in ${h.capacity}`);
  }
  t.equal(h.count, 9_920);
  t.equal(h.cols.f64![9_919], 9_919, 'every point kept through the resizes');
  t.equal(h.lastTs(), T0 + 9_919n * SEC);
});

t.test('a head near its seal takes room for the last batch only', async (t) => {
  const fullAt = 4_500, h = new OpenHead('float64', null);
  for (let at = 0; at < 4_000; at += 1000) h.append(run(at, at + 1000), 0, 1000, fullAt);
  t.equal(h.capacity, 4096);
  h.append(run(4_000, 4_500), 0, 500, fullAt);
  t.equal(h.capacity, 5_000, 'fullAt and one more batch of this size, not a quarter more (5,120)');
  h.append(run(4_500, 5_000), 0, 500, fullAt);
  t.equal(h.capacity, 5_000, 'the batch after full fits without a resize');
  t.equal(h.cols.f64![4_999], 4_999);
});
