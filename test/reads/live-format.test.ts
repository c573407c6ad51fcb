// The live-update point writer (src/reads/live/live-format.ts): numberText prints what
// String(v) prints for every double, and pointsText writes what the lossless JSON writer
// writes for the same points, with the quality floor, the unit conversion and the skipped
// index applied.
import t from 'tap';
import fc from 'fast-check';
import { numberText, pointsText } from '../../src/reads/live/live-format.js';
import { stringifyJson } from '../../src/json/json.js';
import { ValueConverter } from '../../src/workers/resolved-points.js';

t.test('numberText is String(v) for any double', async (t) => {
  fc.assert(fc.property(fc.double({ noNaN: true }), (v) => numberText(v) === String(v)), { numRuns: 100_000 });
  // decimals of a few digits, the common case the fast path takes
  fc.assert(fc.property(fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }), fc.integer({ min: 0, max: 8 }), (m, k) => {
    const v = m / 10 ** k;
    return numberText(v) === String(v);
  }), { numRuns: 100_000 });
  for (const v of [0, -0, 0.1, 0.2 + 0.1, 1e-6, 9.99e-7, 1.5e-6, 999_999_999.999_999, 1e9 + 0.5, -0.5, 1 / 3, 5e-324, Number.MAX_VALUE]) t.equal(numberText(v), String(v), String(v));
});

t.test('pointsText writes what the JSON writer writes, filtered and converted', async (t) => {
  const F = new ValueConverter({ factor: '9/5', offset: '32' });
  const arb = fc.array(fc.record({
    ts: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    v: fc.double({ noNaN: false }),
    q: fc.constantFrom(0, 10, 64, 100, 192, 255),
  }), { maxLength: 40 });
  fc.assert(fc.property(arb, fc.constantFrom(0, 64, 192), fc.boolean(), fc.integer({ min: -1, max: 40 }), (pts, floor, convert, skip) => {
    const cols = { series: 's', times: BigInt64Array.from(pts.map((p) => p.ts)), values: Float64Array.from(pts.map((p) => p.v)), quality: Uint32Array.from(pts.map((p) => p.q)) };
    const conv = convert ? F : null;
    const got = pointsText(cols, 'float64', null, { minQuality: floor, convert: conv }, skip);
    const want = pts.flatMap((p, i) => {
      if (p.q < floor || i === skip) return [];
      const v = conv ? conv.apply(p.v) : p.v;
      return [{ ts_ns: BigInt.asIntN(64, p.ts), value: Number.isFinite(v) ? v : null, quality: p.q }];
    });
    return got.text === stringifyJson(want) && got.count === want.length;
  }), { numRuns: 2_000 });
  const e = pointsText({ series: 's', times: BigInt64Array.of(5n), values: Int32Array.of(2), quality: Uint32Array.of(192) }, 'enum', 'modes');
  t.equal(e.text, '[{"ts_ns":5,"value":{"enum_set":"modes","ordinal":2},"quality":192}]');
  const s = pointsText({ series: 's', times: BigInt64Array.of(5n, 6n), values: ['a"b', 'c'], quality: Uint32Array.of(192, 0) }, 'string', null, { minQuality: 64, convert: null });
  t.same([s.text, s.count], ['[{"ts_ns":5,"value":"a\\"b","quality":192}]', 1]);
  const i = pointsText({ series: 's', times: BigInt64Array.of(5n), values: BigInt64Array.of(2n ** 62n), quality: Uint32Array.of(192) }, 'int64', null);
  t.equal(i.text, `[{"ts_ns":5,"value":${2n ** 62n},"quality":192}]`);
});
