import t, { type Test } from 'tap';
import { SeriesStore, readOpenColumns, readOpenTail } from '../../src/storage/series-store.js';
import type { PointColumns } from '../../src/storage/encoding/chunk-types.js';
import { seriesKey } from '../../src/storage/keys.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const secs = (from: number, n: number) => Array.from({ length: n }, (_, i) => T0 + BigInt(from + i) * SEC);

function segmentsOf(store: SeriesStore, id: string): number {
  const s = seriesKey(id);
  return store.read((v) => [...v.env.segments.getKeys({ start: Buffer.concat([s, Buffer.alloc(8)]), end: Buffer.concat([s, Buffer.alloc(8, 0xff)]), transaction: v.txn })].length);
}

function points(c: PointColumns | null): Array<[bigint, number, number]> {
  const out: Array<[bigint, number, number]> = [];
  if (c) for (let i = 0; i < c.count; i++) out.push([c.tsBase + BigInt(c.tsOffset[i]), c.f64![i], c.quality[i]]);
  return out;
}

/**
 * For every `from` around and inside the head and look-backs 0..3: the tail is the head's
 * suffix; a partial tail holds the points before `from` a window needs; a whole one is the head.
 */
function checkTails(t: Test, store: SeriesStore, id: string, first: number, last: number): void {
  const key = seriesKey(id);
  store.read((view) => {
    const head = points(readOpenColumns(view, key));
    let partial = 0;
    for (let s = first - 2; s <= last + 2; s++) {
      const from = T0 + BigInt(s) * SEC;
      for (let back = 0; back <= 3; back++) {
        const tail = readOpenTail(view, key, from, back);
        const got = points(tail.cols);
        const suffix = head.slice(head.length - got.length);
        if (JSON.stringify(got, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) !== JSON.stringify(suffix, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))) {
          t.fail(`from ${s} back ${back}: the tail is not the head's suffix`);
          return;
        }
        if (tail.whole) {
          if (got.length !== head.length) { t.fail(`from ${s} back ${back}: a whole tail of ${got.length} points, the head has ${head.length}`); return; }
        } else {
          partial++;
          const before = got.filter(([ts]) => ts < from).length;
          if (before < Math.max(1, back)) { t.fail(`from ${s} back ${back}: a partial tail with ${before} points before from`); return; }
        }
      }
    }
    t.pass(`every tail of ${head.length} open points is the head's suffix (${partial} partial)`);
    t.ok(partial > 0, 'some windows were served without decoding the whole head');
  });
}

t.test('one-point commits: the tail decodes only the newest segments and equals the head\'s end', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let i = 0; i < 200; i++) await store.write([f64Batch(id, [T0 + BigInt(i) * SEC], [i * 1.5], [i % 7 === 0 ? 64 : 192])], WHO);
  t.ok(segmentsOf(store, id) > 1, 'the head is in several segments');
  checkTails(t, store, id, 0, 199);
  // the newest point alone, and the one before it, come from the newest segments
  store.read((view) => {
    const tail = readOpenTail(view, seriesKey(id), T0 + 199n * SEC, 1);
    t.equal(tail.whole, false);
    t.ok((tail.cols?.count ?? 0) < 200, `${tail.cols?.count} points decoded of 200`);
  });
});

t.test('a head partly sealed: the sealed points of a segment are skipped and end the walk', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  let next = 0;
  for (const n of [37, 41, 1, 1, 29, 1, 3, 1]) {
    await store.write([f64Batch(id, secs(next, n), secs(next, n).map((_, i) => next + i))], WHO);
    next += n;
  }
  t.ok(store.headPoints(id) < next, 'some points were sealed');
  checkTails(t, store, id, 0, next - 1);
});

t.test('no head, an empty head, and a head sealed whole read as no points', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  t.same(store.read((v) => readOpenTail(v, seriesKey(id), T0, 1)), { cols: null, whole: true });
  await store.write([f64Batch(id, secs(0, 5), [1, 2, 3, 4, 5])], WHO);
  t.equal(store.read((v) => readOpenTail(v, seriesKey(id), T0 + 10n * SEC, 1)).cols?.count, 5);
  await store.sealHeads();
  t.same(store.read((v) => readOpenTail(v, seriesKey(id), T0 + 10n * SEC, 1)), { cols: null, whole: true });
});
