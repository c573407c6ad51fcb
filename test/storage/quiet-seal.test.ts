// Quiet sealing (SeriesStoreOptions.quietSealMs): once a bulk of writes stops, the heads the
// writer wrote are sealed within the quiet delay, not at the idle-head job; heads still
// being written, and the heads of a site writing a few points now and then, stay open;
// reads are exact before and after.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SeriesStore, readRaw, listChunks } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const secs = (from: number, n: number) => Array.from({ length: n }, (_, i) => T0 + BigInt(from + i) * SEC);
const vals = (from: number, n: number) => Array.from({ length: n }, (_, i) => Math.round(100 * Math.sin((from + i) / 50)) / 100);
const ALL = { startNs: T0, endNs: T0 + 100_000n * SEC };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a bulk load is sealed once writes stop, small heads too; reads are exact', async (t) => {
  const { store } = await tempStore(t, { quietSealMs: 150, quietSealAfterPoints: 5000, sealThread: true });
  const big = [newId(), newId()], small = newId();
  for (const id of [...big, small]) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let b = 0; b < 3; b++) {
    await store.write([...big.map((id) => f64Batch(id, secs(b * 1000, 1000), vals(b * 1000, 1000))), f64Batch(small, secs(b * 10, 10), vals(b * 10, 10))], WHO);
  }
  t.equal(store.headPoints(big[0]), 3000, 'open while the load runs');
  const read = (id: string) => { const p = store.read((v) => readRaw(v, id, { startNs: T0, endNs: T0 + 100_000n * SEC, limit: 100_000 })); return [...p.f64!.subarray(0, p.count)]; };
  for (let waited = 0; store.headPoints(big[0]) > 0 && waited < 20_000; waited += 50) await sleep(50);
  await store.settleSeals();
  for (const id of big) {
    t.equal(store.headPoints(id), 0, 'sealed after the quiet delay');
    t.same(read(id), vals(0, 3000), 'every point reads back');
    t.ok(store.read((v) => listChunks(v, id, ALL)).every((c) => c.sealed), 'all in sealed chunks');
  }
  t.equal(store.headPoints(small), 0, 'a small head of the same load too');
  t.same(read(small), vals(0, 30));
  // the seal thread may have sealed full chunks off the big heads first: the quiet seal did the rest
  t.ok(store.quietSeals.runs >= 1 && store.quietSeals.points >= 30, `quiet seals ${JSON.stringify(store.quietSeals)}`);
  // writing on after a quiet seal, then quiet again: the short last chunk is taken back
  await store.write([f64Batch(big[0], secs(3000, 5000), vals(3000, 5000))], WHO);
  t.same(read(big[0]), vals(0, 8000), 'appends after a quiet seal read exactly');
  for (let waited = 0; store.headPoints(big[0]) > 0 && waited < 20_000; waited += 50) await sleep(50);
  t.equal(store.headPoints(big[0]), 0, 'sealed again once quiet');
  t.same(read(big[0]), vals(0, 8000));
  const chunks = store.read((v) => listChunks(v, big[0], ALL));
  const sizes = chunks.map((c) => `${c.count} points/${c.bytes} B`).join(', ');
  t.equal(chunks.reduce((a, c) => a + c.count, 0), 8000);
  t.ok(chunks.every((c) => c.sealed), `all sealed (${sizes})`);
  // the head after a quiet seal is new to the cache: it is measured from the partial last
  // chunk, so that chunk is taken back when the head fills, not left short between full ones
  t.ok(chunks.slice(0, -1).every((c) => c.bytes >= 0.9 * (16384 - 24)), `no short chunk before the last (${sizes})`);
});

