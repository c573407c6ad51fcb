import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SeriesStore, readRaw } from '../../src/storage/series-store.js';
import { newId, T0, SEC, WHO } from '../helpers/series-store.js';

// `npm run storage:repack` on a stopped service's data directory: the store is rewritten in
// key order and swapped in, every point reads back the same, writes go on, and the file
// shrinks to what the data needs. Refused (nothing changed) while another process has the
// store open, or where there is no store.

const CLI = fileURLToPath(new URL('../../src/storage/repack-cli.ts', import.meta.url));

function repack(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', CLI, ...args], (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

/** Twelve series of a wandering 0.01-resolution value, 4,000 points each at 1 s, loaded in slices and sealed. */
async function loadedStore(dir: string): Promise<{ ids: string[]; points: Map<string, string> }> {
  const store = SeriesStore.open(join(dir, 'series'));
  const ids: string[] = [];
  for (let k = 0; k < 12; k++) {
    const id = newId();
    await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
    ids.push(id);
  }
  const N = 4000;
  for (let a = 0; a < N; a += 500) {
    await store.write(ids.map((id, k) => {
      const times = new BigInt64Array(500), values = new Float64Array(500), quality = new Uint32Array(500).fill(192);
      for (let i = 0; i < 500; i++) {
        times[i] = T0 + BigInt(a + i) * SEC + BigInt((a + i + k) % 7) * 1_000_000n;
        values[i] = Math.round(5000 + 300 * Math.sin((a + i) / (50 + k))) / 100;
      }
      return { series: id, times, values, quality };
    }), WHO);
  }
  await store.sealHeads(0);
  const points = await readAll(store, ids);
  await store.close();
  return { ids, points };
}

async function readAll(store: SeriesStore, ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const id of ids) {
    const page = store.read((v) => readRaw(v, id, { startNs: T0, endNs: T0 + 100_000n * SEC, limit: 100_000 }));
    out.set(id, JSON.stringify([Array.from(page.ts.subarray(0, page.count), String), Array.from(page.f64!.subarray(0, page.count)), Array.from(page.quality.subarray(0, page.count))]));
  }
  return out;
}

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'repack-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('a repacked store reads back every point, takes writes, and its file shrinks to its pages', async (t) => {
  const dir = await tempDir(t);
  const { ids, points } = await loadedStore(dir);
  const file = join(dir, 'series', 'data.mdb');
  const sizeBefore = statSync(file).size;
  const r = await repack(['--data-dir', dir, '--json']);
  t.equal(r.code, 0, `exit 0 (${r.stderr.trim()})`);
  const report = JSON.parse(r.stdout) as { before: { fileBytes: number; liveBytes: number }; after: { fileBytes: number; liveBytes: number; pageSize: number }; old_file: string | null };
  t.equal(report.before.fileBytes, sizeBefore, 'before: the file as it was');
  t.equal(statSync(file).size, report.after.fileBytes, 'after: the file now in place');
  t.ok(report.after.fileBytes < sizeBefore / 2, `the file shrank: ${sizeBefore} -> ${report.after.fileBytes} bytes`);
  t.ok(report.after.fileBytes <= report.after.liveBytes + report.after.pageSize * 4, 'and holds little but live pages');
  t.ok(report.after.liveBytes <= report.before.liveBytes, `live pages no more than before: ${report.before.liveBytes} -> ${report.after.liveBytes}`);
  t.equal(report.old_file, null, 'the old file is gone');
  t.notOk(existsSync(`${file}.before-repack`), 'no old file left behind');
  t.notOk(existsSync(join(dir, 'series-repack')), 'no copy directory left behind');

  const store = SeriesStore.open(join(dir, 'series'));
  t.teardown(() => store.close());
  t.same(await readAll(store, ids), points, 'every point of every series reads back the same');
  const w = await store.write([{ series: ids[0], times: BigInt64Array.of(T0 + 10_000n * SEC), values: Float64Array.of(42.5), quality: Uint32Array.of(192) }], WHO);
  t.equal(w.accepted, 1, 'a write after the repack is stored');
  const last = store.read((v) => readRaw(v, ids[0], { startNs: T0 + 10_000n * SEC, endNs: T0 + 10_001n * SEC, limit: 10 }));
  t.same([last.count, last.f64![0]], [1, 42.5], 'and reads back');
});

t.test('--keep-old leaves the old file beside the repacked one', async (t) => {
  const dir = await tempDir(t);
  await loadedStore(dir);
  const file = join(dir, 'series', 'data.mdb');
  const sizeBefore = statSync(file).size;
  const r = await repack(['--data-dir', dir, '--keep-old', '--json']);
  t.equal(r.code, 0, `exit 0 (${r.stderr.trim()})`);
  t.equal(statSync(`${file}.before-repack`).size, sizeBefore, 'the old file, whole');
  t.ok(statSync(file).size < sizeBefore, 'the repacked file in its place');
});

t.test('a store open in another process is not repacked', async (t) => {
  const dir = await tempDir(t);
  const { ids } = await loadedStore(dir);
  const store = SeriesStore.open(join(dir, 'series'));
  // a read takes this process's reader slot, as a running service's threads hold theirs
  store.read((v) => readRaw(v, ids[0], { startNs: T0, endNs: T0 + SEC, limit: 1 }));
  const file = join(dir, 'series', 'data.mdb');
  const before = statSync(file);
  const r = await repack(['--data-dir', dir]);
  await store.close();
  t.equal(r.code, 2, 'exit 2: refused');
  t.match(r.stderr, new RegExp(`open in process ${process.pid}: stop the service first`), 'names the process holding the store');
  const after = statSync(file);
  t.same([after.size, after.mtimeMs, after.ino], [before.size, before.mtimeMs, before.ino], 'the file is untouched');
});

t.test('a directory without a store, or an unknown argument, is refused with a message', async (t) => {
  const dir = await tempDir(t);
  const none = await repack(['--data-dir', dir]);
  t.equal(none.code, 2);
  t.match(none.stderr, /no series store at .*series \(no data\.mdb\)/);
  const bad = await repack(['--data-dir', dir, '--fast']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /unknown argument --fast/);
  t.notOk(existsSync(join(dir, 'series')), 'nothing was created');
});
