// The model database a benchmark seeds and serves from: a fresh PostgreSQL database named
// for the bench and the process (DATABASE_URL's server, default the local test one), or the
// embedded PGlite under the data directory with --pglite. `drop()` removes the database and
// the data directory; `reuse` names a database to keep between runs (a 1,000,000-row seed
// takes minutes): it is created when missing and never dropped.
import pg from 'pg';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface BenchDatabase {
  /** The service's DATABASE_URL; undefined on PGlite. */
  databaseUrl: string | undefined;
  /** A fresh temporary directory: the service's data directory (and PGlite's, under model/). */
  dataDir: string;
  /** True when a kept database already existed (its seed may be there). */
  reused: boolean;
  drop(): Promise<void>;
}

export async function benchDatabase(name: string, opts: { pglite: boolean; reuse?: string }): Promise<BenchDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), `bench-${name}-`));
  if (opts.pglite) return { databaseUrl: undefined, dataDir, reused: false, drop: () => rm(dataDir, { recursive: true, force: true }) };
  const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const dbName = opts.reuse ?? `bench_${name}_${process.pid}_${randomBytes(3).toString('hex')}`;
  if (!/^[a-z_][a-z0-9_]*$/.test(dbName)) throw new Error(`bench database name ${dbName}: lower-case letters, digits and _ only`);
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName])).rowCount === 1;
  if (!exists) await admin.query(`CREATE DATABASE ${dbName}`);
  const u = new URL(baseUrl); u.pathname = `/${dbName}`;
  return {
    databaseUrl: u.toString(), dataDir, reused: exists,
    async drop() {
      await rm(dataDir, { recursive: true, force: true });
      if (!opts.reuse) await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    },
  };
}
