import t, { type Test } from 'tap';
import { decodeChunk, decodeNumericInto, decodeTimesOnly, encodeChunk } from '../../../src/storage/encoding/chunk.js';
import type { PointColumns } from '../../../src/storage/encoding/chunk-types.js';
import { InvariantError } from '../../../src/errors.js';
import { createPointColumns } from '../../../src/storage/encoding/point-columns.js';
import { toColumns } from '../../helpers/chunk-arbitraries.js';

const T0 = 1_700_000_000_000_000_000n;

function floats(values: number[], deltas?: number[]): PointColumns {
  return toColumns({ type: 'float64', firstTs: T0, o0: 0, deltas: deltas ?? values.slice(1).map(() => 1e9), values, quality: values.map(() => 192) });
}

/** The codec's input checks are assertions (callers validate first): an InvariantError naming `field`. */
function refusal(t: Test, fn: () => unknown, field: string): void {
  try {
    fn();
  } catch (e) {
    t.ok(e instanceof InvariantError, `an InvariantError for ${field}`);
    const se = e as InvariantError;
    t.equal(se.field, field);
    t.match(se.message, field, `message names ${field}: ${se.message}`);
    return;
  }
  t.fail(`${field}: accepted`);
}

t.test('encoding refuses points a chunk cannot hold exactly, naming the field', async (t) => {
  const empty = floats([1]);
  empty.count = 0;
  refusal(t, () => encodeChunk(empty), 'points.count');
  refusal(t, () => encodeChunk(floats([1, NaN, 3])), 'points.f64[1]');
  refusal(t, () => encodeChunk(floats([Infinity])), 'points.f64[0]');
  refusal(t, () => encodeChunk(floats([1, 2, 3], [5, -1])), 'points.tsOffset[2]');
  refusal(t, () => encodeChunk(floats([1, 2], [0])), 'points.tsOffset[1]');
  refusal(t, () => encodeChunk(floats([1, 2], [0.5])), 'points.tsOffset[1]');
  const far = floats([1, 2]);
  far.tsOffset[1] = 2 ** 53 + 2;
  refusal(t, () => encodeChunk(far), 'points.tsOffset[1]');
  const late = floats([1, 2]);
  late.tsBase = 2n ** 63n - 1n;
  refusal(t, () => encodeChunk(late), 'points.tsBase');
  const noColumn = floats([1]);
  noColumn.f64 = null;
  refusal(t, () => encodeChunk(noColumn), 'points.f64');
  const short = floats([1, 2, 3]);
  short.count = 5;
  refusal(t, () => encodeChunk(short), 'points.f64');
  const bool = toColumns({ type: 'boolean', firstTs: T0, o0: 0, deltas: [1], values: [0, 2], quality: [192, 192] });
  refusal(t, () => encodeChunk(bool), 'points.u8[1]');
  const lone = toColumns({ type: 'string', firstTs: T0, o0: 0, deltas: [1], values: ['ok', 'a\ud800b'], quality: [192, 192] });
  refusal(t, () => encodeChunk(lone), 'points.str[1]');
});

t.test('decoding refuses output columns smaller than the chunk, naming the column', async (t) => {
  const bytes = encodeChunk(floats([1, 2, 3, 4]));
  const small = createPointColumns('float64', 3);
  refusal(t, () => decodeChunk(bytes, small), 'out.tsOffset');
  const wrongType = createPointColumns('int64', 8);
  refusal(t, () => decodeChunk(bytes, wrongType), 'out.f64');
  refusal(t, () => decodeTimesOnly(bytes, new Float64Array(2)), 'tsOut');
  refusal(t, () => decodeNumericInto(bytes, new Float64Array(8), new Float64Array(3)), 'f64Out');
  const text = encodeChunk(toColumns({ type: 'string', firstTs: T0, o0: 0, deltas: [], values: ['x'], quality: [192] }));
  refusal(t, () => decodeNumericInto(text, new Float64Array(8), new Float64Array(8)), 'chunk');
});

t.test('a string chunk decodes into a string column shorter than the chunk by growing it', async (t) => {
  const bytes = encodeChunk(toColumns({ type: 'string', firstTs: T0, o0: 0, deltas: [1, 1], values: ['a', 'b', 'a'], quality: [192, 192, 192] }));
  const out = createPointColumns('string', 8);
  out.str = ['old'];
  t.equal(decodeChunk(bytes, out), 3);
  t.same(out.str, ['a', 'b', 'a']);
});
