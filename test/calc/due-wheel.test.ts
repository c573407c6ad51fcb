// The engine's due wheel against a plain model (a map of due times), under random
// schedules, reschedules, removals and takes on a test clock: an item is never handed out
// before its due time, is handed out within one slot (10 ms) after it, exactly once per
// scheduling, and ready items leave in the order they became ready.
import t from 'tap';
import fc from 'fast-check';
import { DueWheel, type Scheduled } from '../../src/calc/engine/due-wheel.js';

const SEED = 20261128;
t.comment(`fast-check seed ${SEED}`);

interface Item extends Scheduled { id: number }

type Op = { kind: 'schedule'; id: number; delay: number } | { kind: 'remove'; id: number } | { kind: 'tick'; ms: number } | { kind: 'take'; max: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('schedule' as const), id: fc.integer({ min: 0, max: 19 }), delay: fc.oneof(fc.constant(0), fc.integer({ min: -5, max: 60 })) }),
  fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 19 }) }),
  fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 25 }) }),
  fc.record({ kind: fc.constant('take' as const), max: fc.integer({ min: 1, max: 30 }) }),
);

t.test('never early, at most one slot late, each scheduling handed out once', async (t) => {
  fc.assert(fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
    let now = 1_000_000;
    const wheel = new DueWheel<Item>(() => undefined, () => now);
    const items = Array.from({ length: 20 }, (_, id): Item => ({ id, wheelSlot: 0 }));
    const due = new Map<number, number>();
    try {
      for (const o of ops) {
        if (o.kind === 'schedule') { wheel.schedule(items[o.id], now + o.delay); if (!(due.has(o.id) && due.get(o.id)! <= now && o.delay <= 0)) due.set(o.id, now + o.delay); }
        else if (o.kind === 'remove') { wheel.remove(items[o.id]); due.delete(o.id); }
        else if (o.kind === 'tick') now += o.ms;
        else {
          const got = wheel.take(o.max);
          for (const it of got) {
            const d = due.get(it.id);
            if (d === undefined) return false; // handed out without being scheduled (or twice)
            if (d > now) return false; // early
            due.delete(it.id);
          }
          // Nothing overdue by more than a slot is left behind when there was room.
          if (got.length < o.max) for (const d of due.values()) if (d <= now - 10) return false;
        }
      }
      return true;
    } finally {
      wheel.close();
    }
  }), { seed: SEED, numRuns: 300 });
});

t.test('ready items leave oldest first; a reschedule into the future takes one back out', async (t) => {
  let now = 500;
  const wheel = new DueWheel<Item>(() => undefined, () => now);
  const [a, b, c] = [0, 1, 2].map((id): Item => ({ id, wheelSlot: 0 }));
  wheel.schedule(b, now);
  wheel.schedule(a, now);
  wheel.schedule(c, now + 30);
  wheel.schedule(b, now); // already ready: keeps its place
  t.same(wheel.take(10).map((x) => x.id), [1, 0]);
  wheel.schedule(a, now);
  wheel.schedule(a, now + 50); // debounce pushed back
  t.same(wheel.take(10), [], 'nothing due yet');
  now += 40;
  t.same(wheel.take(10).map((x) => x.id), [2]);
  now += 20;
  t.same(wheel.take(10).map((x) => x.id), [0]);
  wheel.close();
});

t.test('the timer calls back when a debounce ends', async (t) => {
  let called = 0;
  const wheel = new DueWheel<Item>(() => { called++; });
  const x: Item = { id: 0, wheelSlot: 0 };
  wheel.schedule(x, Date.now() + 30);
  await new Promise((r) => setTimeout(r, 80));
  t.equal(called, 1);
  t.same(wheel.take(5), [x]);
  wheel.close();
});
