import t from 'tap';
import { readRaw, readRawAudit, readSnapshot, listChunks, readGaps, readFinalised } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const range = { startNs: T0 - 1000n * SEC, endNs: T0 + 100_000n * SEC };

t.test('every value type reads back exactly as written', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 64 } });
  const n = 300;
  const times = BigInt64Array.from({ length: n }, (_, i) => T0 + BigInt(i) * SEC + BigInt(i % 7) * 1_000_003n);
  const quality = Uint32Array.from({ length: n }, (_, i) => (i % 11 === 0 ? 0 : i % 13 === 0 ? 0xffffffff : 192));
  const cases = [
    { type: 'float64' as const, values: Float64Array.from({ length: n }, (_, i) => (i === 3 ? -0 : i === 4 ? 5e-324 : i === 5 ? 1.7976931348623157e308 : Math.sin(i) * 1e3)) },
    { type: 'int64' as const, values: BigInt64Array.from({ length: n }, (_, i) => (i === 0 ? -(2n ** 63n) : i === 1 ? 2n ** 63n - 1n : BigInt(i) * 1_000_000_007n)) },
    { type: 'boolean' as const, values: Uint8Array.from({ length: n }, (_, i) => (i >> 3) & 1) },
    { type: 'enum' as const, values: Int32Array.from({ length: n }, (_, i) => i % 5), enumSet: { id: newId(), ordinals: [0, 1, 2, 3, 4] } },
    { type: 'string' as const, values: Array.from({ length: n }, (_, i) => (i === 0 ? '' : i % 9 === 0 ? 'héllo ☃ 𝄞' : `B-${i >> 4}`)) },
  ];
  for (const c of cases) {
    const id = newId();
    await store.createSeries({ id, type: c.type, writableClass: 'collector', ...(c.type === 'enum' ? { enumSet: c.enumSet } : {}) });
    const r = await store.write([{ series: id, times, values: c.values, quality }], WHO);
    t.equal(r.accepted, n, `${c.type}: all accepted`);
    const page = store.read((v) => readRaw(v, id, { ...range, limit: 10_000 }));
    t.same([...page.ts], [...times], `${c.type}: times exact`);
    t.same([...page.quality], [...quality], `${c.type}: quality exact`);
    const col = { float64: page.f64, int64: page.i64, boolean: page.u8, enum: page.ord, string: page.str }[c.type]!;
    const got = Array.from(col as ArrayLike<unknown>).slice(0, n);
    const want = Array.from(c.values as ArrayLike<unknown>);
    t.ok(got.every((x, i) => Object.is(x, want[i])), `${c.type}: values exact (bits)`);
    t.ok(store.read((v) => listChunks(v, id, range)).filter((ch) => ch.sealed).length >= 3, `${c.type}: spans several sealed chunks`);
  }
});

t.test('late points merge across a chunk boundary and every point is read once', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 50 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const even = Array.from({ length: 200 }, (_, i) => T0 + BigInt(i * 2) * SEC);
  await store.write([f64Batch(id, even, even.map((_, i) => i * 2))], WHO);
  const chunksBefore = store.read((v) => listChunks(v, id, range));
  t.ok(chunksBefore.length >= 4);
  // odd seconds fill every hole, including the ones between two sealed chunks
  const odd = Array.from({ length: 199 }, (_, i) => T0 + BigInt(i * 2 + 1) * SEC);
  const r = await store.write([f64Batch(id, odd.slice().reverse(), odd.map((_, i) => i * 2 + 1).reverse())], WHO);
  t.equal(r.accepted, 199);
  const page = store.read((v) => readRaw(v, id, { ...range, limit: 1000 }));
  t.equal(page.count, 399);
  t.same([...page.f64!.subarray(0, 399)], Array.from({ length: 399 }, (_, i) => i));
  t.same([...page.ts], Array.from({ length: 399 }, (_, i) => T0 + BigInt(i) * SEC));
  const chunks = store.read((v) => listChunks(v, id, range));
  for (let i = 1; i < chunks.length; i++) t.ok(chunks[i].startNs > chunks[i - 1].endNs, 'chunks stay disjoint and ordered');
  t.ok(chunks.every((c) => c.count <= 50), 'chunks respect the point budget');
  // a point before the first chunk
  await store.write([f64Batch(id, [T0 - 10n * SEC], [-10])], WHO);
  t.equal(store.read((v) => readRaw(v, id, { ...range, limit: 1 })).f64![0], -10);
});

t.test('an identical point is a no-op and a different one supersedes into the audit', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 10 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const times = Array.from({ length: 25 }, (_, i) => T0 + BigInt(i) * SEC);
  await store.write([f64Batch(id, times, times.map((_, i) => i))], WHO);
  const same = await store.write([f64Batch(id, [times[3], times[22]], [3, 22])], WHO);
  t.match(same.batches[0], { accepted: 0, unchanged: 2, superseded: 0 });
  t.equal(store.read((v) => readRawAudit(v, id, { ...range, limit: 10 })).length, 0, 'no audit for identical points');
  const diff = await store.write([f64Batch(id, [times[3], times[22], times[23]], [-0, 22, 23], [192, 0, 192])], { principal: 'alice' });
  t.match(diff.batches[0], { accepted: 2, unchanged: 1, superseded: 2 });
  const audit = store.read((v) => readRawAudit(v, id, { ...range, limit: 10 }));
  t.same(audit.map((a) => [a.ts, a.value, a.quality, a.principal]), [[times[3], 3, 192, 'alice'], [times[22], 22, 192, 'alice']]);
  const page = store.read((v) => readRaw(v, id, { ...range, limit: 100 }));
  t.ok(Object.is(page.f64![3], -0), '-0 replaced 3 (bits differ from +0)');
  t.equal(page.quality[22], 0);
  // a repeated time inside one batch: the later point wins, the earlier one is audited
  const dup = await store.write([f64Batch(id, [times[5], times[5]], [50, 51])], { principal: 'bob' });
  t.equal(dup.batches[0].superseded, 2);
  t.equal(store.read((v) => readRaw(v, id, { ...range, limit: 100 })).f64![5], 51);
});

