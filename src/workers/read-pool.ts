// The read worker pool, seen from the HTTP thread. Piscina with minThreads = maxThreads
// (SERVICE_WORKERS, default the core count): no spawn latency on a burst, and no more
// decoding threads than cores (STACK-NOTES §2). Each worker opens the series LMDB env
// once; each task answers with a finished body in a SharedArrayBuffer.
import { Piscina } from 'piscina';
import { ServiceError } from '../errors.js';
import type { TaskArgs, TaskName, TaskOutcome } from './task-protocol.js';
import { releaseSlab, SlabDirectory } from './body-slabs.js';
import { memoizeWorkerViews } from './piscina-worker-views.js';
import type { CalcWindowResult, CalcWindowsTask } from './tasks/calc-windows-task.js';

/** A finished response body: a view over a slab the worker lent (body-slabs.ts). */
export interface ReadBody {
  /** Valid until release() is called. */
  bytes: Uint8Array;
  contentType: string;
  /** Points the task visited (decode work), for provenance and benchmarks. */
  points: number;
  /** Hands the slab back to its worker; call once the bytes are sent or copied. Idempotent. */
  release: () => void;
}

// Queued tasks beyond this many per worker are refused with 503 capacity-exhausted
// instead of piling up latency without bound (the spec's "render capacity exhausted").
const QUEUE_PER_THREAD = 64;
/** Tasks handed to one worker at once: it runs them one after another (they are synchronous). */
const TASKS_PER_WORKER = 2;

// Compiled, the worker entry is read-worker.js; from sources it goes through a plain .mjs
// bootstrap that registers tsx in the worker when the loader is not inherited (STACK-NOTES §2).
const WORKER_FILE = new URL(import.meta.url.endsWith('.ts') ? './read-worker-boot.mjs' : './read-worker.js', import.meta.url).href;

export class ReadPool {
  private readonly pool: Piscina;
  private readonly slabs = new SlabDirectory();
  readonly threads: number;

  constructor(seriesDir: string, threads: number) {
    this.threads = threads;
    memoizeWorkerViews();
    this.pool = new Piscina({
      filename: WORKER_FILE,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 2 ** 31 - 1,
      maxQueue: threads * QUEUE_PER_THREAD,
      // One task running and the next already posted to the same worker: with one per
      // worker, a finished worker sat idle until the HTTP thread (busy sending the last body)
      // handed it the next task. Two raised fleet raw reads 20-30 % (bench:storage, A/B x3).
      concurrentTasksPerWorker: TASKS_PER_WORKER,
      workerData: { seriesDir },
    });
    // A worker that dies is replaced by Piscina; without a listener the 'error' event
    // would be thrown and take the whole service down.
    this.pool.on('error', (e: unknown) => { process.emitWarning(`read worker failed: ${(e as Error)?.message ?? String(e)}`); });
  }

  /** Runs a read task; throws the task's ServiceError, or 503 when the queue is full. */
  async run<K extends TaskName>(name: K, args: TaskArgs[K], signal?: AbortSignal): Promise<ReadBody> {
    let out: TaskOutcome;
    try {
      out = await this.pool.run(args, { name, signal: signal ?? null });
    } catch (e) {
      const message = (e as Error).message ?? String(e);
      if (/queue is at limit|Task queue is at limit/i.test(message)) throw new ServiceError('capacity-exhausted', 'read capacity is exhausted; retry later');
      if ((e as Error).name === 'AbortError') throw new ServiceError('shutting-down', 'the read was aborted');
      throw new ServiceError('internal', `read task ${name} failed: ${message}`);
    }
    if (!out.ok) throw ServiceError.fromWire(out.error);
    const sab = this.slabs.resolve(out);
    return { bytes: new Uint8Array(sab, out.offset, out.length), contentType: out.contentType, points: out.points, release: () => releaseSlab(sab) };
  }

  /** Evaluates calculation windows in a worker; per window its outcome or its error (by code). 503 when the queue is full. */
  async runCalcWindows(task: CalcWindowsTask): Promise<CalcWindowResult[]> {
    try {
      return (await this.pool.run(task, { name: 'calcWindows' })) as CalcWindowResult[];
    } catch (e) {
      const message = (e as Error).message ?? String(e);
      if (/queue is at limit/i.test(message)) throw new ServiceError('capacity-exhausted', 'read capacity is exhausted; retry later');
      throw new ServiceError('internal', `calculation task failed: ${message}`);
    }
  }

  /** Tasks waiting for a worker (for /v1/jobs-style diagnostics and tests). */
  get queued(): number {
    return this.pool.queueSize;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
