// Per-worker state: the series LMDB env, opened once on the first task with exactly the
// options every other thread uses (openSeriesEnv), and the reusable body slabs that tasks
// serialise into (body-slabs.ts).
import { isMainThread, threadId, workerData } from 'node:worker_threads';
import { ServiceError, isServiceError } from '../errors.js';
import { openSeriesEnv, withReadView, type ReadView, type SeriesEnv } from '../storage/series-store.js';
import { BodySink } from '../body-sink.js';
import { BodySlabs, SLAB_HEADER_BYTES, type BodySlab } from './body-slabs.js';
import type { TaskOutcome } from './task-protocol.js';
import { reportHeap } from '../threads/heap-report.js';

if (!isMainThread) reportHeap('read-worker');

let env: SeriesEnv | null = null;
const slabs = new BodySlabs(threadId * 2 ** 20);
/** The slab the running task writes into; replaced when the body outgrows it. */
let current: BodySlab | null = null;
const sink = new BodySink(0, (used, need) => {
  current = slabs.grow(current!, used, need);
  return current.body;
});

function seriesEnv(): SeriesEnv {
  if (env) return env;
  const dir = (workerData as { seriesDir?: string } | null)?.seriesDir;
  if (!dir) throw new Error('BUG: read worker started without workerData.seriesDir');
  env = openSeriesEnv(dir);
  return env;
}

/** Runs fn over a fresh read snapshot (tasks whose result is plain data, not a body: calculation windows). */
export function withLatestView<T>(fn: (view: ReadView) => T): T {
  const e = seriesEnv();
  // As in runTask: the shared read transaction is renewed by hand between tasks.
  e.root.resetReadTxn();
  return withReadView(e, fn);
}

/**
 * Runs a task body over a fresh read snapshot with the worker's sink, and packages the
 * result (or the error, by code) for the trip back. `write` returns the points visited.
 */
export function runTask(contentType: string, write: (view: ReadView, sink: BodySink) => number): TaskOutcome {
  try {
    current = slabs.acquire();
    sink.attach(current.body);
    const e = seriesEnv();
    // lmdb-js renews its shared read transaction on an event-loop turn, and a Piscina
    // worker in atomics 'sync' mode sleeps in Atomics.wait between tasks without one: reset
    // it so every task reads the latest committed snapshot, not the one of its first task.
    e.root.resetReadTxn();
    const points = withReadView(e, (view) => write(view, sink));
    slabs.lend(current, sink.pos);
    return { ok: true, ...slabs.handOff(current), offset: SLAB_HEADER_BYTES, length: sink.pos, contentType, points };
  } catch (e) {
    if (isServiceError(e)) return { ok: false, error: e.toWire() };
    const err = new ServiceError('internal', `read worker: ${(e as Error)?.message ?? String(e)}`);
    return { ok: false, error: err.toWire() };
  }
}
