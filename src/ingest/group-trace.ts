// Per-group timing trace of the ingest worker, for finding where slow acks come from
// (bench/ingest.ts --trace). Off unless HISTORIAN_INGEST_TRACE names a file; then the worker
// appends JSON lines to it: one per engine transaction (apply, commit and flush times), one per
// group (hand-over, durable, settled, its batches' ids and arrival times) and one per V8 GC.
// Times are absolute milliseconds (performance.timeOrigin + now) so the bench can line
// them up with the collectors' acks. Not a production log: it is bounded only by the run.
import { appendFileSync } from 'node:fs';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

const FILE = process.env.HISTORIAN_INGEST_TRACE ?? '';

/** Absolute milliseconds, comparable across threads and processes of this machine. */
export const absMs = (): number => performance.timeOrigin + performance.now();

class GroupTrace {
  private lines: string[] = [];
  constructor(private readonly file: string) {
    setInterval(() => this.flush(), 500).unref();
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const detail = (e as PerformanceEntry & { detail?: { kind?: number } }).detail;
        this.record({ k: 'gc', t: performance.timeOrigin + e.startTime, ms: e.duration, kind: detail?.kind ?? 0 });
      }
    }).observe({ entryTypes: ['gc'] });
  }
  record(o: Record<string, unknown>): void {
    this.lines.push(JSON.stringify(o));
    if (this.lines.length >= 2000) this.flush();
  }
  flush(): void {
    if (this.lines.length === 0) return;
    appendFileSync(this.file, `${this.lines.join('\n')}\n`);
    this.lines = [];
  }
}

/** The trace, or null when tracing is off (the normal case: callers test it once). */
export const groupTrace: GroupTrace | null = FILE ? new GroupTrace(FILE) : null;
