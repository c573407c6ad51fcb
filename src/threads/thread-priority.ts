// Read workers give way to the HTTP thread when the cores are short. The pool has one worker
// per core, and a client of its own on the same machine (a benchmark, a dashboard host) makes
// more runnable threads than cores: the HTTP thread then waited 29-40 ms for a core while
// both workers decoded (bench:storage's per-phase split of event-loop stalls, /proc schedstat).
// A nice value weighs a thread in the kernel's fair scheduler only when threads compete, so a
// worker on an otherwise idle core runs as fast as before.
import { setPriority } from 'node:os';

/** Nice value of a read worker thread: CFS weight 110 against the HTTP thread's 1024 (docs/decisions.md). */
export const READ_WORKER_NICE = 10;

/**
 * Lowers the calling thread's scheduling priority. Linux only: there a nice value belongs to
 * a thread and setpriority(PRIO_PROCESS, 0) means the calling thread; elsewhere it would
 * lower the whole service. Returns whether it was applied (a container may forbid it).
 */
export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    setPriority(nice);
    return true;
  } catch {
    return false;
  }
}
