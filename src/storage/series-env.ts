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
  /** The file's LMDB page size: SERIES_PAGE_SIZE for envs created since 2026-11-27, 4,096 before. */
  readonly pageSize: number;
  close(): Promise<void>;
}

export interface OpenSeriesEnvOptions {
  readOnly?: boolean;
  /** Page size of an env this open creates (an existing file keeps its own): SERIES_PAGE_SIZE. */
  pageSize?: number;
}

/**
 * Page size of a new series env. A sealed chunk fills one overflow page (overflowCapacity,
 * seal.ts), so with 16 KiB pages a chunk holds ~4x the points of a 4 KiB
 * one, and every per-page and per-entry cost (chunk-table entries, leaf fill, LMDB's
 * free-list entries of 8 bytes a free page) is shared by 4x the points. docs/decisions.md
 * 2026-11-27 has the figures; LMDB reads an existing file's page size from its meta
 * page, so a store created with 4 KiB pages keeps them and its 4 KiB chunk budget.
 */
export const SERIES_PAGE_SIZE = 16384;

/** Bytes of one value LMDB and lmdb-js keep out of its overflow pages (measured, below). */
const OVERFLOW_VALUE_OVERHEAD = 24;

/**
 * The most bytes a value may have to fit `pages` overflow pages of `pageSize`. Measured
 * (lmdb 3.5, binary values): 4,072 B take one page of 4 KiB and 4,073 two; 16,360 one of 16
 * KiB and 16,361 two; 65,512 B take 16 pages of 4 KiB and 65,513 seventeen.
 */
export function overflowCapacity(pageSize: number, pages = 1): number {
  return pages * pageSize - OVERFLOW_VALUE_OVERHEAD;
}

/** Overflow pages a value of `bytes` takes when it is above largestInlineValue. */
export function overflowPagesOf(bytes: number, pageSize: number): number {
  return Math.ceil((bytes + OVERFLOW_VALUE_OVERHEAD) / pageSize);
}

/**
 * The largest value LMDB keeps inside a leaf page under a key of `keyBytes`; a larger one
 * takes overflow pages of its own. Measured (24-byte key): 2,002 B on 4 KiB pages, 8,146 on
 * 16 KiB; the benchmarks use it to tell where a chunk's bytes go.
 */
export function largestInlineValue(pageSize: number, keyBytes = 24): number {
  return (pageSize - 16) / 2 - 14 - keyBytes;
}

const TABLE = { keyEncoding: 'binary', encoding: 'binary' } as const;

/**
 * Opens (creating when writable) the env under `dir` (the caller passes `<data dir>/series`).
 * Env flags come from the first opener in the process; all opens here use the same ones.
 * Map size: 64 GiB of address space, grown on demand by lmdb-js. Page size: see
 * SERIES_PAGE_SIZE (only a new file takes it).
 */
export function openSeriesEnv(dir: string, options: OpenSeriesEnvOptions = {}): SeriesEnv {
  const readOnly = options.readOnly === true;
  if (!readOnly) mkdirSync(dir, { recursive: true });
  const root = open<Buffer, Buffer>({ path: dir, maxDbs: 8, mapSize: 64 * 2 ** 30, pageSize: options.pageSize ?? SERIES_PAGE_SIZE, readOnly, ...TABLE });
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
    pageSize: (root.getStats() as { pageSize: number }).pageSize,
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
    // Release the snapshot now: lmdb-js would on a timer, but a read-pool worker sleeps in
    // Atomics.wait between tasks with no event-loop turn, and a snapshot held while idle keeps
    // every page freed by later commits from reuse, so the file grew with each commit (the
    // disk-full harness saw ~235 B per point). A view still open around this one keeps its own.
    env.root.resetReadTxn();
  }
}
