// The background work the server runs on timers, and what is known about each job:
// name, kind, interval, last run, last outcome, next run. GET /v1/jobs reads it.
// A job never overlaps itself: the next run is scheduled when the current one ends.
import type { Logger } from 'pino';
import { nowNs } from '../clock.js';

export type JobOutcome = 'succeeded' | 'failed';

export interface JobDefinition {
  /** Unique, stable name (e.g. 'lifecycle-enforcement'). */
  name: string;
  /** What sort of work: 'lifecycle', 'seal', later 'calculation'. */
  kind: string;
  intervalMs: number;
  /** Delay before the first run (default: one interval). */
  firstRunMs?: number;
  /** Does the work; the returned text summarises it (kept as last_summary). */
  run: () => Promise<JobRunSummary>;
}

export interface JobRunSummary {
  summary: string;
  /** The Operation the run recorded, when it records one. */
  operationId?: string | null;
}

export interface JobStatus {
  name: string;
  kind: string;
  intervalMs: number;
  running: boolean;
  lastStartedNs: bigint | null;
  lastFinishedNs: bigint | null;
  lastOutcome: JobOutcome | null;
  lastSummary: string | null;
  lastError: string | null;
  lastOperationId: string | null;
  nextRunNs: bigint | null;
  runs: number;
}

interface Entry {
  def: JobDefinition;
  status: JobStatus;
  timer: NodeJS.Timeout | null;
  current: Promise<void> | null;
}

const MS = 1_000_000n;

export class JobRunner {
  private readonly jobs = new Map<string, Entry>();
  private stopped = false;

  constructor(private readonly log: Logger) {}

  register(def: JobDefinition): void {
    if (this.jobs.has(def.name)) throw new Error(`BUG: job ${def.name} registered twice`);
    if (!(def.intervalMs > 0)) throw new Error(`BUG: job ${def.name} needs a positive interval`);
    const entry: Entry = {
      def,
      status: {
        name: def.name, kind: def.kind, intervalMs: def.intervalMs, running: false, lastStartedNs: null, lastFinishedNs: null,
        lastOutcome: null, lastSummary: null, lastError: null, lastOperationId: null, nextRunNs: null, runs: 0,
      },
      timer: null,
      current: null,
    };
    this.jobs.set(def.name, entry);
    this.schedule(entry, def.firstRunMs ?? def.intervalMs);
  }

  private schedule(entry: Entry, delayMs: number): void {
    if (this.stopped) { entry.status.nextRunNs = null; return; }
    entry.status.nextRunNs = nowNs() + BigInt(Math.round(delayMs)) * MS;
    entry.timer = setTimeout(() => { entry.timer = null; void this.runEntry(entry); }, delayMs);
    entry.timer.unref();
  }

  private runEntry(entry: Entry): Promise<void> {
    if (entry.current) return entry.current;
    const s = entry.status;
    if (entry.timer) { clearTimeout(entry.timer); entry.timer = null; }
    s.running = true;
    s.nextRunNs = null;
    s.lastStartedNs = nowNs();
    entry.current = (async () => {
      try {
        const r = await entry.def.run();
        s.lastOutcome = 'succeeded';
        s.lastSummary = r.summary;
        s.lastError = null;
        s.lastOperationId = r.operationId ?? null;
      } catch (e) {
        s.lastOutcome = 'failed';
        s.lastError = (e as Error)?.message ?? String(e);
        this.log.warn({ err: e, job: entry.def.name }, 'background job failed');
      } finally {
        s.running = false;
        s.runs++;
        s.lastFinishedNs = nowNs();
        entry.current = null;
        this.schedule(entry, entry.def.intervalMs);
      }
    })();
    return entry.current;
  }

  /** Runs a job now (tests, operators); resolves when that run ends. */
  runNow(name: string): Promise<void> {
    const entry = this.jobs.get(name);
    if (!entry) return Promise.reject(new Error(`no job named ${name}`));
    return this.runEntry(entry);
  }

  list(): JobStatus[] {
    return [...this.jobs.values()].map((e) => ({ ...e.status })).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** Stops the timers and waits for runs in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    const running: Promise<void>[] = [];
    for (const e of this.jobs.values()) {
      if (e.timer) { clearTimeout(e.timer); e.timer = null; }
      e.status.nextRunNs = null;
      if (e.current) running.push(e.current);
    }
    await Promise.allSettled(running);
  }
}
