// Series' last chunks sealed by a whole-head seal are packed several to an LMDB value: every
// read sees the same chunks as before, a pack goes when nothing refers to it any more, one
// less than half referenced is rewritten, and a reference whose pack is gone reads as a
// damaged chunk, never as wrong values.
import t from 'tap';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SeriesStore, listChunks, readRaw, renderSeries, type SeriesEnv } from '../../src/storage/series-store.js';
import { KeptMembers, keptMemberBytes, parsePackRef } from '../../src/storage/tail-packs.js';
import { repackCopy } from '../../src/storage/repack-copy.js';
import { chunkKey, seriesKey } from '../../src/storage/keys.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? 20261122);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const DAY = 86_400n * SEC;
const range = { startNs: T0 - 10n * DAY, endNs: T0 + 10n * DAY };

interface Census { packs: number; refs: number; problems: string[] }

/** Every reference resolves, every pack's tally counts exactly its references, and no pack is unreferenced. */
function census(env: SeriesEnv): Census {
  const refs = new Map<number, { n: number; bytes: number }>();
  const problems: string[] = [];
  let total = 0;
  for (const { value } of env.chunks.getRange({})) {
    const r = parsePackRef(value);
    if (r === null) continue;
    total++;
    const e = refs.get(r.pack) ?? { n: 0, bytes: 0 };
    e.n++; e.bytes += r.length;
    refs.set(r.pack, e);
    const pack = env.tailPacks.get(Buffer.from([r.pack >>> 24, (r.pack >>> 16) & 255, (r.pack >>> 8) & 255, r.pack & 255, 0]));
    if (pack === undefined) problems.push(`pack ${r.pack} missing`);
    else if (r.offset + r.length > pack.length) problems.push(`reference past pack ${r.pack}`);
  }
  let packs = 0;
  for (const { key, value } of env.tailPacks.getRange({})) {
    const id = key.readUInt32BE(0);
    if (id === 0) continue; // the id counter
    if (key[4] === 0) { packs++; continue; }
    const live = value.readUInt32LE(0), liveBytes = value.readUInt32LE(4), totalBytes = value.readUInt32LE(8);
    const seen = refs.get(id);
    if (seen === undefined) problems.push(`pack ${id} has no reference`);
    else if (seen.n !== live || seen.bytes !== liveBytes) problems.push(`pack ${id}: tally ${live}/${liveBytes}, references ${seen.n}/${seen.bytes}`);
    if (liveBytes * 2 < totalBytes) problems.push(`pack ${id} is less than half referenced`);
  }
  return { packs, refs: total, problems };
}

/** Points [from, to) of a 1 s series with ms jitter and 0.01-resolution values. */
function wander(id: string, from: number, to: number, k = 0): ReturnType<typeof f64Batch> {
  const times: bigint[] = [], values: number[] = [];
  for (let j = from; j < to; j++) {
    times.push(T0 + BigInt(j) * SEC + BigInt((j * 7 + k) % 8) * 1_000_000n);
    values.push(Math.round((50 + 10 * Math.sin(j / 50 + k) + ((j * 13) % 17) / 100) * 100) / 100);
  }
  return f64Batch(id, times, values);
}

function readAll(store: SeriesStore, id: string): { ts: bigint[]; v: number[] } {
  const p = store.read((v) => readRaw(v, id, { ...range, limit: 1_000_000 }));
  return { ts: [...p.ts], v: [...p.f64!.subarray(0, p.count)] };
}

/** A store whose n series hold `points` points each, every head sealed whole in one request. */
async function sealedFleet(t: Parameters<typeof tempStore>[0], n: number, points: number): Promise<{ store: SeriesStore; ids: string[] }> {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const ids = await fleet(store, n);
  await store.write(ids.map((id, k) => wander(id, 0, points, k)), WHO);
  await store.sealHeads(0);
  return { store, ids };
}

async function fleet(store: SeriesStore, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let k = 0; k < n; k++) {
    const id = newId();
    ids.push(id);
    await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  }
  return ids;
}

