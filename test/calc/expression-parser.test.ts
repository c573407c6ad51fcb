// The expression language's lexer, parser and printer: positions in errors, the quoting
// and precedence rules, printing and parsing back to the same tree, and garbage never
// escaping as anything but an invalid-expression error pointing inside the text.
import t from 'tap';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { isServiceError, ServiceError } from '../../src/errors.js';
import { parseExpression, printExpression, type ExprNode } from '../../src/calc/expression/index.js';

const SEED = 20261127;
t.comment(`fast-check seed ${SEED} (replay a failure with the same seed and the printed path)`);
const fcOpts = (numRuns: number) => ({ seed: SEED, numRuns });

/** The tree without its spans, to compare trees parsed from different texts. */
function shape(node: ExprNode): unknown {
  switch (node.kind) {
    case 'number': return ['number', node.value, node.unit];
    case 'duration': return ['duration', node.ns];
    case 'string': return ['string', node.value];
    case 'bool': return ['bool', node.value];
    case 'reference': return ['ref', node.name];
    case 'unary': return [node.op, shape(node.operand)];
    case 'binary': return [node.op, shape(node.left), shape(node.right)];
    case 'if': return ['if', shape(node.cond), shape(node.then), shape(node.else)];
    case 'call': return ['call', node.name, node.args.map(shape)];
  }
}

function parseError(text: string): ServiceError {
  try {
    parseExpression(text);
  } catch (e) {
    if (isServiceError(e)) return e;
    throw e;
  }
  throw new Error(`parsed: ${text}`);
}

t.test('precedence, quoting and the conditional read as the README says', async (t) => {
  t.same(shape(parseExpression('a * b + c')), ['+', ['*', ['ref', 'a'], ['ref', 'b']], ['ref', 'c']]);
  t.same(shape(parseExpression('-2 ^ 2')), ['-', ['^', ['number', 2, null], ['number', 2, null]]], 'unary minus binds looser than ^');
  t.same(shape(parseExpression('2 ^ 3 ^ 2')), ['^', ['number', 2, null], ['^', ['number', 3, null], ['number', 2, null]]], '^ is right-associative');
  t.same(shape(parseExpression('not a and b or c')), ['or', ['and', ['not', ['ref', 'a']], ['ref', 'b']], ['ref', 'c']]);
  t.same(shape(parseExpression("'Discharge Pressure' > 5 bar")), ['>', ['ref', 'Discharge Pressure'], ['number', 5, 'bar']]);
  t.same(shape(parseExpression("'..|Flow' + '../Pump 2|Flow'")), ['+', ['ref', '..|Flow'], ['ref', '../Pump 2|Flow']]);
  t.same(shape(parseExpression("'O''Brien'")), ['ref', "O'Brien"], 'a quote inside a reference is doubled');
  t.same(shape(parseExpression('State == "Running"')), ['==', ['ref', 'State'], ['string', 'Running']]);
  t.same(shape(parseExpression('3.2 m3/h * 2')), ['*', ['number', 3.2, 'm3/h'], ['number', 2, null]], 'a unit with a slash, then an operator after a blank');
  t.same(shape(parseExpression('5 `%`')), ['number', 5, '%'], 'a backticked unit');
  t.same(shape(parseExpression('avg(x, 5m)')), ['call', 'avg', [['ref', 'x'], ['duration', 300e9]]], '5m glued is five minutes');
  t.same(shape(parseExpression('5 m')), ['number', 5, 'm'], '5 m spaced is five metres');
  t.same(shape(parseExpression('if a > 1 then 2 else 3 + 4')), ['if', ['>', ['ref', 'a'], ['number', 1, null]], ['number', 2, null], ['+', ['number', 3, null], ['number', 4, null]]],
    'the else branch extends as far as it can');
  t.same(shape(parseExpression('if x then 5 else 6')), ['if', ['ref', 'x'], ['number', 5, null], ['number', 6, null]], 'a keyword after a number is not its unit');
  t.same(shape(parseExpression('1e3 + 2.5E-2')), ['+', ['number', 1000, null], ['number', 0.025, null]]);
});

t.test('a syntax error names the position (offset, line, column), what was expected and what was found', async (t) => {
  const e = parseError('1 +* 2');
  t.equal(e.code, 'invalid-expression');
  t.equal(e.status, 400);
  t.same(e.details?.position, { offset: 3, line: 1, column: 4 });
  t.ok((e.details?.expected as string[]).includes('a number'));
  t.equal(e.details?.found, '"*"');
  t.equal(e.details?.field, 'expression');

  const multi = parseError('a +\n  * b');
  t.same(multi.details?.position, { offset: 6, line: 2, column: 3 }, 'lines and columns count from 1 after a newline');

  const open = parseError('max(a, b');
  t.same(open.details?.expected, ['","', '")"']);
  t.equal(open.details?.found, 'the end of the expression');

  const quote = parseError("'Flow + 1");
  t.match(quote.message, /closing/);
  t.equal((quote.details?.position as { offset: number }).offset, 9);

  const chain = parseError('a < b < c');
  t.match(chain.message, /do not chain/);
  t.equal((chain.details?.position as { column: number }).column, 7);

  t.equal(parseError('a = b').details?.found, '"= b"', 'a single = is not an operator');
  t.match(parseError('1e999').message, /finite number/);
  t.match(parseError('').message, /expected/);
  t.equal(parseError('a b').code, 'invalid-expression', 'two operands side by side');
});

