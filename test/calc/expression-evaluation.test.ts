// Evaluation of compiled expressions over columns: stepped alignment across inputs with
// different timestamps and bases, quality (the worst input that contributed), undefined
// results as bad quality with a reason (never NaN), each function, the grid helpers, and
// the compiled plan against a slow reference interpreter over random columns (property).
import t from 'tap';
import fc from 'fast-check';
import {
  EVALUATION_REASONS, GridScratch, checkExpression, compileExpression, parseExpression, periodicGrid, printExpression, unionGrid,
  type CheckOptions, type EvaluationGrid, type ExprNode, type PointColumns,
} from '../../src/calc/expression/index.js';
import { BASE, SEC, floats, gridAt, scope, typed } from './expression-fixture.js';
import { ReferenceInterpreter } from './expression-reference.js';

const SEED = 20261127;
t.comment(`fast-check seed ${SEED} (replay a failure with the same seed and the printed path)`);

const off: CheckOptions = { unitCheck: 'off' };

function run(text: string, columns: PointColumns[], grid: EvaluationGrid, options: CheckOptions = off) {
  const r = compileExpression(checkExpression(text, scope, options)).evaluate(columns, grid);
  return { values: [...r.values], quality: [...r.quality], reason: [...r.reason].map((c) => EVALUATION_REASONS[c]) };
}

t.test('each input\'s value at an instant is its last point at or before it (stepped), whatever the bases', async (t) => {
  const a = floats([[1, 10], [4, 40]]);
  const b = floats([[2, 2], [3, 3]], BASE - 7n * BigInt(SEC)); // another base, same absolute times
  const r = run('a * b', [a, b], gridAt([0, 1, 2, 2.5, 3, 4, 100]));
  t.same(r.values, [0, 0, 20, 20, 30, 120, 120]);
  t.same(r.reason, ['no-input-value', 'no-input-value', 'none', 'none', 'none', 'none', 'none']);
  t.same(r.quality, [0, 0, 192, 192, 192, 192, 192]);
});

t.test('quality is the worst of the input points that contributed; a constant is good', async (t) => {
  const a = floats([[0, 1, 192], [1, 2, 100], [2, 3, 192]]);
  const b = floats([[0, 1, 150]]);
  t.same(run('a + b', [a, b], gridAt([0, 1, 2])).quality, [150, 100, 150]);
  t.same(run('a * 2', [a], gridAt([0, 1])).quality, [192, 100]);
  t.same(run('1 + 2', [], gridAt([0])).values, [3]);
  t.same(run('1 + 2', [], gridAt([0])).quality, [192]);
  // Only the branch taken contributes.
  const cond = floats([[0, 1], [1, -1]]);
  t.same(run('if c > 0 then a else b', [cond, a, b], gridAt([0, 1])).quality, [192, 150]);
});

t.test('undefined results are bad quality with a reason, never NaN or Infinity', async (t) => {
  const a = floats([[0, 1], [1, -4], [2, 0]]);
  const z = floats([[0, 0]]);
  const div = run('a / b', [a, z], gridAt([0, 1]));
  t.same(div.values, [0, 0]);
  t.same(div.quality, [0, 0]);
  t.same(div.reason, ['division-by-zero', 'division-by-zero']);
  t.same(run('a % b', [a, z], gridAt([0])).reason, ['division-by-zero']);
  t.same(run('sqrt(a)', [a], gridAt([0, 1])).reason, ['none', 'domain-error']);
  t.same(run('ln(a)', [a], gridAt([0, 1, 2])).reason, ['none', 'domain-error', 'domain-error']);
  t.same(run('log10(a)', [a], gridAt([2])).reason, ['domain-error']);
  t.same(run('a ^ 0.5', [a], gridAt([1])).reason, ['domain-error']);
  const big = run('a * 1e308 * 10', [floats([[0, 5]])], gridAt([0]));
  t.same([big.values, big.reason], [[0], ['non-finite']]);
  t.same(run('exp(a * 1000)', [a], gridAt([0])).reason, ['non-finite']);
  // The most basic reason wins: no input value before a division by zero.
  t.same(run('c / b', [floats([[5, 1]]), z], gridAt([0])).reason, ['no-input-value']);
  // A guarded division is defined: and/or and if decide per instant.
  const guarded = run('if b != 0 then a / b else -1', [z, a], gridAt([0]));
  t.same([guarded.values, guarded.reason], [[-1], ['none']]);
  t.same(run('b != 0 and a / b > 1', [z, a], gridAt([0])).values, [0]);
  t.same(run('b == 0 or a / b > 1', [z, a], gridAt([0])).values, [1]);
});

