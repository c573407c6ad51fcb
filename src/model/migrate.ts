// Numbered SQL migrations (src/model/migrations/NNNN_name.sql) applied at start, in
// order, each once, inside one transaction under an advisory lock so that two
// processes starting together never apply one twice. Number ranges by area:
// 0001-0009 core, 0010-0019 auth, 0020-0029 series, 0030-0049 asset model,
// 0050-0069 registries, jobs and change sets, 0070+ later areas.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Db } from './db.js';
import { nowNs } from '../clock.js';

/** Arbitrary constant naming the migration lock among the database's advisory locks. */
const MIGRATION_LOCK = 7_304_2021;

// The build copies migrations/ next to the compiled module, so one relative path serves both.
export const MIGRATIONS_DIR = join(fileURLToPath(new URL('.', import.meta.url)), 'migrations');

export interface Migration { version: number; name: string; sql: string }

export async function listMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  const seen = new Set<number>();
  const out: Migration[] = [];
  for (const f of files) {
    const version = Number(f.slice(0, 4));
    if (seen.has(version)) throw new Error(`BUG: two migrations numbered ${version} in ${dir}`);
    seen.add(version);
    out.push({ version, name: f, sql: await readFile(join(dir, f), 'utf8') });
  }
  return out;
}

/** Applies pending migrations; returns the names applied by this call. */
export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await listMigrations(dir);
  return db.transaction(async (tx) => {
    // Transaction-scoped: released at commit or rollback, even if this process dies.
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migration (
      version integer PRIMARY KEY, name text NOT NULL, applied_ns bigint NOT NULL)`);
    const done = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migration')).rows.map((r) => Number(r.version)));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migration (version, name, applied_ns) VALUES ($1, $2, $3)', [m.version, m.name, nowNs()]);
      applied.push(m.name);
    }
    return applied;
  });
}
