// The live-update point writer (src/reads/live/live-format.ts): putLiveDouble prints what
// String(v) prints for every double, and writePoints writes what the lossless JSON writer
// writes for the same points, with the quality floor, the unit conversion and the skipped
// index applied, for every value type and for times anywhere in int64 (the fast path's
// split and its BigInt fallbacks), appended after what the sink already holds.
import t from 'tap';
import fc from 'fast-check';
import { putLiveDouble, pointsText, writePoints } from '../../src/reads/live/live-format.js';
import { stringifyJson } from '../../src/json/json.js';
import { BodySink } from '../../src/body-sink.js';
import { ValueConverter } from '../../src/workers/resolved-points.js';
import type { LiveColumns } from '../../src/reads/live/commit-source.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';

const doubleText = (v: number): string => {
  const b = new Uint8Array(40);
  const e = putLiveDouble(b, 0, v);
  return e < 0 ? String(v) : Buffer.from(b.subarray(0, e)).toString('latin1');
};

t.test('putLiveDouble prints String(v) for any double', async (t) => {
  fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (v) => doubleText(v) === String(v)), { numRuns: 100_000 });
  // decimals of a few digits, the common case the fast path takes, across the 1e9 bound
  fc.assert(fc.property(fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }), fc.integer({ min: 0, max: 8 }), (m, k) => {
    const v = m / 10 ** k;
    return doubleText(v) === String(v);
  }), { numRuns: 100_000 });
  fc.assert(fc.property(fc.double({ min: 9e8, max: 2e10, noNaN: true }), fc.integer({ min: 0, max: 6 }), (x, k) => {
    const v = Math.round(x * 10 ** k) / 10 ** k;
    return doubleText(v) === String(v);
  }), { numRuns: 50_000 });
  for (const v of [0, -0, 0.1, 0.2 + 0.1, 1e-6, 9.99e-7, 1.5e-6, 999_999_999.999_999, 1e9 + 0.5, -0.5, 1 / 3, 5e-324, Number.MAX_VALUE, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e21, 123456789012.5]) t.equal(doubleText(v), String(v), String(v));
});

const written = (sink: BodySink, from: number) => Buffer.from(sink.buf.subarray(from, sink.pos)).toString('utf8');

t.test('writePoints writes what the JSON writer writes, filtered and converted', async (t) => {
  const F = new ValueConverter({ factor: '9/5', offset: '32' });
  // times: anywhere in int64, or close together around a base (the fast path), with a
  // few far off (past 2^52 ns from the first, before 1970) in the same column
  const arbTime = fc.oneof(
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    fc.bigInt({ min: 0n, max: 3_000_000_000n }),
    fc.bigInt({ min: 1_764_201_600_000_000_000n, max: 1_764_201_700_000_000_000n }),
    fc.integer({ min: 0, max: 5000 }).map((k) => 1_764_201_600_000_000_000n + BigInt(k) * 1_000_000n),
  );
  const arb = fc.array(fc.record({
    ts: arbTime,
    v: fc.oneof(fc.double({ noNaN: false }), fc.integer({ min: -100_000, max: 100_000 }).map((m) => m / 100)),
    q: fc.constantFrom(0, 10, 64, 100, 192, 255, 2 ** 32 - 1),
  }), { maxLength: 40 });
  t.doesNotThrow(() => fc.assert(fc.property(arb, fc.constantFrom(0, 64, 192), fc.boolean(), fc.integer({ min: -1, max: 40 }), fc.integer({ min: 0, max: 3 }), (pts, floor, convert, skip, before) => {
    const cols = { series: 's', times: BigInt64Array.from(pts.map((p) => p.ts)), values: Float64Array.from(pts.map((p) => p.v)), quality: Uint32Array.from(pts.map((p) => p.q)) };
    const conv = convert ? F : null;
    // a small sink that must grow, already holding some bytes
    const sink = new BodySink(16);
    sink.ascii('x'.repeat(before));
    const count = writePoints(sink, cols, 'float64', null, { minQuality: floor, convert: conv }, skip);
    const want = pts.flatMap((p, i) => {
      if (p.q < floor || i === skip) return [];
      const v = conv ? conv.apply(p.v) : p.v;
      return [{ ts_ns: BigInt.asIntN(64, p.ts), value: Number.isFinite(v) ? v : null, quality: p.q }];
    });
    return written(sink, before) === stringifyJson(want) && count === want.length && written(sink, 0).startsWith('x'.repeat(before));
  }), { numRuns: 3_000 }), 'the bytes of the lossless JSON writer');
});

t.test('writePoints: every value type', async (t) => {
  const of = (values: LiveColumns['values'], quality = Uint32Array.from(values, () => 192)): LiveColumns => ({ series: 's', times: BigInt64Array.from(values, (_, i) => 1_764_201_600_000_000_000n + BigInt(i) * 1_500_000n), values, quality });
  const check = (name: string, cols: LiveColumns, type: ValueType | null, want: unknown[], enumSet: string | null = null, filter = { minQuality: 0, convert: null as ValueConverter | null }) => {
    const r = pointsText(cols, type, enumSet, filter);
    t.equal(r.text, stringifyJson(want.map((value, i) => ({ ts_ns: cols.times[i], value, quality: cols.quality[i] })).filter((p) => p.quality >= filter.minQuality)), name);
  };
  check('enum', of(Int32Array.of(2, -1)), 'enum', [{ enum_set: 'modes', ordinal: 2 }, { enum_set: 'modes', ordinal: -1 }], 'modes');
  check('enum with a null set', of(Int32Array.of(7)), 'enum', [{ enum_set: null, ordinal: 7 }]);
  check('strings: escapes and UTF-8', of(['a"b', 'c\n\u2028', 'pompe №3 °C', '\ud800', 'x'.repeat(5000)]), 'string', ['a"b', 'c\n\u2028', 'pompe №3 °C', '\ud800', 'x'.repeat(5000)]);
  check('int64 as bigint', of(BigInt64Array.of(2n ** 62n, -(2n ** 63n), 0n)), 'int64', [2n ** 62n, -(2n ** 63n), 0n]);
  check('int64 converted', of(BigInt64Array.of(100n, -40n)), 'int64', [212, -40], null, { minQuality: 0, convert: new ValueConverter({ factor: '9/5', offset: '32' }) });
  check('booleans', of(Uint8Array.of(1, 0)), 'boolean', [true, false]);
  check('float64 from a plain array (the main thread\'s writes)', of([1.25, Number.NaN, -0]), 'float64', [1.25, null, 0]);
  check('no value type', of([1.5, 7n, 'a']), null, [1.5, 7n, 'a']);
  const bad = of(Float64Array.of(1, 2, 3), Uint32Array.of(192, 0, 64));
  check('quality floor', bad, 'float64', [1, 2, 3], null, { minQuality: 64, convert: null });
  t.same(pointsText(of(Float64Array.of(1, 2, 3)), 'float64', null, undefined, 1).text, stringifyJson([1, 3].map((v, k) => ({ ts_ns: 1_764_201_600_000_000_000n + BigInt(k * 2) * 1_500_000n, value: v, quality: 192 }))), 'skip');
  t.same(pointsText({ series: 's', times: new BigInt64Array(0), values: new Float64Array(0), quality: new Uint32Array(0) }, 'float64', null), { text: '[]', count: 0 });
});
