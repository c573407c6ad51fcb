// The slabs a read worker serialises bodies into (body-slabs.ts), driven directly: which
// slab a task gets, and what size a new one starts at.
import t from 'tap';
import { BodySlabs, releaseSlab, SlabDirectory } from '../../src/workers/body-slabs.js';

const MiB = 2 ** 20;

t.test('when every kept slab is lent, the next body starts in a slab the size of the last body, not one to be regrown', async (t) => {
  const slabs = new BodySlabs();
  const lent = [];
  for (let k = 0; k < 3; k++) {
    const s = slabs.acquire();
    const big = slabs.grow(s, 0, 8 * MiB); // the page outgrew its first slab, as a 1M-point page does
    slabs.lend(big, 8 * MiB);
    lent.push(big);
  }
  const next = slabs.acquire();
  t.ok(next.free, 'a free slab');
  t.ok(!lent.includes(next), 'none of the lent ones');
  t.ok(next.body.byteLength >= 8 * MiB, `room for a body like the last (${next.body.byteLength} bytes)`);
});

t.test('a free slab at least the size of the last body is reused; a smaller one is passed over', async (t) => {
  const slabs = new BodySlabs();
  const small = slabs.acquire(); // 1 MiB
  slabs.lend(small, 512 * 1024);
  releaseSlab(small.sab);
  t.equal(slabs.acquire(), small, 'the body fits what the last one needed: the same slab');

  const big = slabs.grow(small, 0, 6 * MiB);
  slabs.lend(big, 6 * MiB);
  // `small` is free but far below the last body: a 6 MiB body would regrow it
  const next = slabs.acquire();
  t.not(next, small, 'not the small free slab');
  t.ok(next.body.byteLength >= 6 * MiB, 'a slab sized for the last body');
  releaseSlab(big.sab);
  t.ok([big, next].includes(slabs.acquire()), 'a kept slab that large is reused once free');
});

t.test('small bodies after large ones still reuse the large free slab', async (t) => {
  const slabs = new BodySlabs();
  const s = slabs.grow(slabs.acquire(), 0, 20 * MiB);
  slabs.lend(s, 20 * MiB);
  releaseSlab(s.sab);
  const a = slabs.acquire();
  t.equal(a, s, 'the large free slab');
  slabs.lend(a, 300 * 1024);
  releaseSlab(a.sab);
  t.equal(slabs.acquire(), s, 'still the same slab: nothing new allocated');
  t.ok(slabs.size <= 3, 'at most three kept');
});

t.test('a kept slab crosses to the HTTP thread once, then by id; slabs the worker stops keeping are forgotten', async (t) => {
  const slabs = new BodySlabs(7 * 2 ** 20);
  const directory = new SlabDirectory();
  const a = slabs.acquire();
  slabs.lend(a, 100);
  const first = slabs.handOff(a);
  t.equal(first.body, a.sab, 'the first hand-off carries the slab');
  t.ok(first.keep, 'kept by the worker');
  t.equal(first.slab, 7 * 2 ** 20, 'ids start at the worker base');
  t.equal(directory.resolve(first), a.sab);
  releaseSlab(a.sab);
  t.equal(slabs.acquire(), a, 'the same slab again');
  slabs.lend(a, 100);
  const second = slabs.handOff(a);
  t.equal(second.body, null, 'the second carries only the id');
  t.equal(directory.resolve(second), a.sab, 'the directory gives the slab it holds');
  t.equal(directory.size, 1);

  // three more, larger, while `a` is free: the pool (3 kept) replaces its smallest free slab
  const lent = [];
  for (let k = 0; k < 3; k++) {
    releaseSlab(a.sab);
    const s = slabs.grow(slabs.acquire(), 0, (k + 2) * MiB);
    slabs.lend(s, (k + 2) * MiB);
    const h = slabs.handOff(s);
    directory.resolve(h);
    lent.push(h);
  }
  const retired = lent.flatMap((h) => h.retired);
  t.ok(retired.includes(a.id), `the replaced slab is reported retired (${retired})`);
  t.ok(directory.size <= 3, `the directory holds what the worker keeps (${directory.size})`);
  t.throws(() => directory.resolve({ slab: a.id, body: null, keep: true, retired: [] }), /never sent/, 'a retired id is no longer resolved');
});

t.test('a slab used once (larger than the worker keeps) is carried every time and never held', async (t) => {
  const slabs = new BodySlabs();
  const directory = new SlabDirectory();
  const huge = slabs.grow(slabs.acquire(), 0, 100 * MiB);
  slabs.lend(huge, 100 * MiB);
  const h = slabs.handOff(huge);
  t.equal(h.body, huge.sab);
  t.notOk(h.keep);
  t.equal(directory.resolve(h), huge.sab);
  t.equal(directory.size, 0, 'not held');
});