t.test('deep nesting and long texts are refused with an error, not a stack overflow', async (t) => {
  const deep = parseError('('.repeat(4000) + 'a' + ')'.repeat(4000));
  t.match(deep.message, /nests deeper/);
  const minus = parseError('-'.repeat(5000) + 'a');
  t.match(minus.message, /nests deeper/);
  const long = parseError('a + '.repeat(3000) + 'a');
  t.match(long.message, /longer than/);
});

const UNITS = ['bar', 'm³/h', '°C', '%', 'kg/m³', 'psi', 'm', 'min'];
const NAMES = ['a', 'Flow', 'Discharge Pressure', '..|Flow', '../Pump 2|Flow', "O'Brien", 'if2', '_x', 'then', 'Température'];
const DURATIONS: Array<[string, number]> = [['10s', 10e9], ['5m', 300e9], ['1h', 3600e9], ['1d', 86400e9], ['250ms', 250e6]];
const BINARY = ['+', '-', '*', '/', '%', '^', '<', '<=', '>', '>=', '==', '!=', 'and', 'or'] as const;

const leaf: fc.Arbitrary<ExprNode> = fc.oneof(
  fc.record({ value: fc.double({ min: 0, max: 1e300, noNaN: true }), unit: fc.option(fc.constantFrom(...UNITS), { nil: null }) })
    .map(({ value, unit }) => ({ kind: 'number' as const, value: value === 0 ? 0 : value, unit, start: 0, end: 0 })),
  fc.constantFrom(...DURATIONS).map(([text, ns]) => ({ kind: 'duration' as const, ns, text, start: 0, end: 0 })),
  fc.string({ maxLength: 8 }).map((value) => ({ kind: 'string' as const, value, start: 0, end: 0 })),
  fc.boolean().map((value) => ({ kind: 'bool' as const, value, start: 0, end: 0 })),
  fc.oneof(fc.constantFrom(...NAMES), fc.string({ minLength: 1, maxLength: 8 })).map((name) => ({ kind: 'reference' as const, name, quoted: false, start: 0, end: 0 })),
);

const tree = fc.letrec<{ node: ExprNode }>((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ op: fc.constantFrom('-' as const, 'not' as const), operand: tie('node') }).map(({ op, operand }) => ({ kind: 'unary' as const, op, operand, start: 0, end: 0 })),
    fc.record({ op: fc.constantFrom(...BINARY), left: tie('node'), right: tie('node') }).map((b) => ({ kind: 'binary' as const, ...b, start: 0, end: 0 })),
    fc.record({ cond: tie('node'), then: tie('node'), else: tie('node') }).map((b) => ({ kind: 'if' as const, ...b, start: 0, end: 0 })),
    fc.record({ name: fc.constantFrom('abs', 'max', 'avg', 'time_since', 'f_1'), args: fc.array(tie('node'), { maxLength: 3 }) })
      .map((c) => ({ kind: 'call' as const, ...c, start: 0, end: 0 })),
  ),
})).node;

t.test('printing a tree and parsing it back gives the same tree (property)', async (t) => {
  fc.assert(fc.property(tree, (node) => {
    const text = printExpression(node);
    return isDeepStrictEqual(shape(parseExpression(text)), shape(node));
  }), fcOpts(800));
  t.pass('800 random trees printed and parsed back unchanged');
});

const EXPRESSION_CHARS = [...'abcxyz019.+-*/%^<>=!()," \'`\n\t|_e', 'if', 'then', 'else', 'and', 'or', 'not', 'bar', '5m', 'avg(', '°'];

t.test('any text parses or fails with invalid-expression pointing inside it (property)', async (t) => {
  const text = fc.oneof(
    fc.array(fc.constantFrom(...EXPRESSION_CHARS), { maxLength: 40 }).map((parts) => parts.join('')),
    fc.string({ unit: 'binary', maxLength: 40 }),
    tree.chain((node) => {
      const printed = printExpression(node);
      return fc.tuple(fc.nat(printed.length), fc.nat(printed.length)).map(([i, j]) => printed.slice(0, Math.min(i, j)) + printed.slice(Math.max(i, j) + 1));
    }),
  );
  let failures = 0;
  fc.assert(fc.property(text, (s) => {
    try {
      parseExpression(s);
    } catch (e) {
      if (!(e instanceof ServiceError) || e.code !== 'invalid-expression') return false;
      const p = e.details?.position as { offset: number; line: number; column: number };
      failures++;
      return p.offset >= 0 && p.offset <= s.length && p.line >= 1 && p.column >= 1
        && Array.isArray(e.details?.expected) && typeof e.details?.found === 'string';
    }
    return true;
  }), fcOpts(3000));
  t.ok(failures > 500, `most garbage fails to parse (${failures} of 3000)`);
});
