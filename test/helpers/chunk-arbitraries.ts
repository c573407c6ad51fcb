// fast-check arbitraries for runs of points of every value type, shaped to reach every
// layout of the chunk format: jittered grids and wild gaps for times, decimal readings,
// arbitrary doubles (-0, subnormals, extremes), int64 near and beyond +-2^51, runs of
// constants, unicode strings and the whole uint32 quality range.

import fc from 'fast-check';
import type { PointColumns, ValueType } from '../../src/storage/encoding/chunk-types.js';
import { createPointColumns } from '../../src/storage/encoding/point-columns.js';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export interface PointRun {
  type: ValueType;
  firstTs: bigint;
  /** Offset of the first point from tsBase (tsBase = firstTs - o0). */
  o0: number;
  deltas: number[];
  values: Array<number | bigint | string>;
  quality: number[];
}

const lengthArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 6 }) },
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: 300, max: 1200 }) },
);

function deltasArb(n: number): fc.Arbitrary<number[]> {
  const m = Math.max(0, n - 1);
  const exact = (a: fc.Arbitrary<number>) => fc.array(a, { minLength: m, maxLength: m });
  // Span stays below 2^53 ns: per-delta ceilings are 2^53 / n.
  const ceiling = Math.max(1, Math.floor(2 ** 53 / Math.max(1, m)) - 1);
  return fc.oneof(
    fc.record({ period: fc.constantFrom(1, 1_000_000, 100_000_000, 1_000_000_000, 333_333_333), unit: fc.constantFrom(1, 1000, 1_000_000) })
      .chain(({ period, unit }) => exact(fc.oneof(
        { weight: 20, arbitrary: fc.integer({ min: -7, max: 7 }).map((j) => Math.max(1, period + j * unit)) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 300 }).map((g) => period * g) },
      ))),
    exact(fc.integer({ min: 1, max: Math.min(2 ** 40, ceiling) })),
    exact(fc.integer({ min: 1, max: ceiling })),
    exact(fc.constant(1)),
  );
}

function floatValues(n: number): fc.Arbitrary<number[]> {
  const exact = (a: fc.Arbitrary<number>) => fc.array(a, { minLength: n, maxLength: n });
  const decimal = fc.record({ m: fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), k: fc.integer({ min: 0, max: 9 }) }).map(({ m, k }) => m / 10 ** k);
  const oneK = fc.integer({ min: 0, max: 9 }).chain((k) => exact(fc.integer({ min: -(2 ** 50), max: 2 ** 50 }).map((m) => m / 10 ** k)));
  const walk = fc.record({ start: fc.integer({ min: -1e6, max: 1e6 }), k: fc.integer({ min: 0, max: 4 }), steps: fc.array(fc.integer({ min: -50, max: 50 }), { minLength: n, maxLength: n }) })
    .map(({ start, k, steps }) => {
      let m = start;
      return steps.map((s) => (m += s) / 10 ** k);
    });
  const special = fc.constantFrom(0, -0, Number.MIN_VALUE, -Number.MIN_VALUE, 2.2250738585072014e-308, Number.MAX_VALUE, -Number.MAX_VALUE, 1e-300, 2 ** 52, 2 ** 53 + 2, 0.1, 1 / 3);
  return fc.oneof(
    exact(fc.double({ noNaN: true, noDefaultInfinity: true })),
    exact(decimal),
    oneK,
    walk,
    exact(fc.oneof(special, decimal)),
    fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: n }))
      .map(([v, runs]) => runsOf([v, v + 1, -v], runs, n)),
  );
}

/** Repeats values[k % values.length] for runs[k] points until n points. */
function runsOf<T>(values: T[], runs: number[], n: number): T[] {
  const out: T[] = [];
  let k = 0;
  while (out.length < n) {
    const len = runs[k % runs.length];
    for (let j = 0; j < len && out.length < n; j++) out.push(values[k % values.length]);
    k++;
  }
  return out;
}

function int64Values(n: number): fc.Arbitrary<bigint[]> {
  const exact = (a: fc.Arbitrary<bigint>) => fc.array(a, { minLength: n, maxLength: n });
  const edge = fc.constantFrom(INT64_MIN, INT64_MAX, 0n, -1n, 2n ** 51n - 1n, -(2n ** 51n) + 1n, 2n ** 51n, -(2n ** 51n), 2n ** 53n + 1n);
  return fc.oneof(
    exact(fc.bigInt({ min: INT64_MIN, max: INT64_MAX })),
    exact(fc.bigInt({ min: -(2n ** 51n) + 1n, max: 2n ** 51n - 1n })),
    exact(fc.oneof(edge, fc.bigInt({ min: -1000n, max: 1000n }))),
    fc.tuple(fc.bigInt({ min: -(2n ** 40n), max: 2n ** 40n }), fc.array(fc.integer({ min: 0, max: 5 }), { minLength: n, maxLength: n }))
      .map(([start, steps]) => {
        let v = start;
        return steps.map((s) => (v += BigInt(s)));
      }),
  );
}