t.test('a seal of whole heads packs their short last chunks; reads, chunk listings and render are the same as before', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const ids = await fleet(store, 20);
  await store.write(ids.map((id, k) => wander(id, 0, 130 + k, k)), WHO);
  // the drawing, without the diagnostics of how it was read (chunks vs head)
  const render = (id: string) => {
    const r: Record<string, unknown> = { ...store.read((v) => renderSeries(v, id, { startNs: T0, endNs: T0 + 200n * SEC, width: 40, mode: 'minmax-band' })) };
    delete r.chunksDecoded; delete r.chunksFromHeaders; delete r.groupsDecoded;
    return r;
  };
  const before = ids.map(render);
  await store.sealHeads(0);
  const c = census(store.env);
  t.same(c.problems, []);
  t.equal(c.refs, 20, 'every series\' last chunk is in a pack');
  t.equal(c.packs, 1, 'small tails share one pack');
  for (const [k, id] of ids.entries()) {
    const want = wander(id, 0, 130 + k, k);
    t.same(readAll(store, id), { ts: [...want.times], v: [...want.values as Float64Array] }, `series ${k} exact`);
    const chunks = store.read((v) => listChunks(v, id, range));
    t.same(chunks.map((ch) => ch.count), [100, 30 + k]);
    t.ok(chunks.every((ch) => ch.sealed && ch.bytes > 13), 'listings give the chunk\'s own size, not the reference\'s');
  }
  t.same(ids.map(render), before, 'render from packed tails equals render from the heads');
});

t.test('one tail sealed alone stays a plain chunk', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 100 } });
  const [id] = await fleet(store, 1);
  await store.write([wander(id, 0, 130)], WHO);
  await store.sealHeads(0);
  t.same(census(store.env), { packs: 0, refs: 0, problems: [] });
});

t.test('series that resume take their tails back, and the packs they leave go away', async (t) => {
  const { store, ids } = await sealedFleet(t, 12, 150);
  t.equal(census(store.env).refs, 12);
  for (let round = 1; round <= 3; round++) {
    // 50 more points fill each head (50 absorbed + 50 new = one chunk): the tail is taken back
    await store.write(ids.map((id, k) => wander(id, 100 * round + 50, 100 * round + 150, k)), WHO);
    await store.sealHeads(0);
    const c = census(store.env);
    t.same(c.problems, [], `round ${round}: consistent`);
    t.ok(c.packs <= 1, `round ${round}: ${c.packs} pack(s) left`);
  }
  for (const [k, id] of ids.entries()) {
    const want = wander(id, 0, 450, k);
    t.same(readAll(store, id), { ts: [...want.times], v: [...want.values as Float64Array] }, `series ${k} exact`);
  }
});

t.test('late points merging into packed tails: a pack less than half referenced is rewritten with the rest', async (t) => {
  const { store, ids } = await sealedFleet(t, 10, 140);
  const first = census(store.env);
  t.equal(first.packs, 1);
  const packOf = (id: string) => parsePackRef(store.env.chunks.get(chunkKey(seriesKey(id), wander(id, 100, 101, ids.indexOf(id)).times[0]))!);
  const before = packOf(ids[9])!.pack;
  for (let k = 0; k < 6; k++) {
    const late = wander(ids[k], 120, 121, k);
    await store.write([f64Batch(ids[k], [late.times[0] + 1n], [-1])], WHO);
    const c = census(store.env);
    t.same(c.problems, [], `after merge ${k + 1}`);
  }
  t.equal(census(store.env).refs, 4, 'four tails still packed');
  t.not(packOf(ids[9])!.pack, before, 'they moved to a new pack');
  for (let k = 0; k < 10; k++) {
    const want = wander(ids[k], 0, 140, k);
    const ts = [...want.times], v = [...want.values as Float64Array];
    if (k < 6) { const at = 121; ts.splice(at, 0, want.times[120] + 1n); v.splice(at, 0, -1); }
    t.same(readAll(store, ids[k]), { ts, v }, `series ${k} exact`);
  }
});

t.test('a pack whose directory fails its checksum is never rewritten: its tails still read, only space is lost', async (t) => {
  const { store, ids } = await sealedFleet(t, 6, 140);
  const packKey = Buffer.from([0, 0, 0, 1, 0]);
  const pack = Buffer.from(store.env.tailPacks.get(packKey)!);
  pack[3] ^= 0xff; // inside the first member's uuid: the directory's CRC no longer matches
  store.env.root.transactionSync(() => { store.env.tailPacks.putSync(packKey, pack); });
  for (let k = 0; k < 4; k++) {
    const late = wander(ids[k], 120, 121, k);
    await store.write([f64Batch(ids[k], [late.times[0] + 1n], [-1])], WHO);
  }
  t.equal(census(store.env).refs, 2, 'two tails still refer to the pack');
  t.ok(Buffer.from(store.env.tailPacks.get(packKey)!).equals(pack), 'the pack was left as it is, though under half referenced');
  for (const k of [4, 5]) {
    const want = wander(ids[k], 0, 140, k);
    t.same(readAll(store, ids[k]), { ts: [...want.times], v: [...want.values as Float64Array] }, `series ${k} exact`);
  }
});

