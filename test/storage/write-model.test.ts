import t from 'tap';
import fc from 'fast-check';
import { readRaw, readRawAudit, listChunks } from '../../src/storage/series-store.js';
import { atLeast, gatherInt64, int64ToNumbers, offsetsFrom, EXACT_SPAN } from '../../src/storage/int64-words.js';
import { tempStore, newId, WHO, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? 20261122);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });

t.test('int64 words: offsets, gathers and nearest doubles equal the BigInt arithmetic', async (t) => {
  fc.assert(fc.property(fc.array(int64, { minLength: 1, maxLength: 40 }), int64, (xs, base) => {
    const a = BigInt64Array.from(xs);
    const out = new Float64Array(xs.length);
    const exact = xs.every((x) => x - base < BigInt(EXACT_SPAN) && x - base > -BigInt(EXACT_SPAN));
    const ok = offsetsFrom(a, 0, a.length, base, out, 0);
    if (exact !== ok) return false;
    if (ok && !xs.every((x, i) => out[i] === Number(x - base))) return false;
    const nums = new Float64Array(xs.length);
    int64ToNumbers(a, a.length, nums);
    if (!xs.every((x, i) => nums[i] === Number(x))) return false;
    const keep = Int32Array.from(xs.map((_, i) => i).filter((i) => i % 2 === 0));
    const dst = new BigInt64Array(keep.length);
    gatherInt64(a, keep, keep.length, dst);
    return [...keep].every((i, j) => dst[j] === xs[i]);
  }), { seed: SEED, numRuns: 500 });
  // near one base: what the write path sees (times within a chunk span)
  fc.assert(fc.property(int64, fc.array(fc.bigInt({ min: -(2n ** 51n), max: 2n ** 51n }), { minLength: 1, maxLength: 40 }), (base, ds) => {
    const xs = ds.map((d) => BigInt.asIntN(64, base + d));
    const out = new Float64Array(xs.length);
    if (!offsetsFrom(BigInt64Array.from(xs), 0, xs.length, base, out, 0)) return xs.some((x) => x - base >= BigInt(EXACT_SPAN) || x - base <= -BigInt(EXACT_SPAN));
    return xs.every((x, i) => out[i] === Number(x - base));
  }), { seed: SEED, numRuns: 500 });
  t.equal(atLeast(new Float64Array(4), 3).length, 4, 'a large enough scratch is kept');
  t.ok(atLeast(new Float64Array(4), 9).length >= 9, 'a short scratch grows');
});

type Op = { kind: 'append' | 'late' | 'overlap'; n: number; seed: number; dup: boolean };

const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom('append', 'append', 'append', 'late', 'overlap'),
  n: fc.integer({ min: 1, max: 90 }),
  seed: fc.integer({ min: 0, max: 1_000_000 }),
  dup: fc.boolean(),
});

t.test('any sequence of appends, late points, overlaps and repeats reads back as the last value written at each time', async (t) => {
  let runs = 0;
  await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 14 }), fc.integer({ min: 8, max: 120 }), fc.boolean(), async (ops, chunkPoints, tinyCache) => {
    const { store } = await tempStore({ teardown: (fn) => { cleanups.push(fn); } }, { seal: { chunkPoints }, groupWindowMs: 0, ...(tinyCache ? { headCachePoints: 1 } : {}) });
    const id = newId();
    await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
    const model = new Map<bigint, number>();
    let end = 0, supersededExpected = 0;
    for (const op of ops) {
      // times in whole seconds; values depend on the op so that repeats may differ or not
      const secs: number[] = [];
      if (op.kind === 'append') for (let i = 0; i < op.n; i++) secs.push(end + 1 + i * (1 + (op.seed % 3)));
      else if (op.kind === 'late') for (let i = 0; i < op.n; i++) secs.push((op.seed + i * 7) % Math.max(1, end));
      else for (let i = 0; i < op.n; i++) secs.push(Math.max(0, end - op.n) + i * 2);
      if (op.dup) secs.push(...secs.slice(0, 3));
      const ts = secs.map((s) => T0 + BigInt(s) * SEC);
      const vs = secs.map((s, i) => (op.dup && i >= op.n ? -s : (op.seed % 2 === 0 ? s : s + 0.5)));
      // expected: in-batch later wins; every replaced different value is one audit entry
      const batchLast = new Map<bigint, number>();
      ts.forEach((x, i) => { const prev = batchLast.get(x); if (prev !== undefined && !Object.is(prev, vs[i])) supersededExpected++; batchLast.set(x, vs[i]); });
      for (const [x, v] of batchLast) { const old = model.get(x); if (old !== undefined && !Object.is(old, v)) supersededExpected++; model.set(x, v); }
      await store.write([{ series: id, times: BigInt64Array.from(ts), values: Float64Array.from(vs), quality: new Uint32Array(ts.length).fill(192) }], WHO);
      end = Math.max(end, ...secs);
    }
    const all = { startNs: T0 - SEC, endNs: T0 + BigInt(end + 10) * SEC };
    const page = store.read((v) => readRaw(v, id, { ...all, limit: 100_000 }));
    const want = [...model.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
    const same = page.count === want.length && want.every(([x, v], i) => page.ts[i] === x && Object.is(page.f64![i], v));
    const audits = store.read((v) => readRawAudit(v, id, { ...all, limit: 100_000 })).length;
    const chunks = store.read((v) => listChunks(v, id, all));
    const disjoint = chunks.every((c, i) => i === 0 || c.startNs > chunks[i - 1].endNs) && chunks.filter((c) => c.sealed).every((c) => c.count <= chunkPoints);
    while (cleanups.length) await cleanups.pop()!();
    runs++;
    return same && audits === supersededExpected && disjoint;
  }), { seed: SEED, numRuns: 40 });
  t.equal(runs >= 40, true, `${runs} runs`);
});

const cleanups: Array<() => unknown> = [];