function stringValues(n: number): fc.Arbitrary<string[]> {
  const str = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'binary-ascii', maxLength: 6 }), fc.constantFrom('', 'B-1042', 'é', '𝄞', '\u0000', 'x'.repeat(31), 'y'.repeat(32), 'é'.repeat(20), 'a"b\\c\u007f'));
  return fc.oneof(
    fc.array(str, { minLength: n, maxLength: n }),
    fc.tuple(fc.array(str, { minLength: 1, maxLength: 4 }), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }))
      .map(([pool, runs]) => runsOf(pool, runs, n)),
  );
}

function qualityValues(n: number): fc.Arbitrary<number[]> {
  const q = fc.oneof(fc.constantFrom(0, 63, 64, 191, 192, 255, 2 ** 32 - 1), fc.integer({ min: 0, max: 2 ** 32 - 1 }));
  return fc.oneof(
    fc.constant(new Array<number>(n).fill(192)),
    fc.array(q, { minLength: n, maxLength: n }),
    fc.tuple(fc.array(q, { minLength: 1, maxLength: 3 }), fc.array(fc.integer({ min: 1, max: 90 }), { minLength: 1, maxLength: 5 }))
      .map(([pool, runs]) => runsOf(pool, runs, n)),
  );
}

function valuesArb(type: ValueType, n: number): fc.Arbitrary<Array<number | bigint | string>> {
  switch (type) {
    case 'float64': return floatValues(n);
    case 'int64': return int64Values(n);
    case 'boolean': return fc.oneof(
      fc.array(fc.integer({ min: 0, max: 1 }), { minLength: n, maxLength: n }),
      fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 6 }).map((runs) => runsOf([0, 1], runs, n)),
    );
    case 'enum': return fc.oneof(
      fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { minLength: n, maxLength: n }),
      fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 6 }).map((runs) => runsOf([0, 3, 5, 1], runs, n)),
    );
    case 'string': return stringValues(n);
  }
}

export function pointRunArb(type: ValueType): fc.Arbitrary<PointRun> {
  return lengthArb.chain((n) =>
    fc.record({
      deltas: deltasArb(n),
      values: valuesArb(type, n),
      quality: qualityValues(n),
      o0: fc.oneof(fc.constant(0), fc.integer({ min: -(2 ** 50), max: 2 ** 50 })),
      where: fc.oneof(fc.constantFrom(0, 1), fc.double({ min: 0, max: 1, noNaN: true })),
    }).map(({ deltas, values, quality, o0, where }) => {
      const spanNs = deltas.reduce((a, d) => a + d, 0);
      const span = BigInt(spanNs);
      // Offsets must stay exact doubles: drop the base shift for runs spanning nearly 2^53.
      if (Math.abs(o0) + spanNs >= 2 ** 53) o0 = 0;
      // Place the run anywhere in int64 such that its last time still fits.
      const room = INT64_MAX - span - INT64_MIN;
      const firstTs = INT64_MIN + (room * BigInt(Math.round(where * 1e9))) / 1_000_000_000n;
      return { type, firstTs, o0, deltas, values, quality };
    }),
  );
}

export function toColumns(run: PointRun): PointColumns {
  const n = run.values.length;
  const cols = createPointColumns(run.type, n);
  cols.count = n;
  cols.tsBase = run.firstTs - BigInt(run.o0);
  let o = run.o0;
  for (let i = 0; i < n; i++) {
    if (i > 0) o += run.deltas[i - 1];
    cols.tsOffset[i] = o;
    cols.quality[i] = run.quality[i];
    const v = run.values[i];
    if (cols.f64) cols.f64[i] = v as number;
    else if (cols.i64) cols.i64[i] = v as bigint;
    else if (cols.u8) cols.u8[i] = v as number;
    else if (cols.ord) cols.ord[i] = v as number;
    else if (cols.str) cols.str[i] = v as string;
  }
  return cols;
}

/** Absolute time of point i. */
export const timeAt = (c: PointColumns, i: number): bigint => c.tsBase + BigInt(c.tsOffset[i]);

/**
 * float64 runs of full-precision noise spread around zero (vibration): exponents fall
 * geometrically below the largest, which format version 4 stores in RICE. Apart from
 * pointRunArb so that the runs other suites draw from it stay the same.
 */
export function noiseRunArb(): fc.Arbitrary<PointRun> {
  return pointRunArb('float64').chain((run) =>
    fc.tuple(fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { minLength: run.values.length, maxLength: run.values.length }), fc.constantFrom(1, 8, 1e-3, 3e5))
      .map(([us, a]) => ({ ...run, values: us.map((u) => (u / 2 ** 32 - 0.5) * a) })));
}
