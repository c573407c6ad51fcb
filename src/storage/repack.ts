// Repacking the series store in place, with the service stopped: the maintenance step that
// returns LMDB's high-water mark to the file system. LMDB never shrinks data.mdb; pages
// freed by head segments (a bulk load's open heads), rewritten rollup blocks and retention
// stay in the file as free pages for later commits. repackCopy writes every table in key
// order into a new file; this swaps that file in for the old one.
//
// Safe against a crash at any step: the copy is verified (entries per table) before the
// swap, the swap is one rename over the old data.mdb (atomic on POSIX), and until then the
// old file is untouched. Refused while another live process has the store open (the
// service, the ingest worker, a read worker): its writes would go to the replaced file.
import { existsSync } from 'node:fs';
import { link, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { measureDisk, type DiskUsage } from './disk-usage.js';
import { repackCopy, TABLES } from './repack-copy.js';
import { openSeriesEnv, type SeriesEnv } from './series-env.js';

/** Why a repack did not start; nothing was changed. */
export class RepackRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RepackRefused';
  }
}

export interface RepackResult {
  before: DiskUsage;
  after: DiskUsage;
  /** Where the old file was kept (`keepOld`), else null. */
  oldFile: string | null;
}

/**
 * Rewrites the series store in `seriesDir` (`<data dir>/series`) in key order and swaps the
 * result in. With `keepOld` the old file stays beside it as data.mdb.before-repack.
 */
export async function repackInPlace(seriesDir: string, options: { keepOld?: boolean } = {}): Promise<RepackResult> {
  const dataFile = join(seriesDir, 'data.mdb');
  if (!existsSync(dataFile)) throw new RepackRefused(`no series store at ${seriesDir} (no data.mdb)`);
  const env = openSeriesEnv(seriesDir);
  // no dot in the name: lmdb-js takes a path with an extension for a file, not a directory
  const copyDir = `${seriesDir}-repack`;
  let copy: SeriesEnv | null = null;
  let copying = false;
  try {
    const holders = otherLiveReaders(env);
    if (holders.length > 0) throw new RepackRefused(`the series store is open in process ${holders.join(', ')}: stop the service first`);
    const before = await measureDisk(env);
    copying = true;
    await rm(copyDir, { recursive: true, force: true });
    const copied = await repackCopy(env, copyDir);
    copy = openSeriesEnv(copyDir, { readOnly: true });
    for (const name of TABLES) {
      const want = env[name].getStats() as { entryCount: number }, got = copy[name].getStats() as { entryCount: number };
      if (want.entryCount !== got.entryCount) throw new Error(`the repacked copy holds ${got.entryCount} ${name} entries, the store ${want.entryCount}: the store is left as it was`);
    }
    const after = await measureDisk(copy);
    await copy.close();
    copy = null;
    await env.close();
    const oldFile = options.keepOld === true ? `${dataFile}.before-repack` : null;
    if (oldFile !== null) {
      await rm(oldFile, { force: true });
      await link(dataFile, oldFile);
    }
    await rename(copied, dataFile);
    // The old reader table belongs to the old file; LMDB makes a new one at the next open.
    await unlink(join(seriesDir, 'lock.mdb')).catch(() => undefined);
    return { before, after, oldFile };
  } finally {
    await copy?.close();
    await env.close().catch(() => undefined);
    // Swapped or not (a failed copy, a count that disagreed), the copy's directory goes; a
    // refused run never touches it (it may be another repack's, in progress).
    if (copying) await rm(copyDir, { recursive: true, force: true });
  }
}

/** Processes other than this one, still alive, that hold a reader slot of the store. */
function otherLiveReaders(env: SeriesEnv): number[] {
  env.root.readerCheck();
  const pids = new Set<number>();
  for (const line of env.root.readerList().split('\n')) {
    const m = /^\s*(\d+)\s/.exec(line);
    if (m === null) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && alive(pid)) pids.add(pid);
  }
  return [...pids];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