t.test('the math functions', async (t) => {
  const x = floats([[0, -2.5]]);
  const y = floats([[0, 4]]);
  const one = (text: string) => {
    const checked = checkExpression(text, scope, off);
    const byKey: Record<string, PointColumns> = { A: x, B: y };
    return compileExpression(checked).evaluate(checked.inputs.map((i) => byKey[i.key]), gridAt([0])).values[0];
  };
  t.equal(one('abs(a)'), 2.5);
  t.equal(one('min(a, b, 3)'), -2.5);
  t.equal(one('max(a, b, 3)'), 4);
  t.equal(one('sqrt(b)'), 2);
  t.equal(one('exp(a - a)'), 1);
  t.equal(one('ln(b)'), Math.log(4));
  t.equal(one('log10(b * 25)'), 2);
  t.equal(one('pow(b, 0.5)'), 2);
  t.equal(one('b ^ 2'), 16);
  t.equal(one('round(a)'), -3, 'half away from zero');
  t.equal(one('round(b / 3, 2)'), 1.33);
  t.equal(one('floor(a)'), -3);
  t.equal(one('ceil(a)'), -2);
  t.equal(one('clamp(b, 0, 3)'), 3);
  t.equal(one('clamp(a, 0, 3)'), 0);
  t.equal(one('sin(a - a)'), 0);
  t.equal(one('cos(a - a)'), 1);
  t.equal(one('tan(a - a)'), 0);
  t.equal(one('7 % b'), 3);
  t.equal(one('-a'), 2.5);
});

t.test('functions over time: prev, delta, rate, integral, avg, min, max over a trailing window', async (t) => {
  // a: 0 s → 10, 10 s → 20, 20 s → 50, 30 s → 30
  const a = floats([[0, 10], [10, 20], [20, 50], [30, 30]]);
  const g = gridAt([5, 10, 25, 30, 40]);
  t.same(run('prev(a)', [a], g).values, [0, 10, 20, 50, 50]);
  t.same(run('prev(a)', [a], g).reason.slice(0, 2), ['no-input-value', 'none']);
  t.same(run('delta(a)', [a], g).values, [0, 10, 30, -20, -20]);
  t.same(run('rate(a)', [a], g).values, [0, 1, 3, -2, -2]);
  // integral over [t − 20 s, t], value·s: at 25: 10·5 (from 5 to 10) + 20·10 + 50·5 = 500.
  t.same(run('integral(a, 20s)', [a], g).values, [50, 100, 500, 700, 800]);
  // avg: the integral over the time covered (from the first point when the series starts later).
  t.same(run('avg(a, 20s)', [a], g).values, [10, 10, 25, 35, 40]);
  t.same(run('min(a, 20s)', [a], g).values, [10, 10, 10, 20, 30]);
  t.same(run('max(a, 20s)', [a], g).values, [10, 20, 50, 50, 50]);
  // At the first point itself no time is covered: avg is that point's value.
  t.same(run('avg(a, 1m)', [a], gridAt([0])).values, [10]);
  // Over a sub-expression: its stepped series at its inputs' own timestamps.
  const b = floats([[15, 1]]);
  // A window reaching back to where the sub-expression had no value (b starts at 15 s) is undefined.
  const sub = run('max(a + b, 20s)', [a, b], gridAt([15, 25, 36, 55]));
  t.same(sub.values, [0, 0, 51, 31]);
  t.same(sub.reason, ['no-input-value', 'no-input-value', 'none', 'none']);
  // Quality of a window is the worst point in it.
  const q = floats([[0, 1, 192], [10, 1, 80], [20, 1, 192]]);
  t.same(run('avg(a, 5s)', [q], gridAt([12, 20, 40])).quality, [80, 80, 192]);
});

