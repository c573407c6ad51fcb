import t from 'tap';
import fc from 'fast-check';
import { Unpackr } from 'msgpackr';
import { BodySink } from '../../src/body-sink.js';
import { ColumnPage } from '../../src/workers/raw-points-columns.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';
import { pointRunArb, timeAt, toColumns } from '../helpers/chunk-arbitraries.js';
import { expectedPointValue } from '../helpers/expected-point.js';
import { columnPoints, type ColumnsBody } from '../helpers/raw-columns-decode.js';

const SEED = 20251121;
t.comment(`fast-check seed ${SEED}`);
const TYPES: ValueType[] = ['float64', 'int64', 'boolean', 'enum', 'string'];
const ENUM_SET = '00000000-0000-4000-8000-00000000e001';
const unpackr = new Unpackr({ int64AsType: 'bigint', useRecords: false, mapsAsObjects: true });

/** Runs of points as separate decoded chunks (each with its own base), cut at arbitrary points; and room for a few more points than they hold. */
const pageArb = (type: ValueType) => fc.tuple(fc.array(pointRunArb(type), { minLength: 1, maxLength: 3 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 3 }), fc.nat(40));

const same = (a: unknown, b: unknown) => (typeof a === 'number' ? Object.is(a, b) : typeof a === 'object' ? JSON.stringify(a) === JSON.stringify(b) : a === b);

/** The `points` map the page left in the sink (after `lead` bytes the page must not touch), decoded with what the raw task writes around it. */
function readBody(sink: BodySink, page: ColumnPage, lead: number): ColumnsBody {
  const body = { layout: 'columns', value_type: page.type, enum_set: page.type === 'enum' ? ENUM_SET : null, count: page.count, encoding: { ts_ns: 'int64le', value: page.valueEncoding, quality: page.qualityEncoding } };
  return { ...body, series: '', points: unpackr.unpack(Buffer.from(sink.buf.subarray(lead, sink.pos))), next_cursor: null } as ColumnsBody;
}

for (const type of TYPES) {
  t.test(`every ${type} point gathered as columns into the body decodes to its exact time, value and quality`, async (t) => {
    const sink = new BodySink(64); // grows while pages are reserved, as a worker's slab does
    const page = new ColumnPage(); // reused across pages, as a worker does
    let narrow = 0, wide = 0, short = 0;
    const lead = Uint8Array.from([0xa3, 0x61, 0x62, 0x63]); // bytes before the page stay as they are
    fc.assert(fc.property(pageArb(type), ([runs, cuts, slack]) => {
      const all = runs.map(toColumns);
      const total = all.reduce((a, c) => a + c.count, 0);
      sink.reset();
      sink.bytes(lead);
      page.begin(sink, type, total + slack);
      const want: Array<[bigint, unknown, number]> = [];
      for (const cols of all) {
        const at = [...new Set([0, ...cuts.map((c) => Math.floor(c * cols.count)), cols.count])].sort((a, b) => a - b);
        for (let k = 1; k < at.length; k++) page.append(cols, at[k - 1], at[k]);
        for (let i = 0; i < cols.count; i++) want.push([timeAt(cols, i), expectedPointValue(cols, i, ENUM_SET), cols.quality[i]]);
      }
      page.finish();
      if (!Buffer.from(sink.buf.subarray(0, lead.length)).equals(lead)) return false;
      const body = readBody(sink, page, lead.length);
      if (body.encoding.quality === 'uint8') narrow++; else wide++;
      if (slack > 0) short++;
      const got = columnPoints(body);
      if (got.length !== want.length) return false;
      return got.every((p, i) => p.ts_ns === want[i][0] && same(p.value, want[i][1]) && p.quality === want[i][2]);
    }), { seed: SEED, numRuns: 300 });
    t.ok(narrow > 0 && wide > 0, `both quality widths were exercised (${narrow} uint8, ${wide} uint32le)`);
    t.ok(short > 0, `pages with fewer points than their bound were exercised (${short})`);
  });
}

t.test('enum ordinals and qualities written one byte each are widened in place when a later run needs four', async (t) => {
  const narrowRun = toColumns({ type: 'enum', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: [1000, 1000], values: [0, 255, 7], quality: [192, 0, 255] });
  const wideRun = toColumns({ type: 'enum', firstTs: 1_700_000_000_000_003_000n, o0: 0, deltas: [1000], values: [-1, 300], quality: [2 ** 32 - 1, 192] });
  const page = new ColumnPage();
  const sink = new BodySink(64);
  page.begin(sink, 'enum', 5);
  page.append(narrowRun, 0, 3);
  page.append(wideRun, 0, 2);
  page.finish();
  t.equal(page.valueEncoding, 'int32le');
  t.equal(page.qualityEncoding, 'uint32le');
  const points = columnPoints(readBody(sink, page, 0));
  t.same(points.map((p) => (p.value as { ordinal: number }).ordinal), [0, 255, 7, -1, 300]);
  t.same(points.map((p) => p.quality), [192, 0, 255, 2 ** 32 - 1, 192]);
});

t.test('a page refuses more points than its bound', async (t) => {
  const run = toColumns({ type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: [1, 1], values: [1, 2, 3], quality: [192, 192, 192] });
  const page = new ColumnPage();
  page.begin(new BodySink(64), 'float64', 2);
  t.throws(() => page.append(run, 0, 3), /bounded at 2 points got 3/);
});

t.test('a float64 page costs 17 bytes a point plus the bin headers', async (t) => {
  const n = 10_000;
  const cols = toColumns({ type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: Array(n - 1).fill(1e9), values: Array.from({ length: n }, (_, i) => i / 10), quality: Array(n).fill(192) });
  const page = new ColumnPage();
  const sink = new BodySink(64);
  page.begin(sink, 'float64', n);
  page.append(cols, 0, n);
  page.finish();
  t.equal(sink.pos, 1 + 6 + 5 + 8 * n + 6 + 5 + 8 * n + 8 + 5 + n);
});


t.test('times are exact for any base and for offsets up to 2^53 (the BigInt path past what the writer makes)', async (t) => {
  const cases: Array<[bigint, number[]]> = [
    [-5_000_000_000n, [1, 2 ** 32, 2 ** 40]], // before 1970: negative high word
    [(1n << 62n) + 0xffff_fff0n, [1, 15, 2 ** 32]], // low word near 2^32: carries
    [0xffff_ffffn, [2 ** 53 - 2]], // offset + low word past 2^53
    [-(1n << 63n), [1, 2 ** 52]], // the earliest int64 time
  ];
  for (const [firstTs, deltas] of cases) {
    const n = deltas.length + 1;
    const cols = toColumns({ type: 'float64', firstTs, o0: 0, deltas, values: Array.from({ length: n }, (_, i) => i), quality: Array(n).fill(192) });
    const page = new ColumnPage();
    const sink = new BodySink(64);
    page.begin(sink, 'float64', n);
    page.append(cols, 0, n);
    page.finish();
    const got = columnPoints(readBody(sink, page, 0)).map((p) => p.ts_ns);
    t.same(got, Array.from({ length: n }, (_, i) => timeAt(cols, i)), `base ${firstTs}, deltas ${deltas}`);
  }
});
