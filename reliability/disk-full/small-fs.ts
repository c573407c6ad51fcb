// A filesystem of its own for the data directory, small enough to fill in seconds: a
// loop-mounted ext4 image (the closest to a real disk: journal, fsync, ENOSPC from the
// kernel), else a tmpfs with a size limit. Needs root (mount); when neither can be mounted
// the harness skips with the reason.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface SmallFs {
  kind: 'ext4-loop' | 'tmpfs';
  dir: string;
  sizeBytes: number;
  unmount(): void;
}

function run(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function why(e: unknown): string {
  const err = e as { stderr?: Buffer; message?: string };
  return (err.stderr?.toString().trim() || err.message || String(e)).split('\n')[0];
}

/** Mounts a filesystem of `sizeMiB` under `workDir/mnt`; returns null and the reasons when it cannot. */
export function mountSmallFs(workDir: string, sizeMiB: number, prefer: 'ext4-loop' | 'tmpfs' = 'ext4-loop'): { fs: SmallFs | null; reasons: string[] } {
  const dir = join(workDir, 'mnt');
  mkdirSync(dir, { recursive: true });
  const reasons: string[] = [];
  const attempts = prefer === 'ext4-loop' ? ['ext4-loop', 'tmpfs'] as const : ['tmpfs', 'ext4-loop'] as const;
  for (const kind of attempts) {
    try {
      if (kind === 'ext4-loop') {
        const image = join(workDir, 'disk.img');
        run('truncate', ['-s', `${sizeMiB}M`, image]);
        run('mkfs.ext4', ['-q', '-F', '-m', '0', image]);
        run('mount', ['-o', 'loop', image, dir]);
        return { fs: { kind, dir, sizeBytes: sizeMiB * 1024 * 1024, unmount: () => { unmount(dir); rmSync(image, { force: true }); } }, reasons };
      }
      run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
      return { fs: { kind, dir, sizeBytes: sizeMiB * 1024 * 1024, unmount: () => unmount(dir) }, reasons };
    } catch (e) {
      reasons.push(`${kind}: ${why(e)}`);
    }
  }
  return { fs: null, reasons };
}

function unmount(dir: string): void {
  try {
    run('umount', [dir]);
  } catch {
    run('umount', ['-l', dir]); // something still holds a file: detach now, freed when released
  }
}
