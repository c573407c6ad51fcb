// The bytes of annotation attachments, under <data dir>/attachments, content-addressed by
// SHA-256: <2 hex>/<64 hex>. An upload is written to tmp/ while it is hashed and its type
// checked, then renamed into place (the same bytes uploaded twice are one file); a failed
// or refused upload leaves nothing. Redaction unlinks the file.
import { mkdir, open, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ContentCheck } from './content-check.js';

export interface StoredUpload { sha256: string; sizeBytes: number }

/** Feeds the upload's chunks, in order, to `write`; resolves with the size. */
export type UploadSource = (write: (chunk: Buffer) => Promise<void>) => Promise<number>;

export class AttachmentStore {
  private constructor(readonly dir: string) {}

  static async open(dataDir: string): Promise<AttachmentStore> {
    const dir = join(dataDir, 'attachments');
    await mkdir(join(dir, 'tmp'), { recursive: true });
    // uploads cut short by a stop: never referenced, never complete
    await rm(join(dir, 'tmp'), { recursive: true, force: true });
    await mkdir(join(dir, 'tmp'), { recursive: true });
    return new AttachmentStore(dir);
  }

  pathOf(sha256: string): string {
    return join(this.dir, sha256.slice(0, 2), sha256);
  }

  /** Streams an upload to disk, hashing and checking it; the file is in place when this resolves. */
  async receive(declaredType: string, source: UploadSource): Promise<StoredUpload> {
    const tmp = join(this.dir, 'tmp', randomUUID());
    const file = await open(tmp, 'wx');
    const hash = createHash('sha256');
    const check = new ContentCheck(declaredType);
    let closed = false;
    try {
      const size = await source(async (chunk) => {
        hash.update(chunk);
        check.update(chunk);
        check.check(false);
        let at = 0;
        while (at < chunk.length) at += (await file.write(chunk, at, chunk.length - at)).bytesWritten;
      });
      check.check(true);
      await file.sync();
      await file.close();
      closed = true;
      const sha256 = hash.digest('hex');
      await mkdir(join(this.dir, sha256.slice(0, 2)), { recursive: true });
      await rename(tmp, this.pathOf(sha256));
      return { sha256, sizeBytes: size };
    } catch (e) {
      if (!closed) await file.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
  }

  /** Opens the stored bytes; null when they are gone (redacted). */
  async openBytes(sha256: string): Promise<{ file: FileHandle; size: number } | null> {
    try {
      const file = await open(this.pathOf(sha256), 'r');
      return { file, size: (await file.stat()).size };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async exists(sha256: string): Promise<boolean> {
    return stat(this.pathOf(sha256)).then(() => true, () => false);
  }

  /** Removes the bytes (redaction, lifecycle); already gone is fine. */
  async remove(sha256: string): Promise<void> {
    await unlink(this.pathOf(sha256)).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'ENOENT') throw e; });
  }
}
