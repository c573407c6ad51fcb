import t from 'tap';
import fc from 'fast-check';
import { Unpackr } from 'msgpackr';
import { BodySink } from '../../src/body-sink.js';
import { writeJsonPoints } from '../../src/workers/raw-points-json.js';
import { writeMsgpackPoints } from '../../src/workers/raw-points-msgpack.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';
import { pointRunArb, timeAt, toColumns } from '../helpers/chunk-arbitraries.js';
import { expectedPointValue } from '../helpers/expected-point.js';

const SEED = 20251121;
t.comment(`fast-check seed ${SEED}`);
const TYPES: ValueType[] = ['float64', 'int64', 'boolean', 'enum', 'string'];
const ENUM_SET = '00000000-0000-4000-8000-00000000e001';

/** Run boundaries: the writers are called once per run, as the raw task does per chunk. */
const cutsArb = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 });
function runsOf(n: number, cuts: number[]): Array<[number, number]> {
  const at = [...new Set([0, ...cuts.map((c) => Math.floor(c * n)), n])].sort((a, b) => a - b);
  const out: Array<[number, number]> = [];
  for (let k = 1; k < at.length; k++) if (at[k] > at[k - 1]) out.push([at[k - 1], at[k]]);
  return out;
}


/** JSON text of the points array, with int64 numbers (times, int64 values) read as exact bigints. */
function parseJsonPoints(text: string, type: ValueType): Array<{ ts_ns: bigint; value: unknown; quality: number }> {
  // `"ts_ns":` cannot occur unescaped inside a JSON string, so quoting these digits is safe
  let quoted = text.replace(/"ts_ns":(-?\d+)/g, '"ts_ns":"$1"');
  if (type === 'int64') quoted = quoted.replace(/"value":(-?\d+)/g, '"value":"$1"');
  const points = JSON.parse(`[${quoted}]`) as Array<{ ts_ns: string; value: unknown; quality: number }>;
  return points.map((p) => ({ ...p, ts_ns: BigInt(p.ts_ns), value: type === 'int64' ? BigInt(p.value as string) : p.value }));
}

for (const type of TYPES) {
  t.test(`every ${type} point written as JSON reads back with its exact time, value and quality`, async (t) => {
    const sink = new BodySink(256);
    fc.assert(fc.property(pointRunArb(type), cutsArb, (run, cuts) => {
      const cols = toColumns(run);
      sink.reset();
      let first = true;
      for (const [a, b] of runsOf(cols.count, cuts)) { writeJsonPoints(sink, cols, a, b, first, JSON.stringify(ENUM_SET)); first = false; }
      const points = parseJsonPoints(Buffer.from(sink.buf.subarray(0, sink.pos)).toString('utf8'), type);
      if (points.length !== cols.count) return false;
      for (let i = 0; i < cols.count; i++) {
        const p = points[i];
        if (p.ts_ns !== timeAt(cols, i) || p.quality !== cols.quality[i]) return false;
        const want = expectedPointValue(cols, i, ENUM_SET);
        if (type === 'float64' ? !Object.is(p.value, want) : JSON.stringify(p.value, (_, v) => (typeof v === 'bigint' ? String(v) : v)) !== JSON.stringify(want, (_, v) => (typeof v === 'bigint' ? String(v) : v))) return false;
      }
      return true;
    }), { seed: SEED, numRuns: 300 });
    t.pass('property held');
  });

  t.test(`every ${type} point written as msgpack decodes to its exact time, value and quality`, async (t) => {
    const sink = new BodySink(256);
    const unpackr = new Unpackr({ int64AsType: 'bigint', useRecords: false, mapsAsObjects: true });
    fc.assert(fc.property(pointRunArb(type), cutsArb, (run, cuts) => {
      const cols = toColumns(run);
      sink.reset();
      // array32 header, as the raw task writes it
      sink.reserve(5);
      sink.buf[0] = 0xdd;
      sink.view.setUint32(1, cols.count);
      sink.pos = 5;
      for (const [a, b] of runsOf(cols.count, cuts)) writeMsgpackPoints(sink, cols, a, b, ENUM_SET);
      const points = unpackr.unpack(sink.buf.slice(0, sink.pos)) as Array<{ ts_ns: bigint | number; value: unknown; quality: number }>;
      if (points.length !== cols.count) return false;
      for (let i = 0; i < cols.count; i++) {
        const p = points[i];
        if (BigInt(p.ts_ns) !== timeAt(cols, i) || p.quality !== cols.quality[i]) return false;
        const want = expectedPointValue(cols, i, ENUM_SET);
        if (type === 'float64') { if (!Object.is(p.value, want)) return false; }
        else if (type === 'int64') { if (BigInt(p.value as bigint) !== want) return false; }
        else if (JSON.stringify(p.value) !== JSON.stringify(want)) return false;
      }
      return true;
    }), { seed: SEED, numRuns: 300 });
    t.pass('property held');
  });
}

