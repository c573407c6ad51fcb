import t from 'tap';
import fc from 'fast-check';
import { Unpackr } from 'msgpackr';
import { BodySink } from '../../src/workers/body-sink.js';
import { ColumnPage, RETAIN_POINTS } from '../../src/workers/raw-points-columns.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';
import { pointRunArb, timeAt, toColumns } from '../helpers/chunk-arbitraries.js';
import { expectedPointValue } from '../helpers/expected-point.js';
import { columnPoints, type ColumnsBody } from '../helpers/raw-columns-decode.js';

const SEED = 20251121;
t.comment(`fast-check seed ${SEED}`);
const TYPES: ValueType[] = ['float64', 'int64', 'boolean', 'enum', 'string'];
const ENUM_SET = '00000000-0000-4000-8000-00000000e001';
const unpackr = new Unpackr({ int64AsType: 'bigint', useRecords: false, mapsAsObjects: true });

/** Runs of points as separate decoded chunks (each with its own base), cut at arbitrary points. */
const pageArb = (type: ValueType) => fc.tuple(fc.array(pointRunArb(type), { minLength: 1, maxLength: 3 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 3 }));

const same = (a: unknown, b: unknown) => (typeof a === 'number' ? Object.is(a, b) : typeof a === 'object' ? JSON.stringify(a) === JSON.stringify(b) : a === b);

/** The body the raw task writes around the points, enough to decode them. */
function writeBody(sink: BodySink, page: ColumnPage): ColumnsBody {
  sink.reset();
  const body = { layout: 'columns', value_type: page.type, enum_set: page.type === 'enum' ? ENUM_SET : null, count: page.count, encoding: { ts_ns: 'int64le', value: page.valueEncoding, quality: page.qualityEncoding } };
  page.writePoints(sink);
  return { ...body, series: '', points: unpackr.unpack(Buffer.from(sink.buf.subarray(0, sink.pos))), next_cursor: null } as ColumnsBody;
}

for (const type of TYPES) {
  t.test(`every ${type} point gathered as columns decodes to its exact time, value and quality`, async (t) => {
    const sink = new BodySink(64);
    const page = new ColumnPage(); // reused across pages, as a worker does
    let narrow = 0, wide = 0;
    fc.assert(fc.property(pageArb(type), ([runs, cuts]) => {
      const all = runs.map(toColumns);
      const total = all.reduce((a, c) => a + c.count, 0);
      page.begin(type, total);
      const want: Array<[bigint, unknown, number]> = [];
      for (const cols of all) {
        const at = [...new Set([0, ...cuts.map((c) => Math.floor(c * cols.count)), cols.count])].sort((a, b) => a - b);
        for (let k = 1; k < at.length; k++) page.append(cols, at[k - 1], at[k]);
        for (let i = 0; i < cols.count; i++) want.push([timeAt(cols, i), expectedPointValue(cols, i, ENUM_SET), cols.quality[i]]);
      }
      const body = writeBody(sink, page);
      if (body.encoding.quality === 'uint8') narrow++; else wide++;
      const got = columnPoints(body);
      if (got.length !== want.length) return false;
      return got.every((p, i) => p.ts_ns === want[i][0] && same(p.value, want[i][1]) && p.quality === want[i][2]);
    }), { seed: SEED, numRuns: 300 });
    t.ok(narrow > 0 && wide > 0, `both quality widths were exercised (${narrow} uint8, ${wide} uint32le)`);
  });
}

t.test('a float64 page costs 17 bytes a point plus the bin headers', async (t) => {
  const n = 10_000;
  const cols = toColumns({ type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: Array(n - 1).fill(1e9), values: Array.from({ length: n }, (_, i) => i / 10), quality: Array(n).fill(192) });
  const page = new ColumnPage();
  page.begin('float64', n);
  page.append(cols, 0, n);
  const sink = new BodySink(64);
  page.writePoints(sink);
  t.equal(sink.pos, 1 + 6 + 5 + 8 * n + 6 + 5 + 8 * n + 8 + 3 + n);
});

t.test('a page larger than the kept columns is written whole, and the next small page still reads right', async (t) => {
  const n = RETAIN_POINTS + 3;
  const run = (count: number, step: number) => toColumns({ type: 'int64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: Array(count - 1).fill(step), values: Array.from({ length: count }, (_, i) => BigInt(i) * 3n - 7n), quality: Array.from({ length: count }, (_, i) => (i === count - 1 ? 300 : 192)) });
  const page = new ColumnPage();
  const sink = new BodySink(64);
  for (const [count, step] of [[n, 1000], [5, 7]] as const) {
    const cols = run(count, step);
    page.begin('int64', count);
    page.append(cols, 0, 2); // runs of different sizes, as chunks give them
    page.append(cols, 2, count);
    const points = columnPoints(writeBody(sink, page));
    page.end();
    t.equal(points.length, count);
    t.ok(points.every((p, i) => p.ts_ns === timeAt(cols, i) && p.value === cols.i64![i] && p.quality === cols.quality[i]), `${count} points exact`);
  }
});