t.test('time_since counts seconds since the condition became true', async (t) => {
  const a = floats([[0, 0], [10, 5], [20, 7], [30, 0], [40, 9]]);
  const r = run('time_since(a > 1)', [a], gridAt([5, 10, 15, 25, 35, 50]));
  t.same(r.values, [0, 0, 5, 15, 0, 10]);
  t.same(r.reason, ['condition-false', 'none', 'none', 'none', 'condition-false', 'none']);
  const since = floats([[0, 5]]);
  t.same(run('time_since(a > 1, 1m)', [since], gridAt([30, 60, 61])).reason, ['none', 'none', 'lookback-exceeded'],
    'a stretch that began before the look-back is not measured');
  t.same(run('time_since(a > 1)', [since], gridAt([-1])).reason, ['no-input-value']);
});

t.test('int64, bool, enum and string inputs', async (t) => {
  const count = typed('int64', [[0, 3], [1, 9007199254740993]]);
  t.same(run('Count * 2', [count], gridAt([0, 1])).values, [6, 2 * 9007199254740992]);
  const running = typed('boolean', [[0, 1], [5, 0]]);
  t.same(run('if Running then 1 else 2', [running], gridAt([1, 6])).values, [1, 2]);
  t.same(run('Running == true', [running], gridAt([1, 6])).values, [1, 0]);
  const state = typed('enum', [[0, 0], [5, 1], [9, 2]]);
  t.same(run('State == "Running"', [state], gridAt([1, 6, 10])).values, [0, 1, 0]);
  t.same(run('State != "Tripped"', [state], gridAt([1, 10])).values, [1, 0]);
  t.same(run('time_since(State == "Running")', [state], gridAt([7])).values, [2]);
  const mode = typed('string', [[0, 'auto'], [5, 'manual']]);
  const mode2 = typed('string', [[0, 'manual']]);
  t.same(run('Mode == "auto"', [mode], gridAt([1, 6])).values, [1, 0]);
  t.same(run("Mode == 'Mode 2'", [mode, mode2], gridAt([1, 6])).values, [0, 1]);
  t.same(run('Mode != "auto"', [mode], gridAt([-1])).reason, ['no-input-value']);
});

t.test('evaluateInto fills caller-owned arrays and a plan is reusable', async (t) => {
  const plan = compileExpression(checkExpression('a + 1', scope, off));
  const out = { count: 0, values: new Float64Array(8), quality: new Uint32Array(8), reason: new Uint8Array(8) };
  plan.evaluateInto([floats([[0, 1]])], gridAt([0, 1]), out);
  t.same([out.count, out.values[0], out.values[1]], [2, 2, 2]);
  plan.evaluateInto([floats([[0, 5]])], gridAt([0]), out);
  t.same([out.count, out.values[0]], [1, 6]);
  // More instants than one block (1024) with the cursors carried across blocks.
  const many = floats(Array.from({ length: 3000 }, (_, i) => [i * 2, i] as [number, number]));
  const g = gridAt(Array.from({ length: 5000 }, (_, i) => i + 0.5));
  const r = plan.evaluate([many], g);
  t.equal(r.values[4999], Math.floor(4999.5 / 2) + 1);
  t.equal(r.values[2047], 1024);
});

t.test('grids: the union of input timestamps and periodic instants, half-open', async (t) => {
  const a = floats([[-5, 0], [0, 0], [1, 0], [3, 0]]);
  const b = floats([[1, 0], [2, 0], [4, 0]], BASE + 123n);
  const g = unionGrid([a, b], BASE, BASE + 4n * BigInt(SEC));
  t.same([...g.tsOffset], [0, SEC, 2 * SEC, 3 * SEC], 'look-back points and the end are left out; a shared instant once');
  t.equal(g.count, 4);
  const p = periodicGrid(BASE + 1n, BASE + 10n * BigInt(SEC), 3n * BigInt(SEC), 2n);
  t.same([...p.tsOffset].map((x) => BigInt(x) + p.tsBase), [0n, 3n, 6n, 9n].map((k) => BASE + 2n + k * BigInt(SEC)));
  t.ok([...p.tsOffset].every((x) => (BigInt(x) + p.tsBase - 2n) % (3n * BigInt(SEC)) === 0n), 'instants are k·interval + align');
  t.equal(periodicGrid(BASE, BASE, 1n).count, 0);
  t.throws(() => periodicGrid(BASE, BASE + 1n, 0n), { code: 'invalid-request' });
  t.throws(() => unionGrid([], BASE, BASE + 2n ** 54n), { code: 'invalid-request' });
});

