// Quiet sealing (SeriesStoreOptions.quietSealMs): once writes stop, the heads the writer
// holds are sealed within the quiet delay, not at the idle-head job; small heads and heads
// still being written stay open; reads are exact before and after.
import t from 'tap';
import { readRaw, listChunks } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const secs = (from: number, n: number) => Array.from({ length: n }, (_, i) => T0 + BigInt(from + i) * SEC);
const vals = (from: number, n: number) => Array.from({ length: n }, (_, i) => Math.round(100 * Math.sin((from + i) / 50)) / 100);
const ALL = { startNs: T0, endNs: T0 + 100_000n * SEC };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a bulk load is sealed once writes stop; a small head stays open; reads are exact', async (t) => {
  const { store } = await tempStore(t, { quietSealMs: 150, sealThread: true });
  const big = [newId(), newId()], small = newId();
  for (const id of [...big, small]) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let b = 0; b < 3; b++) {
    await store.write([...big.map((id) => f64Batch(id, secs(b * 1000, 1000), vals(b * 1000, 1000))), f64Batch(small, secs(b * 10, 10), vals(b * 10, 10))], WHO);
  }
  t.equal(store.headPoints(big[0]), 3000, 'open while the load runs');
  const read = (id: string) => { const p = store.read((v) => readRaw(v, id, { startNs: T0, endNs: T0 + 100_000n * SEC, limit: 100_000 })); return [...p.f64!.subarray(0, p.count)]; };
  for (let waited = 0; store.headPoints(big[0]) > 0 && waited < 5000; waited += 50) await sleep(50);
  await store.settleSeals();
  for (const id of big) {
    t.equal(store.headPoints(id), 0, 'sealed after the quiet delay');
    t.same(read(id), vals(0, 3000), 'every point reads back');
    t.ok(store.read((v) => listChunks(v, id, ALL)).every((c) => c.sealed), 'all in sealed chunks');
  }
  t.equal(store.headPoints(small), 30, 'a head below the minimum stays for the idle-head job');
  t.same(read(small), vals(0, 30));
  t.equal(store.quietSeals.points, 6000);
  // writing on after a quiet seal takes the short last chunk back and seals on from it
  await store.write([f64Batch(big[0], secs(3000, 1500), vals(3000, 1500))], WHO);
  t.same(read(big[0]), vals(0, 4500), 'appends after a quiet seal read exactly');
  for (let waited = 0; store.headPoints(big[0]) > 0 && waited < 5000; waited += 50) await sleep(50);
  t.equal(store.headPoints(big[0]), 0, 'sealed again once quiet');
  t.same(read(big[0]), vals(0, 4500));
  const chunks = store.read((v) => listChunks(v, big[0], ALL));
  const sizes = chunks.map((c) => `${c.count} points/${c.bytes} B`).join(', ');
  t.equal(chunks.reduce((a, c) => a + c.count, 0), 4500);
  t.ok(chunks.length > 1 && chunks.slice(0, -1).every((c) => c.bytes >= 0.9 * (16384 - 24)), `the short chunk was taken back: no short chunk before the last (${sizes})`);
});

t.test('no quiet seal while writes keep coming', async (t) => {
  const { store } = await tempStore(t, { quietSealMs: 300 });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const t0 = Date.now();
  for (let b = 0; Date.now() - t0 < 900; b++) {
    await store.write([f64Batch(id, secs(b * 100, 100), vals(b * 100, 100))], WHO);
    await sleep(60);
  }
  t.ok(store.headPoints(id) >= 1024, `${store.headPoints(id)} points open while writes came every 60 ms`);
  t.equal(store.quietSeals.runs, 0, 'no quiet seal ran');
  for (let waited = 0; store.headPoints(id) > 0 && waited < 5000; waited += 50) await sleep(50);
  t.equal(store.headPoints(id), 0, 'sealed after the writes stopped');
});

t.test('closing the store cancels a pending quiet seal', async (t) => {
  const { store } = await tempStore(t, { quietSealMs: 10_000 });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.write([f64Batch(id, secs(0, 2000), vals(0, 2000))], WHO);
  const t0 = Date.now();
  await store.close();
  t.ok(Date.now() - t0 < 5000, 'close does not wait for the quiet delay');
  t.equal(store.quietSeals.runs, 0);
});
