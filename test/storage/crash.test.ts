import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SeriesStore, readRaw } from '../../src/storage/series-store.js';
import { newId } from '../helpers/series-store.js';

t.test('a writer killed with SIGKILL mid-stream loses no acknowledged point', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'series-crash-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const dir = join(root, 'series'), id = newId();
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../helpers/crash-writer.ts', import.meta.url)), dir, id], { stdio: ['ignore', 'pipe', 'inherit'] });
  let acked = -1, buf = '';
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n'); buf = lines.pop()!;
      for (const l of lines) if (l.startsWith('ack ')) acked = Number(l.slice(4));
      if (acked >= 60) { child.kill('SIGKILL'); resolve(); }
    });
    child.on('exit', () => resolve());
  });
  await new Promise((r) => child.once('exit', r).once('close', r));
  t.ok(acked >= 60, `child acknowledged ${acked + 1} batches before the kill`);
  const store = SeriesStore.open(dir);
  t.teardown(() => store.close());
  const T0 = 1_700_000_000_000_000_000n, n = (acked + 1) * 37;
  const page = store.read((v) => readRaw(v, id, { startNs: T0, endNs: T0 + 10n ** 12n, limit: 1_000_000 }));
  t.ok(page.count >= n, `${page.count} points present, ${n} acknowledged`);
  let exact = true;
  for (let i = 0; i < n; i++) if (page.ts[i] !== T0 + BigInt(i) * 1_000_000n || page.f64![i] !== i * 0.1) { exact = false; break; }
  t.ok(exact, 'every acknowledged point is present and exactly equal');
});
