// An open head whose points all have one quality keeps its quality column as a view of one
// shared array of it (open-head.ts); a point of another quality gives it a column of its own.
// Whatever the heads do, each reads back the qualities it was given, and a head on its own
// column never shows through another head's.
import t from 'tap';
import { OpenHead } from '../../src/storage/open-head.js';
import { allocTimed, type TimedPoints } from '../../src/storage/point-runs.js';
import { EMPTY_RECORD, type StoredHead } from '../../src/storage/head-record.js';
import type { PointColumns } from '../../src/storage/encoding/chunk-types.js';

const T0 = 1_700_000_000_000_000_000n, SEC = 1_000_000_000n;

/** Points [from, to) at 1 s, value i, quality q(i). */
function run(from: number, to: number, q: (i: number) => number): TimedPoints {
  const p = allocTimed('float64', to - from);
  for (let i = from; i < to; i++) {
    p.ts[i - from] = T0 + BigInt(i) * SEC;
    p.f64![i - from] = i;
    p.quality[i - from] = q(i);
  }
  p.count = to - from;
  return p;
}

/** Two float64 points at T0 and T0 + 1 s with these qualities. */
function two(q0: number, q1: number): PointColumns {
  return { type: 'float64', count: 2, tsBase: T0, tsOffset: new Float64Array([0, 1e9]), f64: new Float64Array([1, 2]), i64: null, u8: null, ord: null, str: null, quality: new Uint32Array([q0, q1]) };
}

function qualities(h: OpenHead): number[] {
  return Array.from(h.cols.quality.subarray(0, h.count));
}

t.test('good points share the zeros; a bad point gets its head a column of its own', async (t) => {
  const good = new OpenHead('float64', null), mixed = new OpenHead('float64', null);
  good.append(run(0, 3000, () => 0), 0, 3000);
  mixed.append(run(0, 3000, () => 0), 0, 3000);
  t.equal(good.cols.quality.buffer, mixed.cols.quality.buffer, 'two all-good heads share one zero array');
  mixed.append(run(3000, 3010, (i) => (i === 3005 ? 192 : 0)), 0, 10);
  t.not(mixed.cols.quality.buffer, good.cols.quality.buffer, 'the head with a bad point has its own column');
  t.equal(mixed.cols.quality[3005], 192);
  t.equal(good.cols.quality[3005], 0, 'the shared zeros were not written');
  // growing past the first capacity keeps both right
  good.append(run(3000, 9000, () => 0), 0, 6000);
  mixed.append(run(3010, 9000, () => 0), 0, 5990);
  t.ok(qualities(good).every((q) => q === 0));
  t.same(qualities(mixed).flatMap((q, i) => (q === 0 ? [] : [[i, q]])), [[3005, 192]]);
  t.equal(good.cols.f64![8999], 8999);
});

t.test('dropping the front and replacing the head keep every point its quality', async (t) => {
  const h = new OpenHead('float64', null);
  h.append(run(0, 100, (i) => (i % 10 === 0 ? 64 : 0)), 0, 100);
  h.dropFront(95);
  t.same(qualities(h), [0, 0, 0, 0, 0], 'the bad points went with the front');
  h.dropFront(5);
  // back on all-good points: a resize may share the zeros again, and must stay right
  h.append(run(100, 10_000, () => 0), 0, 9900);
  t.ok(qualities(h).every((q) => q === 0));
  const other = new OpenHead('float64', null);
  other.append(run(0, 50, () => 0), 0, 50);
  h.replace(two(0, 7));
  t.same(qualities(h), [0, 7]);
  t.same(qualities(other).slice(0, 2), [0, 0], 'another head on the zeros still reads 0');
  h.replace(null);
  h.append(run(10, 20, () => 0), 0, 10);
  t.ok(qualities(h).every((q) => q === 0), 'a replaced head appended good points reads them good');
});

t.test('heads of good points (192) share a column; an emptied head takes the next quality', async (t) => {
  const a = new OpenHead('float64', null), b = new OpenHead('float64', null);
  a.append(run(0, 5000, () => 192), 0, 5000);
  b.append(run(0, 100, () => 192), 0, 100);
  t.equal(a.cols.quality.buffer, b.cols.quality.buffer);
  t.ok(qualities(a).every((q) => q === 192));
  b.dropFront(100);
  b.append(run(100, 200, () => 0), 0, 100);
  t.not(b.cols.quality.buffer, a.cols.quality.buffer, 'an emptied head of new quality leaves the 192 column');
  t.ok(qualities(b).every((q) => q === 0));
  b.append(run(200, 201, () => 192), 0, 1);
  t.equal(b.cols.quality[100], 192);
  t.equal(b.count, 101);
  t.ok(qualities(b).slice(0, 100).every((q) => q === 0));
  t.ok(qualities(a).every((q) => q === 192), 'the shared 192 column was not written');
  const loaded = new OpenHead('float64', { sealedEnd: null, lastWriteMs: 0, legacy: false, segments: [], storedBytes: 0, record: EMPTY_RECORD, cols: two(192, 192) });
  t.equal(loaded.cols.quality.buffer, a.cols.quality.buffer, 'a head loaded with good points shares too');
});

t.test('a head loaded with bad points keeps them', async (t) => {
  const stored: StoredHead = { sealedEnd: null, lastWriteMs: 0, legacy: false, segments: [], storedBytes: 0, record: EMPTY_RECORD, cols: two(0, 3) };
  const h = new OpenHead('float64', stored);
  t.same(qualities(h), [0, 3]);
  h.append(run(2, 4, () => 0), 0, 2);
  t.same(qualities(h), [0, 3, 0, 0]);
});
