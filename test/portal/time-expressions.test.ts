// The portal's time expressions (portal/src/time.ts), resolved in the page: `*` and `now`,
// `t` and `y` with offsets, bare offsets, ns, ISO 8601 instants; anything else is an error
// that names the text, never a default. Properties with a fixed, printed seed.
import t from 'tap';
import fc from 'fast-check';
import { resolveTime, resolveWindow, TimeExpressionError } from '../../portal/src/time.js';

const SEED = 30_7;
const NOW = Date.UTC(2026, 10, 27, 21, 50, 12, 345);
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
type Unit = keyof typeof UNIT_MS;

t.test('offsets from now add up exactly, in any order and spacing', async (t) => {
  t.comment(`fast-check seed ${SEED}`);
  const offset = fc.record({ sign: fc.constantFrom('+', '-'), n: fc.integer({ min: 0, max: 10_000 }), unit: fc.constantFrom<Unit>('ms', 's', 'm', 'h', 'd', 'w'), space: fc.constantFrom('', ' ') });
  fc.assert(fc.property(fc.constantFrom('*', 'now', 'NOW', ''), fc.array(offset, { minLength: 0, maxLength: 5 }), (base, offs) => {
    if (base === '' && offs.length === 0) return;
    const text = base + offs.map((o) => `${o.space}${o.sign}${o.space}${o.n}${o.unit}`).join('');
    const expected = offs.reduce((at, o) => at + (o.sign === '-' ? -1 : 1) * o.n * UNIT_MS[o.unit], NOW);
    t.equal(resolveTime(text, NOW), expected, text);
  }), { seed: SEED, numRuns: 300 });
});

t.test('t and y are midnights of the local day, with offsets', async (t) => {
  const midnight = new Date(NOW); midnight.setHours(0, 0, 0, 0);
  const yesterday = new Date(midnight); yesterday.setDate(yesterday.getDate() - 1);
  t.equal(resolveTime('t', NOW), midnight.getTime());
  t.equal(resolveTime('today', NOW), midnight.getTime());
  t.equal(resolveTime('y+6h', NOW), yesterday.getTime() + 6 * 3_600_000);
  t.equal(resolveTime('t+6h-30m', NOW), midnight.getTime() + 6 * 3_600_000 - 30 * 60_000);
});

t.test('ns and ISO 8601 instants', async (t) => {
  t.equal(resolveTime('1764280212345678901', NOW), 1764280212345);
  t.equal(resolveTime('2026-11-27T21:50:12.345Z', NOW), NOW);
});

t.test('text that is not a time is refused with a message naming it', async (t) => {
  fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 12 }), (s) => {
    let value: number | null = null;
    try { value = resolveTime(s, NOW); } catch (e) {
      t.ok(e instanceof TimeExpressionError, `${JSON.stringify(s)} throws a TimeExpressionError`);
      return;
    }
    t.ok(Number.isFinite(value), `${JSON.stringify(s)} resolved to a finite instant`);
  }), { seed: SEED, numRuns: 300 });
  for (const bad of ['*-8', '*-8x', 'yesterday+', 'soon', '*--8h']) t.throws(() => resolveTime(bad, NOW), { name: 'TimeExpressionError', message: bad }, bad);
});

t.test('a window must not be empty or inverted; its end at * makes it live', async (t) => {
  t.same(resolveWindow('*-8h', '*', NOW), { startMs: NOW - 8 * 3_600_000, endMs: NOW, live: true });
  t.equal(resolveWindow('*-8h', '*-1h', NOW).live, false);
  t.throws(() => resolveWindow('*', '*-1h', NOW), /empty or inverted/);
  t.throws(() => resolveWindow('*', '*', NOW), /empty or inverted/);
});
