// The series record and scope cache (series-lookups.ts) against a real model database: a
// commit of this process is seen at once; another process's commit (a model_tx row this
// process's feed never saw) within one version check; and without a commit anywhere the
// entries outlive the check instead of being fetched again.
import t, { type Test } from 'tap';
import { testDb } from '../helpers/db.js';
import { tempStore } from '../helpers/series-store.js';
import { SeriesCatalogue } from '../../src/series/catalogue.js';
import { SeriesLookups } from '../../src/series/series-lookups.js';
import { nowNs } from '../../src/clock.js';
import type { Db } from '../../src/model/db.js';
import { migrate } from '../../src/model/migrate.js';

const who = { principal: 'test' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What another process sharing the model database would do: change a row, and commit through model_tx or not. */
async function foreignChange(db: Db, id: string, writableClass: string, commit: boolean): Promise<void> {
  await db.query('UPDATE series SET writable_class = $1 WHERE series_id = $2', [writableClass, id]);
  if (commit) await db.query('INSERT INTO model_tx (committed_ns, principal, reason) VALUES ($1, $2, $3)', [nowNs(), 'other-process', 'test']);
}

async function setup(t: Test) {
  const db = await testDb(t);
  await migrate(db);
  const { store } = await tempStore(t);
  const catalogue = new SeriesCatalogue(db, store);
  t.teardown(() => catalogue.close());
  const s = await catalogue.create({ sourceName: 'opc/lookups/flow', valueType: 'float64' }, who);
  return { db, catalogue, id: s.id };
}

t.test('without a commit anywhere the entries outlive the version check; a foreign commit empties them at the next check', async (t) => {
  const { db, id } = await setup(t);
  const lookups = new SeriesLookups(db, { checkMs: 100, maxAgeMs: 60_000 });
  t.teardown(() => lookups.close());
  t.equal((await lookups.record(id))?.writableClass, 'collector');
  t.same(await lookups.scope(id), { kind: 'staging' });
  // a change with no model_tx row is what the cache cannot see: it shows the entry was not fetched again
  await foreignChange(db, id, 'manual', false);
  await sleep(150);
  t.equal((await lookups.record(id))?.writableClass, 'collector', 'the version did not move: the cached record is kept past the check');
  await foreignChange(db, id, 'manual', true);
  await sleep(150);
  t.equal((await lookups.record(id))?.writableClass, 'manual', 'a commit of another process is seen at the next check');
});

t.test('a commit of this process empties the cache at once', async (t) => {
  const { db, catalogue, id } = await setup(t);
  const lookups = new SeriesLookups(db, { checkMs: 60_000, maxAgeMs: 60_000 });
  t.teardown(() => lookups.close());
  t.equal((await lookups.record(id))?.writableClass, 'collector');
  await catalogue.setWritableClass(id, 'calculation', who);
  t.equal((await lookups.record(id))?.writableClass, 'calculation');
});

t.test('entries are fetched again after their maximum age whatever the version says', async (t) => {
  const { db, id } = await setup(t);
  // an age long enough that the change and the second lookup surely fall within it on a busy box
  const lookups = new SeriesLookups(db, { checkMs: 60_000, maxAgeMs: 1_000 });
  t.teardown(() => lookups.close());
  t.equal((await lookups.record(id))?.writableClass, 'collector');
  await foreignChange(db, id, 'manual', false);
  t.equal((await lookups.record(id))?.writableClass, 'collector', 'within its age the entry is kept');
  await sleep(1_100);
  t.equal((await lookups.record(id))?.writableClass, 'manual');
});

t.test('lookups waiting on one version check share it', async (t) => {
  const { db, id } = await setup(t);
  const lookups = new SeriesLookups(db, { checkMs: 60_000, maxAgeMs: 60_000 });
  t.teardown(() => lookups.close());
  const got = await Promise.all(Array.from({ length: 20 }, (_, k) => (k % 2 ? lookups.record(id) : lookups.scope(id))));
  t.equal(got.filter((g) => g !== null && 'writableClass' in g).length, 10);
  t.equal(got.filter((g) => g !== null && 'kind' in g && g.kind === 'staging').length, 10);
});
