// A writer with a seal thread collects its thread's garbage once enough head columns were let
// go (SeriesStoreOptions.collectAfterBytes): columns a head outgrew and the columns of heads a
// seal emptied are external memory V8 frees only at a full collection. Reads stay exact.
import t from 'tap';
import { readRaw } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const secs = (from: number, n: number) => Array.from({ length: n }, (_, i) => T0 + BigInt(from + i) * SEC);
const vals = (from: number, n: number) => Array.from({ length: n }, (_, i) => Math.floor((from + i) / 40) / 10);

for (const [name, collectAfterBytes] of [['64 KB', 65_536], ['never', 0]] as const) {
  t.test(`growing heads and a seal let columns go; collections with a bound of ${name}`, async (t) => {
    const { store } = await tempStore(t, { sealThread: true, collectAfterBytes });
    const ids = Array.from({ length: 4 }, () => newId());
    for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
    // 256 -> 4096 -> 5120 -> 6400 points of columns: each step lets the previous ones go
    for (let b = 0; b < 12; b++) await store.write(ids.map((id) => f64Batch(id, secs(b * 500, 500), vals(b * 500, 500))), WHO);
    const grown = store.collections;
    await store.sealQuiet();
    await store.settleSeals();
    // a transaction after the seal's counts the emptied heads
    await store.write([f64Batch(ids[0], secs(6000, 10), vals(6000, 10))], WHO);
    if (collectAfterBytes > 0) {
      t.ok(grown > 0, `collections while heads grew: ${grown}`);
      t.ok(store.collections > grown, `and after the seal emptied them: ${store.collections}`);
    } else t.equal(store.collections, 0, 'no bound: V8 collects when it will');
    for (const id of ids) {
      const n = id === ids[0] ? 6010 : 6000;
      const p = store.read((v) => readRaw(v, id, { startNs: T0, endNs: T0 + 100_000n * SEC, limit: 100_000 }));
      t.same([...p.f64!.subarray(0, p.count)], vals(0, n), 'every point reads back');
    }
  });
}

t.test('a writer without a seal thread does not collect unless asked', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let b = 0; b < 12; b++) await store.write([f64Batch(id, secs(b * 500, 500), vals(b * 500, 500))], WHO);
  t.equal(store.collections, 0);
});