t.test('the union grid equals the sorted set of timestamps in range, for any number of inputs (property)', async (t) => {
  const col = fc.tuple(fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 20 }), fc.integer({ min: -50, max: 50 }))
    .map(([seconds, shift]) => floats([...seconds].sort((x, y) => x - y).map((s) => [s, 0] as [number, number]), BASE + BigInt(shift) * 1_000_003n));
  fc.assert(fc.property(fc.array(col, { maxLength: 6 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 40 }), (cols, from, span) => {
    const start = BASE + BigInt(from) * BigInt(SEC);
    const end = start + BigInt(span) * BigInt(SEC);
    const want = new Set<bigint>();
    for (const c of cols) for (let i = 0; i < c.count; i++) {
      const at = c.tsBase + BigInt(c.tsOffset[i]);
      if (at >= start && at < end) want.add(at);
    }
    const g = unionGrid(cols, start, end);
    const got = [...g.tsOffset.subarray(0, g.count)].map((x) => g.tsBase + BigInt(x));
    return g.count === want.size && got.every((x, i) => x === [...want].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0))[i]);
  }), { seed: SEED, numRuns: 500 });
  t.pass('500 random input sets');
});

t.test('a union grid carries each input\'s step-hold index: its last point at or before every instant (property, reused scratch)', async (t) => {
  const col = fc.tuple(fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 30 }), fc.integer({ min: -50, max: 50 }))
    .map(([seconds, shift]) => floats([...seconds].sort((x, y) => x - y).map((s) => [s, s] as [number, number]), BASE + BigInt(shift) * 1_000_003n));
  // One scratch across every run, as a worker keeps it: grids of any size in it, one after another.
  const scratch = new GridScratch();
  fc.assert(fc.property(fc.array(col, { maxLength: 6 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 40 }), fc.boolean(), (cols, from, span, reuse) => {
    const start = BASE + BigInt(from) * BigInt(SEC);
    const g = unionGrid(cols, start, start + BigInt(span) * BigInt(SEC), reuse ? scratch : undefined);
    for (const [k, c] of cols.entries()) {
      const idx = g.steps!.index[k];
      if (g.steps!.columns[k] !== c) return false;
      for (let i = 0; i < g.count; i++) {
        const at = g.tsBase + BigInt(g.tsOffset[i]);
        let want = -1;
        for (let p = 0; p < c.count; p++) if (c.tsBase + BigInt(c.tsOffset[p]) <= at) want = p;
        if (idx[i] !== want) throw new Error(`column ${k} at ${at - BASE} ns: index ${idx[i]}, want ${want}`);
      }
    }
    return true;
  }), { seed: SEED, numRuns: 500 });
  t.pass('500 random input sets');
});