t.test('retention that drops packed tails drops their pack', async (t) => {
  const { store, ids } = await sealedFleet(t, 5, 130);
  t.equal(census(store.env).packs, 1);
  for (const id of ids) await store.setLifecyclePolicy(id, { schema: 'service-lifecycle-policy/v1', raw: { keep_days: 1, then: 'delete' }, rollups: { keep: 'forever' }, annotations: { keep: '30d' } });
  const report = await store.enforceLifecycle(T0 + 3n * DAY);
  t.equal(report.chunksDropped, 10);
  t.same(census(store.env), { packs: 0, refs: 0, problems: [] });
  t.equal(readAll(store, ids[0]).ts.length, 0);
});

t.test('a reference whose pack is gone reads as a damaged chunk; its series refuses new points as for any damaged last chunk', async (t) => {
  const { store, ids } = await sealedFleet(t, 3, 130);
  const packed = census(store.env).refs;
  t.equal(packed, 3);
  store.env.root.transactionSync(() => {
    for (const { key } of store.env.tailPacks.getRange({})) store.env.tailPacks.removeSync(key);
  });
  t.throws(() => readAll(store, ids[0]), { code: 'chunk-corrupt', message: /packed-tail reference/ });
  t.same(store.read((v) => readRaw(v, ids[0], { startNs: T0, endNs: T0 + 100n * SEC, limit: 1000 })).count, 100, 'the chunks before it still read');
  // the head of a series whose last chunk is damaged is found from that chunk: the batch is refused (damaged-chunk-writes.test.ts)
  const r = await store.write([wander(ids[0], 130, 140), f64Batch(newId(), [T0], [1])], WHO);
  t.match(r.batches[0], { accepted: 0, refused: 10 });
  t.equal(r.batches[0].refusals[0].reason, 'chunk-corrupt');
});

t.test('reads keep their copies of packed tails; tails that left their pack, and members of a rewritten pack, read as they are now', async (t) => {
  const { store, ids } = await sealedFleet(t, 6, 130);
  const packsBefore = [...store.env.tailPacks.getRange({})].filter(({ key }) => key.readUInt32BE(0) !== 0 && key[4] === 0).map(({ key }) => key.readUInt32BE(0));
  t.same(census(store.env), { packs: 1, refs: 6, problems: [] });
  t.equal(keptMemberBytes(store.env), 0);
  const before = ids.map((id) => readAll(store, id));
  const kept = keptMemberBytes(store.env);
  t.ok(kept > 0, `a read keeps the tails it copied (${kept} bytes)`);
  t.same(ids.map((id) => readAll(store, id)), before, 'the second read, from the kept copies, is the same');
  t.equal(keptMemberBytes(store.env), kept, 'and copies nothing more');
  // a late point into four of the six tails: each is merged and rewritten as a chunk of its
  // own, leaving the pack under half referenced, so the two left are rewritten into a new pack
  const late = T0 + 125n * SEC + 1n;
  for (let k = 0; k < 4; k++) await store.write([f64Batch(ids[k], [late], [-1])], WHO);
  const after = census(store.env);
  t.same(after, { packs: 1, refs: 2, problems: [] });
  const packsAfter = [...store.env.tailPacks.getRange({})].filter(({ key }) => key.readUInt32BE(0) !== 0 && key[4] === 0).map(({ key }) => key.readUInt32BE(0));
  t.not(packsAfter[0], packsBefore[0], 'the pack was rewritten under a new id');
  for (let k = 0; k < 6; k++) {
    const got = readAll(store, ids[k]);
    if (k < 4) {
      t.equal(got.ts.length, before[k].ts.length + 1, `series ${k}: one point more`);
      t.equal(got.v[got.ts.indexOf(late)], -1, `series ${k}: the late point, not the kept copy of its old tail`);
    } else {
      t.same(got, before[k], `series ${k}: the same points from the rewritten pack`);
    }
  }
});

