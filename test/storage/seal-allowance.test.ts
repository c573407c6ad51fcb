// A group's seal work follows its inflow (write-apply.ts sealAppended): when many heads
// fill in the same transaction, some stay open past full and seal on their next append;
// no point is lost or reordered meanwhile, and a head at the chunk point cap always seals.
import t from 'tap';
import { listChunks, readRaw } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, T0, SEC } from '../helpers/series-store.js';
import { sealBudgetFor } from '../../src/storage/seal.js';
import type { PointBatch, SeriesStore } from '../../src/storage/series-store.js';

const range = { startNs: T0 - SEC, endNs: T0 + 1_000_000n * SEC };

/** Points [from, to) of series k: 1 s cadence with ms jitter, a 0.01-resolution triangle wave. */
function batch(id: string, k: number, from: number, to: number): PointBatch {
  const n = to - from;
  const times = new BigInt64Array(n), values = new Float64Array(n), quality = new Uint32Array(n).fill(192);
  for (let i = 0; i < n; i++) {
    const j = from + i, phase = j % 100;
    times[i] = T0 + BigInt(j) * SEC + BigInt(j % 8) * 1_000_000n;
    values[i] = Math.round((k * 100 + 0.01 * (phase < 50 ? phase : 100 - phase)) * 100) / 100;
  }
  return { series: id, times, values, quality };
}

const openPoints = (store: SeriesStore, id: string): number =>
  store.read((v) => listChunks(v, id, range)).filter((c) => !c.sealed).reduce((a, c) => a + c.count, 0);

t.test('heads that fill together seal within the allowance; the rest seal on their next append', async (t) => {
  // a 4 KiB store's budget (4,072 B): 100 heads fill in under a million points. The point cap
  // of 16,384 lets the probe's first write seal: until a series' bytes per point are measured
  // only the cap makes its head full.
  const { store } = await tempStore(t, { seal: { ...sealBudgetFor(4096), chunkPoints: 16_384 } });
  // points per sealed chunk of this signal, from a probe series written in one go
  const probe = newId();
  await store.createSeries({ id: probe, type: 'float64', writableClass: 'collector' });
  await store.write([batch(probe, 0, 0, 40_000)], WHO);
  const full = store.read((v) => listChunks(v, probe, range)).filter((c) => c.sealed);
  const perChunk = full[0].count;
  t.ok(full.length >= 3 && perChunk > 100, `probe: ${perChunk} points per chunk`);
  const ids = Array.from({ length: 100 }, () => newId());
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  // one transaction each: every head 60 % full, then every head past a chunk (the second
  // transaction brings 0.5 chunks a series and would seal a whole one for each)
  const a = Math.floor(perChunk * 0.6), b = a + Math.floor(perChunk * 0.5);
  await store.write(ids.map((id, k) => batch(id, k, 0, a)), WHO);
  t.ok(ids.every((id) => openPoints(store, id) === a), 'below full: every head open');
  await store.write(ids.map((id, k) => batch(id, k, a, b)), WHO);
  const open = ids.map((id) => openPoints(store, id));
  const sealedChunks = ids.map((id) => store.read((v) => listChunks(v, id, range)).filter((c) => c.sealed).length);
  t.ok(sealedChunks.some((n) => n > 0), 'some heads sealed in the filling transaction');
  t.ok(sealedChunks.some((n) => n === 0), 'others were left open past full (over the allowance)');
  t.ok(open.every((n) => n > 0 && n <= b), 'open heads hold only their own unsealed points');
  for (const [k, id] of ids.entries()) {
    const page = store.read((v) => readRaw(v, id, { ...range, limit: 100_000 }));
    t.equal(page.count, b, `series ${k}: every point readable`);
    const want = batch(id, k, 0, b);
    t.same([...page.ts], [...want.times], `series ${k}: times in order`);
    if (k > 2) continue;
    t.same([...page.f64!.subarray(0, b)], [...(want.values as Float64Array)], `series ${k}: values exact`);
  }
  // the next append of each deferred head seals it (one series per transaction: ample allowance)
  for (const [k, id] of ids.entries()) await store.write([batch(id, k, b, b + 10)], WHO);
  const sealedAfter = ids.map((id) => store.read((v) => listChunks(v, id, range)).filter((c) => c.sealed).length);
  t.ok(sealedAfter.every((n) => n > 0), 'every deferred head sealed on its next append');
  t.ok(ids.every((id) => openPoints(store, id) < perChunk), 'and kept only a partial chunk open');
});

t.test('a head at the chunk point cap seals whatever the allowance', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const ids = Array.from({ length: 200 }, () => newId());
  for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.write(ids.map((id, k) => batch(id, k, 0, 99)), WHO);
  t.ok(ids.every((id) => openPoints(store, id) === 99), 'below the cap and the byte budget: open');
  // one point each: 200 appended points buy far less allowance than 200 chunks of 100
  await store.write(ids.map((id, k) => batch(id, k, 99, 100)), WHO);
  t.ok(ids.every((id) => openPoints(store, id) === 0), 'every head at the point cap sealed in that transaction');
});
