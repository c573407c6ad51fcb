// The query string's pairs: the split fast path must give exactly what URLSearchParams gives.
import t from 'tap';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { Type } from '@sinclair/typebox';
import { parseQuery, queryPairs } from '../../src/http/query.js';
import { Int64 } from '../../src/http/schemas/common.js';

const SEED = 20261121;
t.comment(`fast-check seed ${SEED}`);
const piece = fc.string({ unit: fc.constantFrom('a', 'b', 'z', '0', '9', '_', '-', '.', '=', '&', '%', '+', '2', 'F', ' ', 'é', '~'), maxLength: 24 });

t.test('queryPairs equals URLSearchParams on any query string', async (t) => {
  // one assertion for the whole property: fc.assert throws with the shrunk counterexample
  t.doesNotThrow(() => fc.assert(fc.property(piece, (raw) => isDeepStrictEqual([...queryPairs(raw)], [...new URLSearchParams(raw)])), { seed: SEED, numRuns: 2000 }));
});

t.test('split path: empty pieces, names without a value, repeated names', async (t) => {
  t.same([...queryPairs('a=1&&b&c=&a=2=3')], [['a', '1'], ['b', ''], ['c', ''], ['a', '2=3']]);
  t.same([...queryPairs('')], []);
  t.same([...queryPairs('x=%41+b')], [['x', 'A b']], 'percent and plus go through URLSearchParams');
});

t.test('parseQuery coerces by the schema on both paths', async (t) => {
  const schema = Type.Object({ start_ns: Type.Integer(), mode: Type.String(), tag: Type.Array(Type.String()) });
  t.same(parseQuery('start_ns=5&mode=a&tag=x&tag=y', schema), { start_ns: 5, mode: 'a', tag: ['x', 'y'] });
  t.same(parseQuery('start_ns=5&mode=a+b&tag=%78', schema), { start_ns: 5, mode: 'a b', tag: ['x'] });
  t.same(parseQuery('start_ns=five', schema), { start_ns: 'five' }, 'a non-integer stays text for the validator to name');
});

t.test('Int64 parameters: a safe value as a number, any other int64 as an exact bigint', async (t) => {
  const schema = Type.Object({ start_ns: Int64() });
  const int64 = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -(10n ** 16n), max: 10n ** 16n }), fc.integer({ min: -1000, max: 1000 }).map(BigInt));
  t.doesNotThrow(() => fc.assert(fc.property(int64, (b) => {
    const v = parseQuery(`start_ns=${b}`, schema).start_ns;
    const safe = b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER);
    return safe ? typeof v === 'number' && BigInt(v) === b : v === b;
  }), { seed: SEED, numRuns: 3000 }));
  t.equal(Object.is(parseQuery('start_ns=-0', schema).start_ns, 0), true, "'-0' is 0");
  t.equal(parseQuery('start_ns=007', schema).start_ns, '007', 'leading zeros stay text for the validator');
});

t.test('parameter names that are also Object.prototype members are own values', async (t) => {
  const q = parseQuery('toString=1&hasOwnProperty=2&valueOf=3&valueOf=4&__proto__=5&constructor=6', Type.Object({}));
  t.same(Object.keys(q), ['toString', 'hasOwnProperty', 'valueOf'], 'the prototype names are dropped; the others are own properties');
  t.equal(q.toString, '1');
  t.same(q.valueOf, ['3', '4'], 'a repeated name is an array (the validator refuses it)');
  t.equal(Object.getPrototypeOf(q), Object.prototype, 'the prototype is untouched');
});