t.test('kept copies stay within their byte bound, the least recently read going first', async (t) => {
  const m = new KeptMembers(100);
  const b = (n: number, fill: number) => Buffer.alloc(n, fill);
  m.put(1, b(40, 1));
  m.put(2, b(40, 2));
  t.equal(m.get(1, 40)?.[0], 1, 'read: now the most recent');
  m.put(3, b(40, 3));
  t.equal(m.size, 80);
  t.equal(m.get(2, 40), undefined, '2 went first: least recently read');
  t.equal(m.get(1, 40)?.[0], 1);
  t.equal(m.get(3, 40)?.[0], 3);
  t.equal(m.get(3, 41), undefined, 'a length that differs is not a hit');
  m.put(4, b(101, 4));
  t.equal(m.get(4, 101), undefined, 'a copy over the whole bound is not kept');
  t.equal(m.size, 80);
  m.put(3, b(60, 5));
  t.equal(m.size, 100, 'a key put again replaces its copy');
  t.equal(m.get(3, 60)?.[0], 5);
  t.equal(m.get(1, 40)?.[0], 1);
  m.put(5, b(30, 6));
  t.equal(m.size, 70, 'room for 5 made by the least recently read (3)');
  t.equal(m.get(3, 60), undefined);
});

t.test('repackCopy carries the packs: a store opened on the copy reads the same', async (t) => {
  const { store, ids } = await sealedFleet(t, 6, 170);
  const dir = await mkdtemp(join(tmpdir(), 'tail-pack-copy-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await repackCopy(store.env, join(dir, 'series'));
  const copy = SeriesStore.open(join(dir, 'series'));
  t.teardown(() => copy.close());
  t.equal(census(copy.env).refs, 6);
  for (const id of ids) t.same(readAll(copy, id), readAll(store, id));
});

/** Throws unless the series reads back exactly the model's points. */
function expectModel(store: SeriesStore, id: string, model: Map<bigint, number>, what: string): void {
  const want = [...model.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const got = readAll(store, id);
  if (got.ts.length !== want.length || want.some(([ts, v], i) => got.ts[i] !== ts || got.v[i] !== v)) throw new Error(`${what} differs`);
}

t.test('property: any mix of appends, late points and whole-head seals reads back as written, with packs consistent', async (t) => {
  let runs = 0;
  await fc.assert(fc.asyncProperty(
    fc.array(fc.oneof(
      fc.record({ op: fc.constant('append' as const), series: fc.nat(3), n: fc.integer({ min: 1, max: 45 }) }),
      fc.record({ op: fc.constant('late' as const), series: fc.nat(3), at: fc.nat(10_000), value: fc.integer({ min: -500, max: 500 }) }),
      fc.record({ op: fc.constant('seal' as const) }),
    ), { minLength: 1, maxLength: 25 }),
    async (ops) => {
      runs++;
      const dir = await mkdtemp(join(tmpdir(), 'tail-pack-prop-'));
      const store = SeriesStore.open(join(dir, 'series'), { seal: { chunkPoints: 20 } });
      try {
        const ids = await fleet(store, 4);
        const model = ids.map(() => new Map<bigint, number>());
        const next = ids.map(() => 0);
        for (const o of ops) {
          if (o.op === 'seal') { await store.sealHeads(0); continue; }
          const id = ids[o.series], m = model[o.series];
          if (o.op === 'append') {
            const b = wander(id, next[o.series], next[o.series] + o.n, o.series);
            next[o.series] += o.n;
            b.times.forEach((ts, i) => m.set(ts, (b.values as Float64Array)[i]));
            await store.write([b], WHO);
          } else {
            if (next[o.series] === 0) continue;
            const ts = T0 + BigInt(o.at % next[o.series]) * SEC + 500_000n;
            m.set(ts, o.value / 10);
            await store.write([f64Batch(id, [ts], [o.value / 10])], WHO);
          }
          // a read after every step: the kept copies of packed tails (tail-packs.ts) live
          // across the steps that take tails out of packs and rewrite packs
          expectModel(store, id, m, `series ${o.series} after a step`);
        }
        const c = census(store.env);
        if (c.problems.length > 0) throw new Error(c.problems.join('; '));
        for (const [k, id] of ids.entries()) expectModel(store, id, model[k], `series ${k}`);
      } finally {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      }
    },
  ), { seed: SEED, numRuns: 40 });
  t.equal(runs, 40, 'every generated run checked');
});