// A product plus a term runs as one instruction (MulAdd): either order, and with operands
// that carry reasons (b is 0 at some points, so a / b is undefined there).
for (const text of ['a * b + c', 'c + a * b', 'a / b * c + a']) t.test(`${text} over equal, offset and disjoint timestamps equals the reference, on union and periodic grids`, async (t) => {
  const checked = checkExpression(text, scope, off);
  const plan = compileExpression(checked);
  const parsed = parseExpression(text);
  const seconds = (n: number, step: number, at: number) => Array.from({ length: n }, (_, i) => at + i * step);
  const col = (s: number[], salt: number, base = BASE) => floats(s.map((x, i) => [x, ((i * 7 + salt) % 11) - 5, i % 5 === 0 ? 150 : 192] as [number, number, number]), base);
  const shapes: Record<string, PointColumns[]> = {
    // The same instants in all three (another base for one: the same absolute times).
    equal: [col(seconds(1500, 1, 0), 1), col(seconds(1500, 1, 0), 2, BASE - 5n), col(seconds(1500, 1, 0), 3)],
    // Interleaved phases, one input at half the rate, so most instants move one input only.
    offset: [col(seconds(1500, 1, 0), 1), col(seconds(1500, 1, 0.333), 2), col(seconds(750, 2, 0.667), 3)],
    // Disjoint ranges: c only after a and b end, b only after a ends (values held across the gap).
    disjoint: [col(seconds(500, 1, 0), 1), col(seconds(500, 1, 500.5), 2), col(seconds(500, 1, 1001.25), 3)],
  };
  const scratch = new GridScratch();
  for (const [name, [a, b, c]] of Object.entries(shapes)) {
    const reference = new ReferenceInterpreter({ a, b, c });
    const start = BASE - BigInt(SEC), end = BASE + 1600n * BigInt(SEC);
    for (const grid of [unionGrid([a, b, c], start, end, scratch), periodicGrid(start, end, 700_000_000n, 0n)]) {
      const out = plan.evaluate(checked.inputs.map((i) => ({ a, b, c })[i.key.toLowerCase() as 'a' | 'b' | 'c']), grid);
      let bad = 0;
      for (let i = 0; i < grid.count; i += 5) {
        const want = reference.evaluate(parsed, grid.tsBase + BigInt(grid.tsOffset[i]));
        if (want.value !== out.values[i] || want.quality !== out.quality[i] || want.reason !== out.reason[i]) bad++;
      }
      t.equal(bad, 0, `${name}, ${grid.steps ? 'union' : 'periodic'} grid of ${grid.count} instants`);
    }
  }
});

// ---- the property: compiled plan = reference interpreter over random columns and expressions.

const ref = fc.constantFrom('a', 'b', 'c').map((name): ExprNode => ({ kind: 'reference', name, quoted: false, start: 0, end: 0 }));
const small = fc.integer({ min: -3, max: 3 }).map((v): ExprNode => (v < 0
  ? { kind: 'unary', op: '-', operand: { kind: 'number', value: -v, unit: null, start: 0, end: 0 }, start: 0, end: 0 }
  : { kind: 'number', value: v, unit: null, start: 0, end: 0 }));
const window = fc.constantFrom<[string, number]>(['10s', 10e9], ['1m', 60e9], ['5m', 300e9])
  .map(([text, ns]): ExprNode => ({ kind: 'duration', ns, text, start: 0, end: 0 }));
const bin = (op: '+' | '-' | '*' | '/' | '%' | '<' | '<=' | '>' | '>=' | '==' | '!=' | 'and' | 'or', left: ExprNode, right: ExprNode): ExprNode =>
  ({ kind: 'binary', op, left, right, start: 0, end: 0 });
const call = (name: string, ...args: ExprNode[]): ExprNode => ({ kind: 'call', name, args, start: 0, end: 0 });
// Window arguments stay integer-valued so prefix sums and point-by-point sums agree exactly.
const integerArg = fc.oneof(ref, fc.tuple(fc.constantFrom('+' as const, '-' as const, '*' as const), ref, fc.oneof(ref, small)).map(([op, l, r]) => bin(op, l, r)));

