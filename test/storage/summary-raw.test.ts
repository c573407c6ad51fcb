// The summary's one-walk raw pass (summary-raw.ts) equals the edge lookups and the scan it
// replaces: the point before the piece, every point inside it (values, and quality by
// class), the point after it. Over chunks that decode only their groups (all good, decimal
// floats and int64), chunks decoded whole (mixed quality, raw floats), and the open head.
import t from 'tap';
import fc from 'fast-check';
import { readRaw } from '../../src/storage/series-store.js';
import { pointAtOrAfter, pointBefore } from '../../src/storage/range-scan.js';
import { walkPiece } from '../../src/storage/summary-raw.js';
import { seriesKey } from '../../src/storage/keys.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';
import { tempStore, newId, WHO, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const klass = (q: number) => (q >= 192 ? 2 : q >= 64 ? 1 : 0);

t.test('one walk equals pointBefore + the scan + pointAtOrAfter', async (t) => {
  const { store } = await tempStore(t);
  const kinds: Array<{ id: string; type: ValueType; what: string }> = [];
  const N = 6000;
  const add = async (type: ValueType, what: string, value: (i: number) => number, quality: (i: number) => number, sealedUpTo: number) => {
    const id = newId();
    await store.createSeries({ id, type, writableClass: 'collector' });
    const times = BigInt64Array.from({ length: N }, (_, i) => T0 + BigInt(i) * SEC + BigInt((i * 7919) % 1000) * 1_000_000n);
    const q = Uint32Array.from({ length: N }, (_, i) => quality(i));
    const values = type === 'int64' ? BigInt64Array.from({ length: N }, (_, i) => BigInt(value(i))) : Float64Array.from({ length: N }, (_, i) => value(i));
    await store.write([{ series: id, times: times.subarray(0, sealedUpTo), values: values.subarray(0, sealedUpTo) as Float64Array, quality: q.subarray(0, sealedUpTo) }], WHO);
    await store.sealHeads(0);
    // the rest stays in the open head
    if (sealedUpTo < N) await store.write([{ series: id, times: times.subarray(sealedUpTo), values: values.subarray(sealedUpTo) as Float64Array, quality: q.subarray(sealedUpTo) }], WHO);
    kinds.push({ id, type, what });
  };
  await add('float64', 'decimal, all good', (i) => Math.round(Math.sin(i / 50) * 10_000) / 100, () => 192, N);
  await add('float64', 'decimal, all good, head', (i) => Math.round(Math.cos(i / 70) * 1000) / 10, () => 192, 4500);
  await add('int64', 'int64, all good', (i) => Math.round(Math.sin(i / 30) * 1e6), () => 192, N);
  await add('float64', 'decimal, mixed quality', (i) => Math.round(Math.sin(i / 50) * 10_000) / 100, (i) => (i % 400 < 10 ? 0 : i % 400 < 20 ? 100 : 192), N);
  await add('float64', 'raw floats', (i) => Math.sin(i / 50) * Math.PI, () => 192, 5000);
  const span = BigInt(N) * SEC;
  await fc.assert(fc.asyncProperty(fc.nat({ max: kinds.length - 1 }), fc.bigInt(-200n * SEC, span + 200n * SEC), fc.bigInt(1n, span / 2n), fc.boolean(), fc.boolean(), async (k, a, len, wantBefore, wantAfter) => {
    const { id, type, what } = kinds[k];
    const from = T0 + a, to = from + len;
    const got = { before: null as null | [bigint, number, number], points: [] as Array<[bigint, number, number]> };
    const after = store.read((v) => walkPiece(v, seriesKey(id), type, from, to, wantBefore, wantAfter, {
      before: (ts, x, q) => { if (got.before || got.points.length) throw new Error('before after points'); got.before = [ts, x, klass(q)]; },
      run: (base, rel, x, q, n) => { for (let i = 0; i < n; i++) got.points.push([base + BigInt(rel[i]), x[i], klass(q === null ? 192 : q[i])]); },
    }));
    const want = store.read((v) => {
      const b = wantBefore ? pointBefore(v, seriesKey(id), from) : null;
      const r = readRaw(v, id, { startNs: from, endNs: to, limit: 1_000_000 });
      const num = (i: number) => (r.f64 ? r.f64[i] : Number(r.i64![i]));
      return { before: b && [b.ts, b.v, klass(b.quality)], points: Array.from({ length: r.count }, (_, i) => [r.ts[i], num(i), klass(r.quality[i])]), after: wantAfter ? pointAtOrAfter(v, seriesKey(id), to) : null };
    });
    const same = (x: unknown, y: unknown) => JSON.stringify(x, (_, v) => (typeof v === 'bigint' ? String(v) : v)) === JSON.stringify(y, (_, v) => (typeof v === 'bigint' ? String(v) : v));
    if (!same(got.before, want.before)) throw new Error(`${what}: before ${JSON.stringify(got.before?.map(String))} != ${JSON.stringify(want.before?.map(String))}`);
    if (!same(got.points, want.points)) throw new Error(`${what}: ${got.points.length} points != ${want.points.length}`);
    const wa = want.after && [want.after.ts, want.after.v, klass(want.after.quality)], ga = after && [after.ts, after.v, klass(after.quality)];
    if (!same(ga, wa)) throw new Error(`${what}: after ${JSON.stringify(ga?.map(String))} != ${JSON.stringify(wa?.map(String))}`);
  }), { seed: SEED, numRuns: 300 });
  t.pass('300 random pieces');
});