t.test('no quiet seal after a few points, nor while writes keep coming', async (t) => {
  // the quiet delay is long beside the 60 ms write cadence so a write slowed by a loaded
  // machine cannot look like the end of a bulk
  const { store } = await tempStore(t, { quietSealMs: 800, quietSealAfterPoints: 1000 });
  const few = newId();
  await store.createSeries({ id: few, type: 'float64', writableClass: 'collector' });
  await store.write([f64Batch(few, secs(0, 999), vals(0, 999))], WHO);
  await sleep(1400);
  t.equal(store.headPoints(few), 999, 'fewer points than a bulk: left to the idle-head job');
  t.equal(store.quietSeals.runs, 0);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let b = 0; b < 12; b++) {
    await store.write([f64Batch(id, secs(b * 100, 100), vals(b * 100, 100))], WHO);
    await sleep(60);
  }
  t.equal(store.headPoints(id), 1200, 'every point open while writes came every 60 ms');
  t.equal(store.quietSeals.runs, 0, 'no quiet seal ran');
  for (let waited = 0; store.headPoints(id) > 0 && waited < 20_000; waited += 50) await sleep(50);
  t.equal(store.headPoints(id), 0, 'sealed after the writes stopped');
  t.equal(store.headPoints(few), 0, 'with the earlier few points: together a bulk');
});

t.test('a quiet seal stopped by a write inside a load still seals what it left once the load ends', async (t) => {
  const { store } = await tempStore(t, { quietSealMs: 300, quietSealAfterPoints: 100_000 });
  // 600,000 open points: more than one seal transaction's slice, so a write can stop it between slices
  const ids = Array.from({ length: 250 }, () => newId());
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.write(ids.map((id) => f64Batch(id, secs(0, 2400), vals(0, 2400))), WHO);
  const sealing = store.sealQuiet();
  // the pause ends with a few points: fewer than a bulk on their own
  await store.write([f64Batch(ids[0], secs(2400, 10), vals(2400, 10))], WHO);
  const first = await sealing;
  t.ok(first > 0 && first < 600_000, `the seal stopped part way (${first} points sealed)`);
  for (let waited = 0; ids.some((id) => store.headPoints(id) > 0) && waited < 20_000; waited += 50) await sleep(50);
  t.equal(ids.filter((id) => store.headPoints(id) > 0).length, 0, 'every head sealed after the load, not left to the idle job');
  t.same(store.read((v) => { const p = readRaw(v, ids[0], { startNs: T0, endNs: T0 + 100_000n * SEC, limit: 100_000 }); return p.count; }), 2410);
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

t.test('with a seal thread the quiet seal encodes there; a close with its copies in flight loses no point', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiet-seal-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const ids = [newId(), newId(), newId()];
  const read = (s: SeriesStore, id: string) => { const p = s.read((v) => readRaw(v, id, { startNs: T0, endNs: T0 + 100_000n * SEC, limit: 100_000 })); return [...p.f64!.subarray(0, p.count)]; };
  const load = async (s: SeriesStore, from: number) => {
    for (const id of ids) await s.createSeries({ id, type: 'float64', writableClass: 'collector' });
    await s.write(ids.map((id) => f64Batch(id, secs(from, 2000), vals(from, 2000))), WHO);
  };
  // a quiet seal whose copies are on the thread when the store closes: the heads stay open and durable
  const first = SeriesStore.open(join(dir, 'series'), { sealThread: true, groupWindowMs: 0 });
  await load(first, 0);
  const inFlight = first.sealQuiet();
  await first.close();
  await inFlight;
  const store = SeriesStore.open(join(dir, 'series'), { sealThread: true, groupWindowMs: 0 });
  t.teardown(() => store.close());
  for (const id of ids) t.same(read(store, id), vals(0, 2000), 'every point after the close');
  // a quiet seal to the end: the chunks came from the thread, every point sealed and exact
  await load(store, 2000);
  const before = store.sealThreadStats()!.installedChunks;
  const sealed = await store.sealQuiet();
  await store.settleSeals();
  t.ok(sealed >= 3 * 2000, `${sealed} points went to be sealed`);
  t.ok(store.sealThreadStats()!.installedChunks > before, `chunks stored from the thread: ${store.sealThreadStats()!.installedChunks - before}`);
  for (const id of ids) {
    t.equal(store.headPoints(id), 0, 'sealed');
    t.same(read(store, id), vals(0, 4000), 'every point reads back');
    t.ok(store.read((v) => listChunks(v, id, ALL)).every((c) => c.sealed), 'all in sealed chunks');
  }
});
