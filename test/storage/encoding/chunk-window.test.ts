// ChunkWindow (the part of a chunk a read's window cuts) against the whole-chunk decoder:
// for any chunk and any window, either it declines (-1) or its points are exactly the whole
// decode's points in the window, bit for bit.
import t from 'tap';
import fc from 'fast-check';
import { decodeChunk, encodeChunk, readChunkHeader } from '../../../src/storage/encoding/chunk.js';
import { ChunkWindow } from '../../../src/storage/encoding/chunk-window.js';
import type { PointColumns, ValueType } from '../../../src/storage/encoding/chunk-types.js';
import { createPointColumns } from '../../../src/storage/encoding/point-columns.js';
import { noiseRunArb, pointRunArb, timeAt, toColumns, type PointRun } from '../../helpers/chunk-arbitraries.js';

const SEED = Number(process.env.FC_SEED ?? 20261128);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);
const TYPES: ValueType[] = ['float64', 'int64', 'boolean', 'enum', 'string'];
const bitsOf = (x: number): bigint => new BigUint64Array(new Float64Array([x]).buffer)[0];

function valueSame(a: PointColumns, i: number, b: PointColumns, j: number): boolean {
  switch (a.type) {
    case 'float64': return bitsOf(a.f64![i]) === bitsOf(b.f64![j]);
    case 'int64': return a.i64![i] === b.i64![j];
    case 'boolean': return a.u8![i] === b.u8![j];
    case 'enum': return a.ord![i] === b.ord![j];
    case 'string': return a.str![i] === b.str![j];
  }
}

const window = new ChunkWindow();
const used: Record<string, number> = {};

/** The window [from, to) between two fractions of the chunk's span (a little outside it too). */
function check(run: PointRun, lo: number, hi: number): void {
  const bytes = encodeChunk(toColumns(run));
  const h = readChunkHeader(bytes);
  const whole = createPointColumns(run.type, h.count);
  decodeChunk(bytes, whole, h);
  const span = h.lastTs - h.firstTs;
  const at = (f: number) => h.firstTs + (span * BigInt(Math.round(f * 1e6))) / 1_000_000n + (f < 0 ? -1n : f > 1 ? 1n : 0n);
  const a = Math.min(lo, hi), b = Math.max(lo, hi);
  const from = at(a), to = at(b) + 1n;
  const out = createPointColumns(run.type, h.count);
  const m = window.decode(bytes, h, from, to, out);
  const kind = m < 0 ? 'declined' : `${run.type} window`;
  used[kind] = (used[kind] ?? 0) + 1;
  if (m < 0) return;
  let i0 = 0;
  while (i0 < h.count && timeAt(whole, i0) < from) i0++;
  let i1 = i0;
  while (i1 < h.count && timeAt(whole, i1) < to) i1++;
  if (m !== i1 - i0) throw new Error(`window [${from}, ${to}) gave ${m} points, the whole decode ${i1 - i0}`);
  if (out.count !== m || out.type !== run.type) throw new Error(`out.count ${out.count}, out.type ${out.type}`);
  for (let j = 0; j < m; j++) {
    const i = i0 + j;
    if (timeAt(out, j) !== timeAt(whole, i)) throw new Error(`time of point ${i}: ${timeAt(out, j)} != ${timeAt(whole, i)}`);
    if (out.quality[j] !== whole.quality[i]) throw new Error(`quality of point ${i}: ${out.quality[j]} != ${whole.quality[i]}`);
    if (!valueSame(whole, i, out, j)) throw new Error(`value of point ${i} differs`);
  }
}

/** 0..7 (ms), scattered (a hash of i): a periodic pattern leaves the residuals to a delta layout. */
const jitter = (i: number) => Math.imul(i + 1, 2654435761) >>> 29;

const fraction = fc.oneof(fc.double({ min: -0.1, max: 1.1, noNaN: true }), fc.constantFrom(-0.5, 0, 0.5, 1, 1.5));

for (const type of TYPES) {
  t.test(`${type}: a window's points are the whole decode's, exactly`, async (t) => {
    fc.assert(fc.property(pointRunArb(type), fraction, fraction, check), { seed: SEED, numRuns: 400 });
    t.pass('400 chunks');
  });
}

t.test('float64 noise (split floats): declined or exact', async (t) => {
  fc.assert(fc.property(noiseRunArb(), fraction, fraction, check), { seed: SEED, numRuns: 100 });
  t.pass('100 chunks');
});

t.test('a plant signal of 10,000 points on a jittered 1 s grid, cut by an hour: its window decodes in part', async (t) => {
  const n = 10_000;
  for (const type of ['float64', 'int64', 'boolean', 'enum'] as const) {
    const run: PointRun = {
      type, firstTs: 1_700_000_000_000_000_000n, o0: 0,
      // a collector's jitter of 0..7 ms around each second (the shared dataset's)
      deltas: Array.from({ length: n - 1 }, (_, i) => 1_000_000_000 + (jitter(i + 1) - jitter(i)) * 1_000_000),
      values: Array.from({ length: n }, (_, i) => type === 'float64' ? Math.round(500 + 40 * Math.sin(i / 50)) / 10
        : type === 'int64' ? BigInt(i * 3) : type === 'boolean' ? (i >> 9) & 1 : (i >> 10) % 5),
      quality: Array.from({ length: n }, (_, i) => (i % 997 === 0 ? 64 : 192)),
    };
    const before = used[`${type} window`] ?? 0;
    check(run, 0.32, 0.68);
    check(run, -0.1, 0.5);
    check(run, 0.5, 1.1);
    t.equal((used[`${type} window`] ?? 0) - before, 3, `${type}: three windows read in part`);
  }
});

t.test('the windows reached every value type', async (t) => {
  for (const type of ['float64', 'int64', 'boolean', 'enum']) t.ok((used[`${type} window`] ?? 0) > 0, `${type}: ${used[`${type} window`]} windows`);
  t.ok(used.declined > 0, `declined: ${used.declined} (strings, split floats, wide int64, delta columns without a directory)`);
});
