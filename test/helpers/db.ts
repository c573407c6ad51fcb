// A fresh model database for tests of the model layer without the HTTP server.
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/model/db.js';
import { freshDatabase } from './service.js';

export async function testDb(t: Test): Promise<Db> {
  const url = await freshDatabase(t);
  const dir = url ? '' : await mkdtemp(join(tmpdir(), 'historian-db-'));
  const db = await openDb({ url, pgliteDir: url ? 'memory://' : join(dir, 'model') });
  t.teardown(async () => {
    await db.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return db;
}
