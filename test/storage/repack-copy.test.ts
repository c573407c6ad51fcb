// The packed copy: every entry of every table, byte for byte, in fewer leaf pages, and a
// store opened on it reads and writes like the original.
import t from 'tap';
import { join } from 'node:path';
import { SeriesStore, readRaw, readRollups } from '../../src/storage/series-store.js';
import { repackCopy } from '../../src/storage/repack-copy.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const all = { startNs: T0 - 1000n * SEC, endNs: T0 + 10_000_000n * SEC };
const TABLES = ['chunks', 'heads', 'segments', 'audit', 'rollups', 'meta'] as const;

function entries(store: SeriesStore, table: (typeof TABLES)[number]): string[] {
  return store.read((v) => [...v.env[table].getRange({ transaction: v.txn })].map(({ key, value }) => `${key.toString('hex')}=${value.toString('hex')}`));
}

t.test('a packed copy holds every entry of every table in no more pages, and a store on it reads and writes the same', async (t) => {
  const { store, dir } = await tempStore(t, { seal: { chunkPoints: 40 } });
  const ids = Array.from({ length: 60 }, () => newId());
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  // series written in turn, so their chunks and rollup blocks interleave in the key space
  for (let k = 0; k < 12; k++) {
    await store.write(ids.map((id, j) => f64Batch(id, Array.from({ length: 25 }, (_, i) => T0 + BigInt(k * 25 + i) * 600n * SEC), Array.from({ length: 25 }, (_, i) => j + (k * 25 + i) / 8))), WHO);
  }
  await store.write([f64Batch(ids[0], [T0], [-1])], WHO); // one superseded point: an audit entry
  await store.sealHeads();
  await store.write([f64Batch(ids[1], [T0 + 400n * 600n * SEC], [7])], WHO); // one open head: a record and a segment
  const copyDir = join(dir, 'packed');
  await repackCopy(store.env, copyDir);
  const copy = SeriesStore.open(copyDir);
  t.teardown(() => copy.close());
  for (const table of TABLES) t.same(entries(copy, table), entries(store, table), `${table}: the same entries`);
  const [a, b] = [await store.diskUsage(), await copy.diskUsage()];
  t.ok(b.liveBytes <= a.liveBytes, `live ${a.liveBytes} -> ${b.liveBytes}`);
  t.ok(b.tablePages.chunks.leaf < a.tablePages.chunks.leaf, `chunk leaf pages ${a.tablePages.chunks.leaf} -> ${b.tablePages.chunks.leaf}`);
  const raw = (s: SeriesStore, id: string) => { const p = s.read((v) => readRaw(v, id, { ...all, limit: 100_000 })); return [[...p.ts], [...p.f64!.subarray(0, p.count)]]; };
  const hours = (s: SeriesStore, id: string) => s.read((v) => readRollups(v, id, { interval: '1h', ...all, continuity: 'stepped' })).count;
  for (const id of [ids[0], ids[1], ids[59]]) {
    t.same(raw(copy, id), raw(store, id), 'raw points');
    t.equal(hours(copy, id), hours(store, id), 'rollup buckets');
  }
  t.equal((await copy.write([f64Batch(ids[1], [T0 + 401n * 600n * SEC], [8])], WHO)).accepted, 1, 'the copy takes writes');
  t.equal(copy.headPoints(ids[1]), 2);
});
