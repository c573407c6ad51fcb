import t from 'tap';
import fc from 'fast-check';
import {
  decodeChunk, decodeNumericInto, decodeTimesOnly, encodeChunk, readChunkHeader, readInt64Extremes, chunkTimeRange,
} from '../../../src/storage/encoding/chunk.js';
import type { PointColumns, ValueType } from '../../../src/storage/encoding/chunk-types.js';
import { createPointColumns } from '../../../src/storage/encoding/point-columns.js';
import { noiseRunArb, type PointRun, pointRunArb, timeAt, toColumns } from '../../helpers/chunk-arbitraries.js';

const SEED = Number(process.env.FC_SEED ?? 20261121);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);
const TYPES: ValueType[] = ['float64', 'int64', 'boolean', 'enum', 'string'];
const bitsOf = (x: number): bigint => new BigUint64Array(new Float64Array([x]).buffer)[0];

/** Throws with the first point that differs, so a shrunk counterexample says where. */
function assertSamePoints(a: PointColumns, b: PointColumns): void {
  if (a.count !== b.count) throw new Error(`count ${b.count} != ${a.count}`);
  for (let i = 0; i < a.count; i++) {
    if (timeAt(a, i) !== timeAt(b, i)) throw new Error(`time ${i}: ${timeAt(b, i)} != ${timeAt(a, i)}`);
    if (a.quality[i] !== b.quality[i]) throw new Error(`quality ${i}: ${b.quality[i]} != ${a.quality[i]}`);
    let same: boolean;
    switch (a.type) {
      case 'float64': same = bitsOf(a.f64![i]) === bitsOf(b.f64![i]); break;
      case 'int64': same = a.i64![i] === b.i64![i]; break;
      case 'boolean': same = a.u8![i] === b.u8![i]; break;
      case 'enum': same = a.ord![i] === b.ord![i]; break;
      case 'string': same = a.str![i] === b.str![i]; break;
    }
    if (!same) throw new Error(`value ${i} differs`);
  }
}

/** Numeric view of point i as the header states it. */
function numericAt(c: PointColumns, i: number): number {
  switch (c.type) {
    case 'float64': return c.f64![i];
    case 'int64': return Number(c.i64![i]);
    case 'boolean': return c.u8![i];
    case 'enum': return c.ord![i];
    case 'string': return NaN;
  }
}

function assertHeaderAgrees(bytes: Uint8Array, c: PointColumns): void {
  const h = readChunkHeader(bytes);
  const n = c.count;
  const expect = (what: string, got: unknown, want: unknown) => {
    if (!Object.is(got, want)) throw new Error(`header ${what}: ${String(got)} != ${String(want)}`);
  };
  expect('formatVersion', h.formatVersion, 5);
  expect('type', h.type, c.type);
  expect('count', h.count, n);
  expect('byteLength', h.byteLength, bytes.length);
  expect('firstTs', h.firstTs, timeAt(c, 0));
  expect('lastTs', h.lastTs, timeAt(c, n - 1));
  const range = chunkTimeRange(bytes);
  expect('range.firstTs', range.firstTs, h.firstTs);
  expect('range.lastTs', range.lastTs, h.lastTs);
  let good = 0;
  let uncertain = 0;
  for (let i = 0; i < n; i++) {
    if (c.quality[i] >= 192) good++;
    else if (c.quality[i] >= 64) uncertain++;
  }
  expect('goodCount', h.goodCount, good);
  expect('uncertainCount', h.uncertainCount, uncertain);
  expect('badCount', h.badCount, n - good - uncertain);
  if (c.type === 'string') {
    for (const k of ['min', 'max', 'first', 'last'] as const) expect(k, h[k], NaN);
    expect('minTs', h.minTs, h.firstTs);
    expect('maxTs', h.maxTs, h.firstTs);
    return;
  }
  // First occurrence of the extreme, compared exactly (bigint for int64).
  const less = (i: number, j: number) => (c.type === 'int64' ? c.i64![i] < c.i64![j] : numericAt(c, i) < numericAt(c, j));
  let lo = 0;
  let hi = 0;
  for (let i = 1; i < n; i++) {
    if (less(i, lo)) lo = i;
    if (less(hi, i)) hi = i;
  }
  expect('min', h.min, numericAt(c, lo));
  expect('max', h.max, numericAt(c, hi));
  expect('minTs', h.minTs, timeAt(c, lo));
  expect('maxTs', h.maxTs, timeAt(c, hi));
  expect('first', h.first, numericAt(c, 0));
  expect('last', h.last, numericAt(c, n - 1));
  if (c.type === 'int64') {
    const x = readInt64Extremes(bytes);
    expect('exact min', x.min, c.i64![lo]);
    expect('exact max', x.max, c.i64![hi]);
    expect('exact first', x.first, c.i64![0]);
    expect('exact last', x.last, c.i64![n - 1]);
  }
}

