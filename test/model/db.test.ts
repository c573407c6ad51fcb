// The Db adapter's one way of passing SQL arrays (sqlTextArray) against the configured
// backend: whatever strings go in come back out of a text[] cast unchanged, uuids cast
// to uuid[], and objects and arrays still travel as JSON for jsonb columns.
import t from 'tap';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { testDb } from '../helpers/db.js';
import { sqlTextArray } from '../../src/model/db.js';

const SEED = 20260517;
t.comment(`fast-check seed ${SEED}`);

t.test('sqlTextArray literals round-trip through the database', async (t) => {
  const db = await testDb(t);

  t.test('any strings, NULLs included, come back from a text[] cast as they went in', async (t) => {
    // The database refuses NUL in text, so strings are drawn without it.
    const text = fc.string({ unit: 'binary', maxLength: 24 }).map((s) => s.replace(/\u0000/g, ''));
    const samples = fc.sample(fc.array(fc.oneof(text, fc.constant(null), fc.constantFrom('NULL', '"', '\\', '{}', ',', ' a ', '')), { maxLength: 8 }), { seed: SEED, numRuns: 150 });
    for (const values of samples) {
      const { rows } = await db.query<{ a: Array<string | null> }>('SELECT $1::text[] AS a', [sqlTextArray(values)]);
      t.same(rows[0].a, values, JSON.stringify(values));
    }
  });

  t.test('uuids cast to uuid[] and numbers to bigint[] exactly', async (t) => {
    const ids = [randomUUID(), randomUUID()];
    const u = await db.query<{ n: number; hit: boolean }>('SELECT cardinality($1::uuid[]) AS n, $2::uuid = ANY($1::uuid[]) AS hit', [sqlTextArray(ids), ids[1]]);
    t.equal(Number(u.rows[0].n), 2);
    t.equal(u.rows[0].hit, true);
    const big = await db.query<{ a: Array<bigint | string> }>('SELECT $1::bigint[] AS a', [sqlTextArray([9_007_199_254_740_993n, -1, 0])]);
    t.same(big.rows[0].a.map(String), ['9007199254740993', '-1', '0']);
    t.same((await db.query<{ a: string[] }>('SELECT $1::uuid[] AS a', [sqlTextArray([])])).rows[0].a, []);
  });

  t.test('array and object parameters still travel as JSON for jsonb', async (t) => {
    const { rows } = await db.query<{ a: unknown; o: unknown }>('SELECT $1::jsonb AS a, $2::jsonb AS o', [[{ kind: 'asset', id: 'x' }], { n: 12345678901234567890n }]);
    t.same(rows[0].a, [{ kind: 'asset', id: 'x' }]);
    t.same(rows[0].o, { n: '12345678901234567890' }, 'a bigint inside JSON is written as its exact digits');
  });

  t.test('a non-finite number is refused loudly', async (t) => {
    t.throws(() => sqlTextArray([Number.NaN]), /BUG/);
  });
});
