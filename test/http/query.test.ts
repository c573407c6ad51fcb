// The query string's pairs: the split fast path must give exactly what URLSearchParams gives.
import t from 'tap';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { Type } from '@sinclair/typebox';
import { parseQuery, queryPairs } from '../../src/http/query.js';

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