t.test('plant-like runs take the fast paths and give the exact text', async (t) => {
  // 1 s cadence with millisecond jitter crossing a 10^4 s boundary, two-decimal readings
  const n = 20_000;
  const cols = toColumns({
    type: 'float64', firstTs: 1_700_009_990_000_000_000n, o0: 0,
    deltas: Array.from({ length: n - 1 }, (_, i) => 1_000_000_000 + ((i * 7) % 13 - 6) * 1_000_000 + (i % 500 === 0 ? 3 : 0)),
    values: Array.from({ length: n }, (_, i) => Math.round(5000 * Math.sin(i / 300)) / 100),
    quality: Array.from({ length: n }, (_, i) => (i % 97 === 0 ? 0 : 192)),
  });
  const sink = new BodySink(64);
  writeJsonPoints(sink, cols, 0, n, true, '""');
  const text = Buffer.from(sink.buf.subarray(0, sink.pos)).toString('latin1');
  const want = Array.from({ length: n }, (_, i) => `{"ts_ns":${timeAt(cols, i)},"value":${cols.f64![i]},"quality":${cols.quality[i]}}`).join(',');
  t.equal(text, want, 'identical to BigInt and V8 number formatting');
});

t.test('rows keep times exact when base + offset passes 2^53 ns (offsets the writer never makes, the codec allows)', async (t) => {
  const unpackr = new Unpackr({ int64AsType: 'bigint', useRecords: false, mapsAsObjects: true });
  const cases: Array<[bigint, number[]]> = [[9214364837999999999n, [9007198854775808]], [(1n << 62n) + 0xffff_ff00n, [1, 2 ** 53 - 2]]];
  for (const type of ['float64', 'string'] as const) {
    for (const [firstTs, deltas] of cases) {
      const n = deltas.length + 1;
      const cols = toColumns({ type, firstTs, o0: 0, deltas, values: Array.from({ length: n }, (_, i) => (type === 'string' ? `s${i}` : i / 4)), quality: Array(n).fill(192) });
      const want = Array.from({ length: n }, (_, i) => timeAt(cols, i));
      const sink = new BodySink(64);
      writeJsonPoints(sink, cols, 0, n, true, '""');
      t.same(parseJsonPoints(Buffer.from(sink.buf.subarray(0, sink.pos)).toString('utf8'), type).map((p) => p.ts_ns), want, `JSON ${type}, base ${firstTs}`);
      sink.reset();
      sink.reserve(5); sink.buf[0] = 0xdd; sink.view.setUint32(1, n); sink.pos = 5;
      writeMsgpackPoints(sink, cols, 0, n, '');
      const points = unpackr.unpack(sink.buf.slice(0, sink.pos)) as Array<{ ts_ns: bigint | number }>;
      t.same(points.map((p) => BigInt(p.ts_ns)), want, `msgpack ${type}, base ${firstTs}`);
    }
  }
});
