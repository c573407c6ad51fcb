// Migrations 0021 and 0031 map the free words stored before the vocabularies closed
// (issue 32 item 8) onto them, in every version, and the new CHECK holds afterwards.
import t from 'tap';
import { mkdtemp, readdir, copyFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { testDb } from '../helpers/db.js';
import { migrate, MIGRATIONS_DIR } from '../../src/model/migrate.js';

t.test('stored continuity and writer words are mapped onto the vocabularies', async (t) => {
  const db = await testDb(t);
  // The schema as it stood before: every migration except the ones under test.
  const before = await mkdtemp(join(tmpdir(), 'migrations-before-'));
  t.teardown(() => rm(before, { recursive: true, force: true }));
  for (const f of await readdir(MIGRATIONS_DIR)) {
    if (f.endsWith('.sql') && !['0021', '0022', '0031'].includes(f.slice(0, 4))) await copyFile(join(MIGRATIONS_DIR, f), join(before, f));
  }
  await migrate(db, before);
  const tx = (await db.query<{ tx_id: bigint }>("INSERT INTO model_tx (committed_ns, principal) VALUES (1, 'test') RETURNING tx_id")).rows[0].tx_id;
  const series = async (word: string) => {
    const id = randomUUID();
    await db.query('INSERT INTO series (series_id, source_name, value_type, writable_class, created_tx, created_ns, updated_tx) VALUES ($1, $2, $3, $4, $5, 1, $5)',
      [id, `s/${id}`, 'float64', word, tx]);
    return id;
  };
  const s = { calc: await series('calc'), manualEntry: await series('manual-entry'), backfill: await series('backfill'), foo: await series('foo'), ok: await series('manual') };
  const def = (continuity: string, writer: string) => ({ name: 'Flow', continuity_class: continuity, writer_class: writer, overridable: [] });
  const tpl = randomUUID(), defId = randomUUID(), attr = randomUUID(), own = randomUUID(), asset = randomUUID();
  await db.query('INSERT INTO attr_def_version (attr_def_id, template_id, ordinal, name, definition, tx_from) VALUES ($1, $2, 0, $3, $4, $5)',
    [defId, tpl, 'Flow', def('step', 'calc'), tx]);
  await db.query('INSERT INTO attribute_version (attribute_id, asset_id, name, attr_def_id, definition, overrides, tx_from) VALUES ($1, $2, $3, $4, NULL, $5, $6)',
    [attr, asset, 'Flow', defId, { continuity_class: 'discrete', writer_class: 'lab', limit_traits: { hi: 3 } }, tx]);
  await db.query('INSERT INTO attribute_version (attribute_id, asset_id, name, attr_def_id, definition, overrides, tx_from) VALUES ($1, $2, $3, NULL, $4, $5, $6)',
    [own, asset, 'Own', def('foo', 'stepped'), {}, tx]);

  await migrate(db);
  const classes = new Map((await db.query<{ series_id: string; writable_class: string }>('SELECT series_id, writable_class FROM series')).rows.map((r) => [r.series_id, r.writable_class]));
  t.same([s.calc, s.manualEntry, s.backfill, s.foo, s.ok].map((id) => classes.get(id)), ['calculation', 'manual', 'import', 'collector', 'manual']);
  const d = (await db.query<{ definition: Record<string, unknown> }>('SELECT definition FROM attr_def_version WHERE attr_def_id = $1', [defId])).rows[0].definition;
  t.match(d, { continuity_class: 'stepped', writer_class: 'calculation', name: 'Flow' });
  const o = (await db.query<{ overrides: Record<string, unknown> }>('SELECT overrides FROM attribute_version WHERE attribute_id = $1', [attr])).rows[0].overrides;
  t.same(o, { continuity_class: 'stepped', writer_class: 'manual', limit_traits: { hi: 3 } }, 'overrides mapped, other fields kept');
  const e = (await db.query<{ definition: Record<string, unknown> }>('SELECT definition FROM attribute_version WHERE attribute_id = $1', [own])).rows[0].definition;
  t.match(e, { continuity_class: 'continuous', writer_class: 'collector' }, 'unknown words become the defaults');
  await t.rejects(db.query("UPDATE series SET writable_class = 'robot' WHERE series_id = $1", [s.ok]), 'the series table checks the vocabulary from now on');
});
