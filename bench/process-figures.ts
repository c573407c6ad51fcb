// What a benchmark reads about another process from /proc (CPU, bytes written, resident
// memory) and about a directory from the file system, so every bench that runs a server
// (ours or a peer) measures both the same way.
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** User + system CPU seconds of a process (clock ticks of 100 Hz). */
export async function cpuSeconds(pid: number): Promise<number> {
  const f = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Bytes the process caused to be written to storage (page writes, msync, fsync). */
export async function writtenBytes(pid: number): Promise<number> {
  const m = /write_bytes:\s+(\d+)/.exec(await readFile(`/proc/${pid}/io`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/**
 * Resident memory (MB): all of it, its anonymous part (heaps, buffers, WASM memory), and its
 * file-backed part (mapped files: the binary, LMDB's data file, a peer's own mapped parts;
 * clean pages the kernel can drop and read again).
 */
export async function rssMb(pid: number): Promise<{ all: number; anon: number; file: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { all: kb('VmRSS') / 1024, anon: kb('RssAnon') / 1024, file: (kb('RssFile') + kb('RssShmem')) / 1024 };
}

/** Bytes of every file under dir (apparent sizes). */
export async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += (await stat(join(e.parentPath, e.name))).size;
  }
  return total;
}

/** Samples a process's resident memory every intervalMs and keeps the peaks (each part's own) until stopped. */
export class RssPeak {
  all = 0;
  anon = 0;
  file = 0;
  private readonly timer: NodeJS.Timeout;
  constructor(pid: number, intervalMs = 200) {
    this.timer = setInterval(() => {
      rssMb(pid).then((m) => { this.all = Math.max(this.all, m.all); this.anon = Math.max(this.anon, m.anon); this.file = Math.max(this.file, m.file); }, () => undefined);
    }, intervalMs);
  }
  stop(): void { clearInterval(this.timer); }
}

/**
 * CPU seconds (user + system) of each thread of a process, by thread id (the main
 * thread's id is the pid): which thread a cost lands on, where the process total cannot tell.
 */
export async function threadCpuSeconds(pid: number): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    try {
      const f = (await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8')).split(') ')[1].split(' ');
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) / 100);
    } catch { /* the thread ended meanwhile */ }
  }
  return out;
}
