// The embedded model on its own thread (pglite-thread.ts, pglite-client.ts), whatever
// DATABASE_URL says: values of every type the model uses cross the thread exactly, errors
// keep the fields callers test, transactions commit, roll back and hold the connection,
// and the calling thread's event loop runs while PostgreSQL works.
import t from 'tap';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/model/db.js';
import { isUniqueViolation } from '../../src/model/versions/history.js';

// One embedded database for the tests that need no directory (each start is ~2 s of initdb).
let shared: Db | null = null;
async function memoryDb(): Promise<Db> {
  shared ??= await openDb({ pgliteDir: 'memory://' });
  return shared;
}
t.teardown(() => shared?.close());

t.test('values cross the thread exactly', async (t) => {
  const db = await memoryDb();
  t.equal(db.kind, 'pglite');
  const pooled = Buffer.from([0, 1, 2, 255]); // a small Buffer is a view into a shared pool
  const when = new Date('2026-03-01T12:34:56.789Z');
  const { rows } = await db.query<{ i: bigint; b: Buffer; j: unknown; d: Date; a: string[]; n: number; s: string; z: null }>(
    'SELECT $1::int8 AS i, $2::bytea AS b, $3::jsonb AS j, $4::timestamptz AS d, $5::text[] AS a, $6::float8 AS n, $7::text AS s, NULL AS z',
    [9_007_199_254_740_993n, pooled, { k: [1, 'x'], big: 12345678901234567890n }, when, '{"a","b"}', 0.1, 'zß€😀'],
  );
  const r = rows[0];
  t.equal(r.i, 9_007_199_254_740_993n, 'int8 as an exact bigint');
  t.ok(Buffer.isBuffer(r.b), 'bytea as a Buffer');
  t.same([...r.b], [0, 1, 2, 255]);
  t.same(r.j, { k: [1, 'x'], big: '12345678901234567890' });
  t.ok(r.d instanceof Date && r.d.getTime() === when.getTime(), 'timestamptz as the same Date');
  t.same(r.a, ['a', 'b']);
  t.equal(r.n, 0.1);
  t.equal(r.s, 'zß€😀');
  t.equal(r.z, null);
});

t.test('rowCount and errors as on the in-process backends', async (t) => {
  const db = await memoryDb();
  await db.exec('CREATE TABLE item (id int PRIMARY KEY, name text); CREATE UNIQUE INDEX item_name ON item (name);');
  t.equal((await db.query('INSERT INTO item VALUES (1, $1), (2, $2)', ['a', 'b'])).rowCount, 2);
  t.equal((await db.query('UPDATE item SET name = name || $1', ['!'])).rowCount, 2);
  const dup = await db.query('INSERT INTO item VALUES (3, $1)', ['a!']).then(() => null, (e: unknown) => e);
  t.ok(dup instanceof Error, 'a constraint violation rejects with an Error');
  t.ok(isUniqueViolation(dup, 'item_name'), 'carrying SQLSTATE 23505 and the index name');
  const bad = await db.query('SELEC 1').then(() => null, (e: unknown) => e as { code?: string; message: string });
  t.equal(bad?.code, '42601', 'a syntax error keeps its SQLSTATE');
  t.match(bad?.message, /syntax error/);
});

t.test('transactions commit, roll back, and hold the connection', async (t) => {
  const db = await memoryDb();
  await db.exec('CREATE TABLE n (v int)');
  const out = await db.transaction(async (tx) => {
    await tx.query('INSERT INTO n VALUES (1)');
    return (await tx.query<{ c: bigint }>('SELECT count(*)::int8 AS c FROM n')).rows[0].c;
  });
  t.equal(out, 1n, 'the transaction sees its own write and returns its value');

  const failure = new Error('the caller changed its mind');
  const thrown = await db.transaction(async (tx) => {
    await tx.query('INSERT INTO n VALUES (2)');
    throw failure;
  }).then(() => null, (e: unknown) => e);
  t.equal(thrown, failure, 'the callback\'s own error comes back');
  t.same((await db.query<{ v: number }>('SELECT v FROM n ORDER BY v')).rows, [{ v: 1 }], 'and its write is rolled back');

  const sqlFailure = await db.transaction(async (tx) => {
    await tx.query('INSERT INTO n VALUES (3)');
    await tx.query('INSERT INTO n VALUES ($1)', ['not a number']);
  }).then(() => null, (e: { code?: string }) => e);
  t.equal(sqlFailure?.code, '22P02', 'a failing statement rejects with its SQLSTATE');
  t.equal((await db.query('SELECT v FROM n')).rowCount, 1, 'and nothing of that transaction stays');

  // A query from outside waits until the open transaction ends, then sees its commit.
  const order: string[] = [];
  let outside: Promise<unknown> | null = null;
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO n VALUES (4)');
    outside = db.query<{ c: bigint }>('SELECT count(*)::int8 AS c FROM n').then((r) => { order.push(`outside saw ${r.rows[0].c}`); });
    await new Promise((r) => setTimeout(r, 30));
    await tx.query('INSERT INTO n VALUES (5)');
    order.push('committing');
  });
  await outside;
  t.same(order, ['committing', 'outside saw 3']);
});

t.test('the calling thread keeps running while PostgreSQL works', async (t) => {
  const db = await memoryDb();
  let ticks = 0;
  const timer = setInterval(() => { ticks++; }, 2);
  const started = performance.now();
  const { rows } = await db.query<{ s: bigint }>('SELECT sum(x)::int8 AS s FROM generate_series(1, 1000000) AS x');
  const ms = performance.now() - started;
  clearInterval(timer);
  t.equal(rows[0].s, 500_000_500_000n);
  t.comment(`query ${ms.toFixed(0)} ms, ${ticks} timer ticks meanwhile`);
  // In-process PGlite runs the query synchronously: no tick at all could fire.
  t.ok(ms < 20 || ticks >= 3, `timers fired during a ${ms.toFixed(0)} ms query (${ticks} ticks)`);
});

t.test('a persisted model survives close and reopen, and its lock is released', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pglite-thread-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'model');
  const db = await openDb({ pgliteDir: path });
  await db.exec('CREATE TABLE kept (v text)');
  await db.query('INSERT INTO kept VALUES ($1)', ['still here']);
  await db.close();
  await t.rejects(db.query('SELECT 1'), /closed/, 'a closed model refuses queries');
  await t.rejects(stat(`${path}.lock`), { code: 'ENOENT' }, 'the lock file is gone');
  const again = await openDb({ pgliteDir: path });
  t.same((await again.query('SELECT v FROM kept')).rows, [{ v: 'still here' }]);
  await again.close();
});
