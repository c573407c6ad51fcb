import t from 'tap';
import fc from 'fast-check';
import { BodySink } from '../../src/body-sink.js';
import { countDigits, JsonColumnPage, putCount, reserveCount } from '../../src/workers/raw-columns-json.js';
import { parseJson } from '../../src/json/json.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';
import { pointRunArb, timeAt, toColumns } from '../helpers/chunk-arbitraries.js';
import { expectedPointValue } from '../helpers/expected-point.js';
import { jsonColumnPoints, type JsonColumnsBody } from '../helpers/raw-columns-decode.js';

const SEED = 20261121;
t.comment(`fast-check seed ${SEED}`);
const TYPES: ValueType[] = ['float64', 'int64', 'boolean', 'enum', 'string'];
const ENUM_SET = '00000000-0000-4000-8000-00000000e001';

/** Runs of points as separate decoded chunks (each with its own base), cut at arbitrary points. */
const pageArb = (type: ValueType) => fc.tuple(fc.array(pointRunArb(type), { minLength: 1, maxLength: 3 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 3 }));

/** -0 stays -0; int64 compares as bigint; objects by their JSON. */
const same = (a: unknown, b: unknown) => (typeof a === 'number' ? Object.is(a, b) : typeof a === 'object' ? JSON.stringify(a) === JSON.stringify(b) : a === b);

/** Starts a body framed as the raw task frames it; the page's times go into it. */
function beginBody(sink: BodySink, page: JsonColumnPage, type: ValueType): number {
  sink.reset();
  sink.ascii(`{"series":"","layout":"columns","value_type":"${type}","enum_set":${type === 'enum' ? `"${ENUM_SET}"` : 'null'},"count":`);
  const countAt = reserveCount(sink);
  sink.ascii(',"points":{"ts_ns":[');
  page.begin(sink);
  return countAt;
}

/** Ends the body and parses it back with the service's lossless JSON parser. */
function parseBody(sink: BodySink, page: JsonColumnPage, countAt: number): JsonColumnsBody {
  page.finish();
  putCount(sink, countAt, page.count);
  sink.ascii(',"next_cursor":null}');
  // plain JSON: the count's digits right after its colon, no padding before them
  const text = Buffer.from(sink.buf.subarray(0, sink.pos)).toString('latin1');
  if (!text.includes(`"count":${page.count},"points":{"ts_ns":[`)) throw new Error(`the count is not plain JSON: ${text.slice(0, 200)}`);
  return parseJson(sink.buf.slice(0, sink.pos)) as JsonColumnsBody;
}

for (const type of TYPES) {
  t.test(`every ${type} point gathered as JSON columns parses back to its exact time, value and quality`, async (t) => {
    const sink = new BodySink(64);
    const page = new JsonColumnPage(); // reused across pages, as a worker does
    fc.assert(fc.property(pageArb(type), ([runs, cuts]) => {
      const countAt = beginBody(sink, page, type);
      const want: Array<[bigint, unknown, number]> = [];
      for (const cols of runs.map(toColumns)) {
        const at = [...new Set([0, ...cuts.map((c) => Math.floor(c * cols.count)), cols.count])].sort((a, b) => a - b);
        for (let k = 1; k < at.length; k++) page.append(cols, at[k - 1], at[k]);
        for (let i = 0; i < cols.count; i++) want.push([timeAt(cols, i), expectedPointValue(cols, i, ENUM_SET), cols.quality[i]]);
      }
      const body = parseBody(sink, page, countAt);
      if (body.count !== want.length) return false;
      const got = jsonColumnPoints(body);
      page.end();
      if (got.length !== want.length) return false;
      return got.every((p, i) => p.ts_ns === want[i][0] && same(p.value, want[i][1]) && p.quality === want[i][2]);
    }), { seed: SEED, numRuns: 300 });
    t.pass(`${type}: 300 pages exact`);
  });
}

t.test('a plant float64 page costs about 31 bytes a point', async (t) => {
  const n = 10_000;
  const cols = toColumns({ type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: Array(n - 1).fill(1_003_000_000), values: Array.from({ length: n }, (_, i) => 400 + (i % 1000) / 10), quality: Array(n).fill(192) });
  const page = new JsonColumnPage();
  const sink = new BodySink(64);
  const countAt = beginBody(sink, page, 'float64');
  page.append(cols, 0, 5000);
  page.append(cols, 5000, n);
  const body = parseBody(sink, page, countAt);
  t.equal(body.count, n);
  // 19 time digits, a value of 3 to 5 characters, "192", and three commas
  t.ok(sink.pos > 26 * n && sink.pos < 31 * n, `${(sink.pos / n).toFixed(1)} bytes a point`);
  t.match(Buffer.from(sink.buf.subarray(0, 200)).toString('latin1'), /"count":10000,"points":\{"ts_ns":\[1700000000000000000,/, 'the count is plain JSON, no blanks before it');
});

t.test('times stay exact when base + offset passes 2^53 ns of carried sum (offsets the writer never makes, the codec allows)', async (t) => {
  // found by the property above under another draw of the shared arbitraries: the last time is INT64_MAX
  const cases: Array<[bigint, number[]]> = [[9214364837999999999n, [9007198854775808]], [1_700_000_000_999_999_999n, [1, 2 ** 53 - 2]]];
  for (const [firstTs, deltas] of cases) {
    const n = deltas.length + 1;
    const cols = toColumns({ type: 'float64', firstTs, o0: 0, deltas, values: Array.from({ length: n }, (_, i) => i / 4), quality: Array(n).fill(192) });
    const sink = new BodySink(64);
    const page = new JsonColumnPage();
    const countAt = beginBody(sink, page, 'float64');
    page.append(cols, 0, n);
    const got = jsonColumnPoints(parseBody(sink, page, countAt)).map((p) => p.ts_ns);
    page.end();
    t.same(got, Array.from({ length: n }, (_, i) => timeAt(cols, i)), `base ${firstTs}`);
  }
});

t.test('a count field kept at a bound\'s digits gives the same bytes as the full field, for any count up to the bound', async (t) => {
  // the page as the raw task writes it when listRange bounded it: reserveCount(width of the bound)
  const write = (n: number, width: number | undefined, tail: string) => {
    const sink = new BodySink(16);
    sink.ascii('{"count":');
    const at = width === undefined ? reserveCount(sink) : reserveCount(sink, width);
    sink.ascii(`,"points":{"ts_ns":[${tail}]}`);
    if (width === undefined) putCount(sink, at, n); else putCount(sink, at, n, width);
    sink.ascii('}');
    return Buffer.from(sink.buf.subarray(0, sink.pos)).toString('latin1');
  };
  fc.assert(fc.property(fc.integer({ min: 0, max: 99_999_999 }), fc.integer({ min: 0, max: 99_999_999 }), fc.string({ maxLength: 40 }), (a, b, tail) => {
    const n = Math.min(a, b), bound = Math.max(a, b);
    const width = countDigits(bound);
    if (width !== String(bound).length) return false;
    const text = write(n, width, tail);
    return text === write(n, undefined, tail) && text === `{"count":${n},"points":{"ts_ns":[${tail}]}}`;
  }), { seed: SEED, numRuns: 3000 });
  t.equal(write(3600, 4, '1,2'), '{"count":3600,"points":{"ts_ns":[1,2]}}', 'as many digits as the bound: written in place');
  t.throws(() => write(10_000, 4, ''), /overflows its count field of 4/, 'a count past its bound is a bug, never a cut digit');
});