const exprs = fc.letrec<{ num: ExprNode; bool: ExprNode }>((tie) => ({
  num: fc.oneof({ depthSize: 'small', maxDepth: 4 },
    ref, small,
    fc.tuple(fc.constantFrom('+' as const, '-' as const, '*' as const, '/' as const, '%' as const), tie('num'), tie('num')).map(([op, l, r]) => bin(op, l, r)),
    tie('num').map((x): ExprNode => ({ kind: 'unary', op: '-', operand: x, start: 0, end: 0 })),
    fc.tuple(fc.constantFrom('abs', 'sqrt', 'round'), tie('num')).map(([f, x]) => call(f, x)),
    fc.tuple(fc.constantFrom('min', 'max'), tie('num'), tie('num')).map(([f, x, y]) => call(f, x, y)),
    fc.tuple(tie('bool'), tie('num'), tie('num')).map(([c, x, y]): ExprNode => ({ kind: 'if', cond: c, then: x, else: y, start: 0, end: 0 })),
    fc.tuple(fc.constantFrom('prev', 'delta', 'rate'), integerArg).map(([f, x]) => call(f, x)),
    fc.tuple(fc.constantFrom('avg', 'min', 'max', 'integral'), integerArg, window).map(([f, x, w]) => call(f, x, w)),
    fc.tuple(ref, small, window).map(([x, k, w]) => call('time_since', bin('>', x, k), w)),
  ),
  bool: fc.oneof({ depthSize: 'small', maxDepth: 3 },
    fc.tuple(fc.constantFrom('<' as const, '<=' as const, '>' as const, '>=' as const, '==' as const, '!=' as const), tie('num'), tie('num')).map(([op, l, r]) => bin(op, l, r)),
    fc.tuple(fc.constantFrom('and' as const, 'or' as const), tie('bool'), tie('bool')).map(([op, l, r]) => bin(op, l, r)),
    tie('bool').map((x): ExprNode => ({ kind: 'unary', op: 'not', operand: x, start: 0, end: 0 })),
  ),
}));

/** Random columns: up to 25 points at whole seconds in [0, 400), small integer values, mixed qualities, a random base. */
const column = fc.tuple(
  fc.uniqueArray(fc.integer({ min: 0, max: 399 }), { maxLength: 25 }),
  fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 25, maxLength: 25 }),
  fc.array(fc.constantFrom(192, 192, 192, 150, 64, 0), { minLength: 25, maxLength: 25 }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(0, 192, 64),
).map(([seconds, values, qualities, baseShift, uniform]) => {
  // Two columns in three have one quality throughout (the engine's fast path), the rest mixed ones.
  const sorted = [...seconds].sort((x, y) => x - y);
  return floats(sorted.map((s, i) => [s, values[i], uniform > 0 ? uniform : qualities[i]] as [number, number, number]),
    BASE + BigInt(baseShift) * BigInt(SEC) / 7n);
});

t.test('compiled evaluation equals the reference interpreter on random expressions and columns (property)', async (t) => {
  let compared = 0;
  let defined = 0;
  fc.assert(fc.property(exprs.num, column, column, column, fc.boolean(), fc.integer({ min: 1, max: 50 }), (tree, a, b, c, union, step) => {
    const text = printExpression(tree);
    const checked = checkExpression(text, scope, off);
    const byKey: Record<string, PointColumns> = { A: a, B: b, C: c };
    const columns = checked.inputs.map((i) => byKey[i.key]);
    const start = BASE + 100n * BigInt(SEC);
    const end = BASE + 400n * BigInt(SEC);
    const grid = union ? unionGrid(columns, start, end) : periodicGrid(start, end, BigInt(step) * BigInt(SEC), 0n);
    const out = compileExpression(checked).evaluate(columns, grid);
    const reference = new ReferenceInterpreter({ a, b, c });
    const parsed = parseExpression(text);
    for (let i = 0; i < grid.count; i++) {
      const at = grid.tsBase + BigInt(grid.tsOffset[i]);
      const want = reference.evaluate(parsed, at);
      compared++;
      if (want.reason === 0) defined++;
      const close = want.value === out.values[i] || Math.abs(want.value - out.values[i]) <= 1e-9 * Math.max(1, Math.abs(want.value));
      if (!close || want.quality !== out.quality[i] || want.reason !== out.reason[i] || Number.isNaN(out.values[i])) {
        throw new Error(`${text} at ${at - BASE} ns: compiled ${out.values[i]}/${out.quality[i]}/${EVALUATION_REASONS[out.reason[i]]}, reference ${want.value}/${want.quality}/${EVALUATION_REASONS[want.reason]}`);
      }
    }
    return true;
  }), { seed: SEED, numRuns: 400 });
  t.ok(compared > 5000, `${compared} instants compared`);
  t.ok(defined > compared / 5, `${defined} of them defined`);
});
