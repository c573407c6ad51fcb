// Ballast files: the harness takes the small filesystem's space away and gives it back.
import { closeSync, openSync, writeSync, fsyncSync, rmSync, statfsSync } from 'node:fs';

export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/**
 * Writes `path` until only `leaveFree` bytes remain free (0: until the filesystem refuses
 * with ENOSPC). Returns the bytes written.
 */
export function fillUntil(dir: string, path: string, leaveFree: number): number {
  const fd = openSync(path, 'a');
  const block = Buffer.alloc(1 << 20, 0x5a);
  let written = 0;
  try {
    for (;;) {
      const room = freeBytes(dir) - leaveFree;
      if (room <= 0) break;
      const n = Math.min(block.length, room);
      try {
        written += writeSync(fd, block, 0, n);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break;
        throw e;
      }
    }
    // Down to the last bytes: small writes until the filesystem says no.
    if (leaveFree === 0) {
      const small = Buffer.alloc(4096, 0x5a);
      for (;;) {
        try { const n = writeSync(fd, small); if (n === 0) break; written += n; } catch { break; }
      }
    }
    try { fsyncSync(fd); } catch { /* a full disk may refuse the flush of the last block: the space is taken anyway */ }
  } finally {
    closeSync(fd);
  }
  return written;
}

export function removeBallast(path: string): void {
  rmSync(path, { force: true });
}