/** Encodes a run, decodes it with every decoder and compares points and header; throws on any difference. */
function checkRun(run: PointRun, out: PointColumns, ts: Float64Array, f64: Float64Array): void {
  const type = run.type;
  const cols = toColumns(run);
  const bytes = encodeChunk(cols);
  out.tsOffset.fill(NaN);
  const n = decodeChunk(bytes, out);
  if (n !== cols.count) throw new Error(`decodeChunk returned ${n} for ${cols.count} points`);
  assertSamePoints(cols, out);
  assertHeaderAgrees(bytes, cols);
  // The partial decoders agree with the full one.
  if (decodeTimesOnly(bytes, ts) !== n) throw new Error('decodeTimesOnly count');
  for (let i = 0; i < n; i++) if (ts[i] !== out.tsOffset[i]) throw new Error(`decodeTimesOnly time ${i}`);
  if (type !== 'string') {
    if (decodeNumericInto(bytes, ts, f64) !== n) throw new Error('decodeNumericInto count');
    for (let i = 0; i < n; i++) {
      if (ts[i] !== out.tsOffset[i]) throw new Error(`decodeNumericInto time ${i}`);
      if (!Object.is(f64[i], numericAt(out, i))) throw new Error(`decodeNumericInto value ${i}: ${f64[i]} != ${numericAt(out, i)}`);
    }
  }
}

for (const type of TYPES) {
  t.test(`any run of ${type} points round-trips exactly and the header agrees with the points`, async (t) => {
    const out = createPointColumns(type, 1200);
    const ts = new Float64Array(1200);
    const f64 = new Float64Array(1200);
    let checked = 0;
    fc.assert(fc.property(pointRunArb(type), (run) => { checkRun(run, out, ts, f64); checked++; }), { seed: SEED, numRuns: 400 });
    t.equal(checked, 400, 'every generated run was encoded, decoded and compared');
  });
}

t.test('any run of float64 noise around zero (float split, exponents in RICE) round-trips exactly', async (t) => {
  const out = createPointColumns('float64', 1200);
  const ts = new Float64Array(1200);
  const f64 = new Float64Array(1200);
  let checked = 0;
  fc.assert(fc.property(noiseRunArb(), (run) => { checkRun(run, out, ts, f64); checked++; }), { seed: SEED, numRuns: 300 });
  t.equal(checked, 300, 'every generated run was encoded, decoded and compared');
});

t.test('decoding into unaligned bytes gives the same points as aligned bytes', async (t) => {
  const cols = toColumns({ type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: [1000, 1001, 999, 1000], values: [1.5, 2.25, -0, 1e-310, 7], quality: [192, 192, 0, 64, 192] });
  const bytes = encodeChunk(cols);
  const shifted = new Uint8Array(bytes.length + 3);
  shifted.set(bytes, 3);
  const out = createPointColumns('float64', 8);
  t.equal(decodeChunk(shifted.subarray(3), out), 5);
  assertSamePoints(cols, out);
  t.same([...out.f64!.subarray(0, 5)].map((x) => Object.is(x, -0) ? '-0' : x), [1.5, 2.25, '-0', 1e-310, 7]);
});

t.test('decoding overwrites the tsBase, type and count of the output columns', async (t) => {
  const cols = toColumns({ type: 'int64', firstTs: -5n, o0: 17, deltas: [3], values: [2n ** 63n - 1n, -(2n ** 63n)], quality: [192, 0] });
  const out = createPointColumns('int64', 4);
  out.tsBase = 99n;
  out.count = 4;
  decodeChunk(encodeChunk(cols), out);
  t.equal(out.tsBase, -5n, 'tsBase is the chunk first time');
  t.equal(out.tsOffset[0], 0, 'offsets start at 0');
  t.equal(out.count, 2);
  t.same([...out.i64!.subarray(0, 2)], [2n ** 63n - 1n, -(2n ** 63n)]);
});
