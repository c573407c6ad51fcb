// The Db over the embedded model's thread (pglite-thread.ts): each query is a message and
// its reply, so the HTTP thread no longer runs PostgreSQL's WASM itself. Transactions keep
// their shape: BEGIN on the thread holds PGlite's single connection until this side's
// callback settles and sends COMMIT or ROLLBACK.
import type { Worker } from 'node:worker_threads';
import { siblingEntry, startThread } from '../threads/thread-boot.js';
import { bufferRows, normaliseParams, type Db, type Queryable, type QueryResult, type SqlParam } from './db.js';
import type { DbReply, DbRequest, WireDbError } from './pglite-protocol.js';

type Outgoing = DbRequest extends infer R ? R extends { id: number } ? Omit<R, 'id'> : never : never;
type Ok = Extract<DbReply, { ok: true }>;

/** The thread's error as an Error carrying the same fields (code, constraint, ...) callers test. */
function databaseError(w: WireDbError): Error {
  return Object.assign(new Error(w.message), w);
}

/** A thread-boot start failure (the entry did not load) arrives as this note. */
interface BootNote { rpc: 'note'; op: 'start-failed'; arg: string }

export async function openPGliteThread(dataDir: string, release: () => Promise<void>): Promise<Db> {
  const worker: Worker = startThread(siblingEntry(import.meta.url, 'pglite-thread'), { dataDir });
  const pending = new Map<number, { resolve: (r: Ok) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let stopped: Error | null = null;

  // The thread keeps the process alive only while a request is out, like a socket.
  const settle = (id: number) => { pending.delete(id); if (pending.size === 0) worker.unref(); };
  const failAll = (e: Error) => {
    stopped ??= e;
    for (const [id, p] of pending) { settle(id); p.reject(e); }
  };
  worker.on('message', (m: DbReply | BootNote) => {
    if ('rpc' in m) { failAll(new Error(`the embedded model thread did not start: ${m.arg}`)); return; }
    const p = pending.get(m.id);
    if (!p) return;
    settle(m.id);
    if (m.ok) p.resolve(m); else p.reject(databaseError(m.error));
  });
  worker.on('error', (e) => failAll(e instanceof Error ? e : new Error(String(e))));
  worker.on('exit', (code) => failAll(new Error(`the embedded model thread stopped (exit code ${code})`)));

  const send = (req: Outgoing): Promise<Ok> => new Promise<Ok>((resolve, reject) => {
    if (stopped) { reject(stopped); return; }
    const id = nextId++;
    if (pending.size === 0) worker.ref();
    pending.set(id, { resolve, reject });
    worker.postMessage({ ...req, id } as DbRequest);
  });

  // Reply 0 is the thread's start-up: PGlite opened (or why not).
  const started = new Promise<Ok>((resolve, reject) => { pending.set(0, { resolve, reject }); });
  try {
    await started;
  } catch (e) {
    await worker.terminate();
    throw e;
  }

  const run = async <T>(tx: number, text: string, params?: SqlParam[]): Promise<QueryResult<T>> => {
    const r = await send({ op: 'query', tx, text, params: normaliseParams(params, true) });
    return { rows: bufferRows(r.rows) as T[], rowCount: r.rowCount };
  };
  const exec = async (tx: number, sql: string): Promise<void> => { await send({ op: 'exec', tx, sql }); };

  return {
    kind: 'pglite',
    query: <T>(text: string, params?: SqlParam[]) => run<T>(0, text, params),
    exec: (sql: string) => exec(0, sql),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const tx = (await send({ op: 'begin' })).tx;
      if (tx === undefined) throw new Error('BUG: the embedded model thread began a transaction without an id');
      let out: T;
      try {
        out = await fn({ query: <R>(t: string, p?: SqlParam[]) => run<R>(tx, t, p), exec: (sql: string) => exec(tx, sql) });
      } catch (e) {
        await send({ op: 'end', tx, commit: false }).catch(() => undefined);
        throw e;
      }
      await send({ op: 'end', tx, commit: true });
      return out;
    },
    async ping() { await run(0, 'SELECT 1'); },
    async close() {
      if (!stopped) {
        await send({ op: 'close' }).catch(() => undefined);
        stopped = new Error('the embedded model is closed');
        await worker.terminate();
      }
      await release();
    },
  };
}
