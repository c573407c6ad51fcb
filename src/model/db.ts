// One small query interface over node-postgres (DATABASE_URL) and embedded PGlite (the
// default, persisted under the data directory, run on its own thread). Both backends
// return int8 as bigint, bytea as Buffer and json/jsonb with exact integers, so callers
// never see which one they run on.
//
// JSON in the model takes one path (docs/decisions.md, 2026-11-27): written as text by
// src/json's stringifyJson (bigint as bare digits; jsonbParam, or any object parameter),
// stored by PostgreSQL as numeric (exact to any number of digits), read back by the type
// parser below (parseStoredJson: integers beyond 2^53 as bigint), on both backends.
import pg from 'pg';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { openPGliteThread } from './pglite-client.js';
import { parseStoredJson, stringifyJson } from '../json/json.js';

export type SqlParam = string | number | bigint | boolean | null | Buffer | Uint8Array | Date | unknown[] | Record<string, unknown>;

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: SqlParam[]): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pg' | 'pglite';
  /** Runs fn in one transaction; rolls back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Cheap liveness probe for /v1/model/healthz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The OIDs of json and jsonb, whose text both backends hand to jsonTypeParser. */
export const JSON_OIDS = [114, 3802] as const;
/** How a json or jsonb value's text becomes a value: integers kept exact. */
export const jsonTypeParser = (text: string): unknown => parseStoredJson(text);

pg.types.setTypeParser(20, (v: string) => BigInt(v)); // int8 as bigint, like PGlite
for (const oid of JSON_OIDS) pg.types.setTypeParser(oid, jsonTypeParser);

/**
 * The parameter for a json/jsonb column holding any JSON value (a bare string or number
 * included, which normaliseParams would otherwise pass as itself): its text, bigint as
 * bare digits.
 */
export function jsonbParam(value: unknown): string {
  return stringifyJson(value);
}

/**
 * A Postgres array literal ({"a","b",NULL}) for an array parameter, to be cast in SQL
 * (`= ANY($1::uuid[])`, `$2::text[]`). Object and array parameters travel as JSON text
 * (that is what the jsonb columns take, on both backends), which an array cast refuses;
 * this is the one way model code passes SQL arrays. Every element is quoted, so a
 * string may hold any character; numbers and bigints are written exactly.
 */
export function sqlTextArray(values: ReadonlyArray<string | number | bigint | null>): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null) out += 'NULL';
    else if (typeof v === 'string') out += `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    else {
      if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`BUG: sqlTextArray of a non-finite number ${v}`);
      out += String(v);
    }
  }
  return out + '}';
}

// pg serialises bigint through toString, which is exact; an object or array parameter is
// JSON text by stringifyJson, so a bigint inside it is bare digits, as a request had it.
// `copyBytes`: a byte parameter headed for another thread is copied to its own bytes, or
// structured clone would copy the whole buffer under it (a Buffer's is often an 8 KiB pool).
export function normaliseParams(params: SqlParam[] | undefined, copyBytes = false): unknown[] | undefined {
  if (!params) return params;
  return params.map((p) => (p instanceof Uint8Array
    ? (copyBytes ? new Uint8Array(p) : p)
    : p !== null && typeof p === 'object' && !(p instanceof Date)
      ? stringifyJson(p)
      : p));
}

/** bytea columns as Buffer on both backends (PGlite and the thread's replies give Uint8Array). */
export function bufferRows(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  for (const row of rows) {
    for (const k in row) { const v = row[k]; if (v instanceof Uint8Array && !Buffer.isBuffer(v)) row[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength); }
  }
  return rows;
}

/**
 * Whether a database error says the disk under it is full: SQLSTATE 53100 (disk_full), or
 * PGlite's and PostgreSQL's "could not extend file ... No space left on device", which some
 * paths raise without that code. The service answers these 503 storage-full, not 500: the
 * model refuses writes until space returns and reads go on (the disk-full harness, issue 31).
 */
export function isDiskFull(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return code === '53100' || /No space left on device|could not extend file|disk full/i.test(e.message);
}

export function fromPool(pool: pg.Pool): Db {
  pool.on('error', () => { /* idle client dropped (e.g. database dropped); the next query reconnects */ });
  const wrap = <T>(r: pg.QueryResult): QueryResult<T> => ({ rows: r.rows as T[], rowCount: r.rowCount ?? 0 });
  return {
    kind: 'pg',
    async query<T>(text: string, params?: SqlParam[]) {
      return wrap<T>(await pool.query(text, normaliseParams(params)));
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn({
          query: async <R>(t: string, p?: SqlParam[]) => wrap<R>(await client.query(t, normaliseParams(p))),
          exec: async (sql: string) => { await client.query(sql); },
        });
        await client.query('COMMIT');
        return out;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      } finally {
        client.release();
      }
    },
    async exec(sql: string) { await pool.query(sql); },
    async ping() { await pool.query('SELECT 1'); },
    close: () => pool.end(),
  };
}

/**
 * PGlite has no cross-process lock on its data directory and two processes corrupt it,
 * so we hold a pid lock file; a stale lock (dead pid) is taken over.
 */
async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const lock = `${dir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(lock, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      return async () => { await unlink(lock).catch(() => undefined); };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(await readFile(lock, 'utf8').catch(() => '0'));
      let alive = false;
      if (pid > 0 && pid !== process.pid) { try { process.kill(pid, 0); alive = true; } catch { alive = false; } }
      if (alive) throw new Error(`the embedded model at ${dir} is in use by process ${pid}`);
      await unlink(lock).catch(() => undefined);
    }
  }
  throw new Error(`could not lock the embedded model at ${dir}`);
}

/**
 * Opens Postgres when a URL is given, else embedded PGlite under pgliteDir ('memory://' for
 * tests), on a thread of its own (pglite-thread.ts).
 */
export async function openDb(opts: { url?: string; pgliteDir: string; poolSize?: number }): Promise<Db> {
  if (opts.url) return fromPool(new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10 }));
  if (opts.pgliteDir.startsWith('memory://')) return openPGliteThread(opts.pgliteDir, async () => undefined);
  await mkdir(opts.pgliteDir, { recursive: true });
  const release = await lockDataDir(opts.pgliteDir);
  try {
    return await openPGliteThread(opts.pgliteDir, release);
  } catch (e) {
    await release();
    throw e;
  }
}
