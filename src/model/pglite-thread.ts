// The embedded model database (PGlite) on a thread of its own. PGlite runs PostgreSQL in
// WASM synchronously on whichever thread calls it; on the HTTP thread every model lookup
// stalled the event loop (5-18 ms for a series' first lookup in bench/storage.ts). Here it
// answers the HTTP thread's messages (pglite-client.ts); the protocol is
// pglite-protocol.ts. PGlite is single-connection: a transaction holds its lock, and
// every other query waits behind it, as it did in-process.
import { parentPort, workerData } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fullGc } from '../threads/full-gc.js';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { DbReply, DbRequest, WireDbError, WireResult } from './pglite-protocol.js';
import { parseStoredJson } from '../json/json.js';
import { reportExtra } from '../threads/heap-report.js';

const port = parentPort;
if (!port) throw new Error('BUG: pglite-thread started outside a worker thread');
const { dataDir } = workerData as { dataDir: string };

/** An open transaction: its PGlite handle and how to end it. */
interface OpenTx { tx: Transaction; end: (commit: boolean, requestId: number) => void }
const open = new Map<number, OpenTx>();
let nextTx = 1;
/** Thrown inside PGlite's transaction callback to roll it back; never leaves this file. */
const ROLLBACK = Symbol('rollback');

function wireError(e: unknown): WireDbError {
  const err = e as Record<string, unknown> | null;
  const out: WireDbError = { message: String((err && typeof err === 'object' && 'message' in err ? err.message : e) ?? 'unknown error') };
  if (err && typeof err === 'object') {
    for (const k of ['name', 'code', 'detail', 'hint', 'constraint', 'table', 'column', 'schema', 'severity', 'where', 'position'] as const) {
      const v = err[k];
      if (typeof v === 'string') out[k] = v;
    }
  }
  return out;
}

/**
 * PostgreSQL's memory settings for the embedded model. initdb sizes shared_buffers at
 * 128 MB, and PGlite's WASM heap grew to ~190 MB to hold it: resident for the service's
 * life though the model is small and PGlite reads its files through the OS page cache
 * anyway. 16 MB took ~120 MB off the thread's RSS; creating 100,000 series (the model's
 * heaviest write, bench/series-creation.ts) cost the same server CPU within noise
 * (docs/decisions.md). work_mem and temp_buffers stay at their defaults (allocated per
 * use); wal_buffers follows shared_buffers (1/32).
 */
const MEMORY_SETTINGS = ['shared_buffers=16MB'];

/**
 * A fresh data directory makes PGlite run initdb in two more WASM instances (~450 MB of
 * WASM memory) that are garbage once create() returns; this thread allocates little on
 * its JS heap, so V8 found no reason to collect them and they stayed resident for the
 * service's life (measured: 766 -> 373 MB after one full GC). A full GC a moment after
 * create (the instances are released over the next event-loop turns) returns them.
 */
function collectInitdbInstances(): void {
  for (const ms of [500, 2000]) setTimeout(fullGc, ms).unref();
}

const wireResult = (r: { rows: unknown[]; affectedRows?: number }): WireResult => ({
  rows: r.rows as Record<string, unknown>[],
  rowCount: r.rows.length || (r.affectedRows ?? 0),
});

function reply(m: DbReply): void {
  port!.postMessage(m);
}

async function main(): Promise<void> {
  let db: PGlite;
  try {
    // int8 as bigint and json/jsonb with exact integers, as db.ts sets for node-postgres.
    // pg_trgm (a 16 KB bundle): the trigram index behind GET /v1/series?name_contains= (migration 0022).
    const fresh = dataDir.startsWith('memory://') || !existsSync(join(dataDir, 'PG_VERSION'));
    db = await PGlite.create(dataDir, {
      startParams: [...PGlite.defaultStartParams, ...MEMORY_SETTINGS.flatMap((s) => ['-c', s])],
      extensions: { pg_trgm }, parsers: { 20: (v: string) => BigInt(v), 114: parseStoredJson, 3802: parseStoredJson },
    });
    if (fresh) collectInitdbInstances();
  } catch (e) {
    reply({ id: 0, ok: false, error: wireError(e) });
    return;
  }
  reply({ id: 0, ok: true, rows: [], rowCount: 0 });
  reportExtra(() => ({ wasm_memory_bytes: db.Module.HEAPU8.byteLength }));

  /** The handle a request runs on: its open transaction, or the database itself. */
  const on = (tx: number): PGlite | Transaction => {
    if (tx === 0) return db;
    const t = open.get(tx);
    if (!t) throw new Error(`BUG: transaction ${tx} is not open`);
    return t.tx;
  };

  port!.on('message', (m: DbRequest) => {
    switch (m.op) {
      case 'query':
        Promise.resolve().then(() => on(m.tx).query(m.text, m.params))
          .then((r) => reply({ id: m.id, ok: true, ...wireResult(r) }), (e) => reply({ id: m.id, ok: false, error: wireError(e) }));
        return;
      case 'exec':
        Promise.resolve().then(() => on(m.tx).exec(m.sql))
          .then(() => reply({ id: m.id, ok: true, rows: [], rowCount: 0 }), (e) => reply({ id: m.id, ok: false, error: wireError(e) }));
        return;
      case 'begin': {
        const txId = nextTx++;
        let endId = 0; // the id of the request that ends it; 0 while BEGIN itself runs
        db.transaction(async (tx) => {
          const commit = await new Promise<boolean>((resolve) => {
            open.set(txId, { tx, end: (c, id) => { endId = id; resolve(c); } });
            reply({ id: m.id, ok: true, rows: [], rowCount: 0, tx: txId });
          });
          if (!commit) throw ROLLBACK;
        }).then(
          () => reply({ id: endId, ok: true, rows: [], rowCount: 0 }),
          (e) => reply(e === ROLLBACK ? { id: endId, ok: true, rows: [], rowCount: 0 } : { id: endId || m.id, ok: false, error: wireError(e) }),
        ).finally(() => { open.delete(txId); });
        return;
      }
      case 'end': {
        const t = open.get(m.tx);
        if (!t) { reply({ id: m.id, ok: false, error: { message: `BUG: transaction ${m.tx} is not open` } }); return; }
        t.end(m.commit, m.id);
        return;
      }
      case 'close':
        db.close().then(() => { reply({ id: m.id, ok: true, rows: [], rowCount: 0 }); port!.close(); }, (e) => reply({ id: m.id, ok: false, error: wireError(e) }));
        return;
    }
  });
}

void main();
