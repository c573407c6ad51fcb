// The one LMDB environment of series data and its named tables. Every thread (main,
// ingest worker, read workers) opens it through openSeriesEnv so that the per-handle
// options (encodings) are identical: a mismatch silently misreads values (STACK-NOTES §3).
import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';
import { mkdirSync } from 'node:fs';

export interface SeriesEnv {
  readonly path: string;
  readonly readOnly: boolean;
  readonly root: RootDatabase<Buffer, Buffer>;
  /** uuid + chunk start -> sealed chunk bytes (encodeChunk). */
  readonly chunks: Database<Buffer, Buffer>;
  /** uuid -> head record (open, unsealed points; see head-record.ts). */
  readonly heads: Database<Buffer, Buffer>;
  /** uuid + segment seq -> the points one commit appended to the head (see head-record.ts). */
  readonly segments: Database<Buffer, Buffer>;
  /** uuid + ts + superseded_at -> audit record (see audit-record.ts). */
  readonly audit: Database<Buffer, Buffer>;
  /** uuid + interval + bucket start -> rollup row (see rollup-row.ts). */
  readonly rollups: Database<Buffer, Buffer>;
  /** uuid -> series meta (see series-meta.ts). */
  readonly meta: Database<Buffer, Buffer>;
  /** pack id + part -> several series' last chunks, or the pack's tally (see tail-packs.ts). */
  readonly tailPacks: Database<Buffer, Buffer>;
  close(): Promise<void>;
}

export interface OpenSeriesEnvOptions {
  readOnly?: boolean;
}

const TABLE = { keyEncoding: 'binary', encoding: 'binary' } as const;

/**
 * Opens (creating when writable) the env under `dir` (the caller passes `<data dir>/series`).
 * Env flags come from the first opener in the process; all opens here use the same ones.
 * Map size: 64 GiB of address space, grown on demand by lmdb-js; page size stays the OS
 * default (4 KiB), which is why chunks are budgeted to stay below ~4000 bytes.
 */
export function openSeriesEnv(dir: string, options: OpenSeriesEnvOptions = {}): SeriesEnv {
  const readOnly = options.readOnly === true;
  if (!readOnly) mkdirSync(dir, { recursive: true });
  const root = open<Buffer, Buffer>({ path: dir, maxDbs: 8, mapSize: 64 * 2 ** 30, readOnly, ...TABLE });
  const db = (name: string) => root.openDB<Buffer, Buffer>({ name, ...TABLE });
  const env: SeriesEnv = {
    path: dir,
    readOnly,
    root,
    chunks: db('chunks'),
    heads: db('heads'),
    segments: db('head-segments'),
    audit: db('audit'),
    rollups: db('rollups'),
    meta: db('meta'),
    tailPacks: db('tail-packs'),
    close: () => root.close(),
  };
  return env;
}

/**
 * A consistent view for the read algorithms: either a read transaction (a snapshot that
 * does not move while a read runs) or, inside the writer's transaction callback, the
 * write transaction itself (txn undefined: lmdb-js reads through the open write txn).
 */
export interface ReadView {
  readonly env: SeriesEnv;
  readonly txn: Transaction | undefined;
}

/** Runs fn over a fresh read snapshot and releases it afterwards. */
export function withReadView<T>(env: SeriesEnv, fn: (view: ReadView) => T): T {
  const txn = env.root.useReadTransaction();
  try {
    return fn({ env, txn });
  } finally {
    txn.done();
  }
}