t.test('bad points are refused one by one with a reason and never dropped silently', async (t) => {
  const { store } = await tempStore(t);
  const f = newId(), e = newId(), s = newId(), i = newId();
  await store.createSeries({ id: f, type: 'float64', writableClass: 'collector' });
  await store.createSeries({ id: e, type: 'enum', writableClass: 'collector', enumSet: { id: newId(), ordinals: [1, 2] } });
  await store.createSeries({ id: s, type: 'string', writableClass: 'manual' });
  await store.createSeries({ id: i, type: 'int64', writableClass: 'manual' });
  const r = await store.write([
    { series: f, times: [T0, T0 + 1n, T0 + 2n, 2n ** 64n, T0 + 4n], values: [1, NaN, Infinity, 4, 'x'], quality: [192, 192, 192, 192, 192] },
    { series: f, times: [T0 + 10n, T0 + 11n], values: [1, 2], quality: [-1, 1.5] },
    { series: e, times: BigInt64Array.of(T0, T0 + 1n), values: Int32Array.of(1, 7), quality: Uint32Array.of(192, 192) },
    { series: s, times: [T0, T0 + 1n], values: ['ok', '\uD800'], quality: [192, 192] },
    { series: i, times: [T0], values: Float64Array.of(1), quality: [192] },
    { series: newId(), times: [T0], values: [1], quality: [192] },
  ], WHO);
  t.same(r.batches.map((b) => b.refusals.map((x) => `${x.index}:${x.reason}`)), [
    ['1:non-finite', '2:non-finite', '3:time-out-of-range', '4:wrong-type'],
    ['0:invalid-quality', '1:invalid-quality'],
    ['1:unknown-enum-ordinal'],
    ['1:invalid-string'],
    ['0:wrong-type'],
    ['0:unknown-series'],
  ]);
  t.equal(r.accepted, 3);
  t.equal(r.refused, 10);
  await t.rejects(store.write([{ series: f, times: [T0], values: [1, 2], quality: [192] }], WHO), { code: 'invalid-request' }, 'columns of different lengths reject the call');
});

t.test('concurrent writers share one group commit and all resolve durable', async (t) => {
  const { store } = await tempStore(t, { groupWindowMs: 5 });
  const ids = Array.from({ length: 20 }, newId);
  await Promise.all(ids.map((id) => store.createSeries({ id, type: 'float64', writableClass: 'collector' })));
  const results = await Promise.all(ids.map((id, k) => store.write([f64Batch(id, [T0 + BigInt(k)], [k])], WHO)));
  t.ok(results.every((r) => r.accepted === 1));
  for (const [k, id] of ids.entries()) t.same(store.read((v) => readSnapshot(v, id)), { ts: T0 + BigInt(k), value: k, quality: 192 });
});

t.test('gaps: declared ones and intervals longer than 3x the median cadence; finalised only moves forward', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const times = [...Array.from({ length: 50 }, (_, i) => T0 + BigInt(i) * SEC), ...Array.from({ length: 50 }, (_, i) => T0 + BigInt(100 + i) * SEC)];
  await store.write([f64Batch(id, times, times.map(() => 1))], WHO);
  await store.declareGap(id, { startNs: T0 + 200n * SEC, endNs: T0 + 300n * SEC, reason: 'collector restart' });
  const g = store.read((v) => readGaps(v, id, range));
  t.equal(g.cadenceNs, 1e9);
  t.same(g.detected, [{ startNs: T0 + 49n * SEC, endNs: T0 + 100n * SEC }]);
  t.same(g.declared, [{ startNs: T0 + 200n * SEC, endNs: T0 + 300n * SEC, reason: 'collector restart' }]);
  await store.setFinalised(id, T0 + 50n);
  await store.setFinalised(id, T0 + 10n);
  t.equal(store.read((v) => readFinalised(v, id)), T0 + 50n);
});

t.test('raw pages follow the cursor without repeating or skipping points', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 16 } });
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const times = Array.from({ length: 100 }, (_, i) => T0 + BigInt(i) * SEC);
  await store.write([f64Batch(id, times, times.map((_, i) => i))], WHO);
  const seen: number[] = [];
  let after: bigint | undefined;
  for (;;) {
    const p = store.read((v) => readRaw(v, id, { ...range, limit: 7, afterNs: after }));
    seen.push(...p.f64!.subarray(0, p.count));
    if (p.nextCursor === null) break;
    after = p.nextCursor;
  }
  t.same(seen, Array.from({ length: 100 }, (_, i) => i));
  await t.rejects(Promise.resolve().then(() => store.read((v) => readRaw(v, id, { ...range, limit: 0 }))), { code: 'invalid-request' });
  await t.rejects(Promise.resolve().then(() => store.read((v) => readRaw(v, newId(), { ...range, limit: 1 }))), { code: 'not-found' });
});
