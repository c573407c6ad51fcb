// Where a thread's memory goes, for measuring the service's resident memory by thread
// (issue 33: RSS during a bulk load). Off unless HISTORIAN_HEAP_REPORT names a directory;
// then every thread that calls reportHeap writes its V8 heap figures (and any extra it
// knows, such as PGlite's WASM memory), its event loop's busy time and its CPU time to <dir>/<name>-<threadId>.json once a second and
// at once. Threads share one address space, so /proc sees only the whole process: these
// files split the anonymous part of its RSS between the isolates; the remainder is native
// (LMDB's map, WASM, zlib/http2 buffers, the allocator).
import { getHeapStatistics } from 'node:v8';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';

const DIR = process.env.HISTORIAN_HEAP_REPORT ?? '';

/** This thread's extra figures; on globalThis, as the thread bootstrap may load this module under another URL than the entry does. */
const EXTRA = Symbol.for('historian.heap-report.extra');
type Extra = () => Record<string, number>;
const slot = globalThis as { [EXTRA]?: Extra[] };

/** Adds figures to this thread's reports (a thread's entry calls it; the bootstrap starts the reports). */
export function reportExtra(extra: Extra): void {
  if (DIR !== '') (slot[EXTRA] ??= []).push(extra);
}

/** User + system CPU of the calling thread (Linux: /proc/thread-self/stat, 100 ticks a second); NaN elsewhere. */
function threadCpuMs(): number {
  try {
    const f = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return NaN;
  }
}

/** Starts the reports of this thread under `name` when HISTORIAN_HEAP_REPORT is set; else does nothing. */
export function reportHeap(name: string): void {
  if (DIR === '') return;
  const file = join(DIR, `${name}-${threadId}.json`);
  const write = () => {
    const h = getHeapStatistics();
    const figures = {
      name, threadId, at: Date.now(),
      used_heap_size: h.used_heap_size, total_heap_size: h.total_heap_size, total_physical_size: h.total_physical_size,
      malloced_memory: h.malloced_memory, external_memory: h.external_memory, peak_malloced_memory: h.peak_malloced_memory,
      // the thread's busy time since it started (its event loop's), to split the process's CPU
      loop_active_ms: Math.round(performance.eventLoopUtilization().active),
      cpu_ms: threadCpuMs(),
    };
    try {
      for (const extra of slot[EXTRA] ?? []) Object.assign(figures, extra());
      // written aside and renamed: a reader listing the directory never reads half a report
      writeFileSync(`${file}.tmp`, JSON.stringify(figures));
      renameSync(`${file}.tmp`, file);
    } catch { /* a diagnostics report must not fail the thread */ }
  };
  write();
  // a Piscina worker asleep in Atomics.wait between tasks runs no timers: it reports when it wakes
  setInterval(write, 1000).unref();
}
