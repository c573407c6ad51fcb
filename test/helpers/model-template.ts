// A migrated model database to clone for each test service, instead of migrating every
// fresh database: the 17 migrations cost ~1.2-3 s of PostgreSQL time per service start
// (measured 2026-11-28, CREATE DATABASE + migrate on the shared box), a clone ~0.4 s.
// The template is named after a hash of the migration files, so a changed or added
// migration makes a new one; the service still runs migrate() at start, so a clone is
// never older than the code. Built once per migration set: the first test process takes an
// advisory lock, the others wait on it and then clone.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { openDb } from '../../src/model/db.js';
import { listMigrations, migrate } from '../../src/model/migrate.js';

/** Arbitrary constant naming the template build among the server's advisory locks. */
const TEMPLATE_LOCK = 7_304_2028;

let known: string | undefined;

async function templateName(): Promise<string> {
  const hash = createHash('sha256');
  for (const m of await listMigrations()) hash.update(m.name).update('\0').update(m.sql).update('\0');
  return `historian_tpl_${hash.digest('hex').slice(0, 16)}`;
}

/**
 * The name of a database holding every migration, built on first use. `admin` is a
 * connected client on the server's maintenance database; `url` is how to reach that server.
 */
export async function migratedTemplate(admin: pg.Client, url: string): Promise<string> {
  if (known) return known;
  const name = await templateName();
  const exists = async () => (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  if (await exists()) return (known = name);
  await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
  try {
    if (await exists()) return (known = name);
    // Built under a temporary name and renamed when complete, so a process that dies
    // half-way never leaves a half-migrated template behind under the real name.
    const building = `${name}_build_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${building}`);
    const u = new URL(url);
    u.pathname = `/${building}`;
    const db = await openDb({ url: u.toString(), pgliteDir: 'memory://', poolSize: 1 });
    try { await migrate(db); } finally { await db.close(); }
    await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    // Nobody may connect to it: CREATE DATABASE ... TEMPLATE refuses a template in use.
    await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    return (known = name);
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
  }
}
