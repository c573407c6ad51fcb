// The time expression parser and evaluator on their own (no server): fixed examples
// across a DST change, and fast-check properties over bases, offsets and zones.
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { parseTimeExpression, evaluateTime, resolveTime, TimeExpressionError, type TimeContext } from '../../src/displays/time-expression.js';
import { zonedParts, zonedToNs } from '../../src/displays/zoned-time.js';

const SEED = Number(process.env.FC_SEED ?? 30_2026);
t.comment(`fast-check seed ${SEED}`);

/** A property checked with the printed seed; a counterexample fails the test with fast-check's report. */
function holds<Ts extends unknown[]>(t: Test, property: fc.IPropertyWithHooks<Ts>, numRuns: number): void {
  t.doesNotThrow(() => fc.assert(property, { seed: SEED, numRuns }), `holds for ${numRuns} runs`);
}

const MS = 1_000_000n;
const H = 3_600_000_000_000n;
const at = (iso: string) => BigInt(Date.parse(iso)) * MS;
const ctx = (nowIso: string, timezone = 'UTC', shiftStarts: string[] | null = null): TimeContext => ({ nowNs: at(nowIso), timezone, shiftStarts });

t.test('operators\' expressions across the spring-forward day in Berlin', async (t) => {
  const c = ctx('2026-03-29T10:00:00Z', 'Europe/Berlin', ['06:00', '14:00', '22:00']);
  const cases: Array<[string, string]> = [
    ['*', '2026-03-29T10:00:00Z'],
    ['now', '2026-03-29T10:00:00Z'],
    ['*-8h', '2026-03-29T02:00:00Z'],
    ['-8h', '2026-03-29T02:00:00Z'],
    ['t', '2026-03-28T23:00:00Z'],
    ['today', '2026-03-28T23:00:00Z'],
    ['y', '2026-03-27T23:00:00Z'],
    ['y+6h', '2026-03-28T05:00:00Z'],
    ['t+6h', '2026-03-29T05:00:00Z'],
    ['t-1d', '2026-03-27T23:00:00Z'],
    ['t+1d', '2026-03-29T22:00:00Z'],
    ['shift', '2026-03-29T04:00:00Z'],
    ['shift+30m', '2026-03-29T04:30:00Z'],
    ['sun', '2026-03-28T23:00:00Z'],
    ['mon', '2026-03-22T23:00:00Z'],
    ['2026-03-01T08:00:00Z', '2026-03-01T08:00:00Z'],
    ['2026-03-01 08:00', '2026-03-01T07:00:00Z'],
    ['2026-03-01T08:00:00+05:30-1h', '2026-03-01T01:30:00Z'],
    ['* - 1.5h', '2026-03-29T08:30:00Z'],
    ['t+1mo', '2026-04-28T22:00:00Z'],
    ['T+6H', '2026-03-29T05:00:00Z'],
  ];
  for (const [expr, want] of cases) t.equal(resolveTime(expr, c), at(want), expr);
  t.equal(resolveTime('1700000000123456789', c), 1_700_000_000_123_456_789n, 'ns digits are an exact instant');
  t.equal(resolveTime('2026-03-01T08:00:00.123456789Z', c), at('2026-03-01T08:00:00Z') + 123_456_789n, 'fractions to the nanosecond');
  t.equal(resolveTime(1_700_000_000_000_000_000n, c), 1_700_000_000_000_000_000n);
  t.equal(resolveTime('shift', ctx('2026-03-29T03:00:00Z', 'Europe/Berlin', ['06:00', '14:00', '22:00'])), at('2026-03-28T21:00:00Z'), 'before the first shift of the day: yesterday\'s last');
});

t.test('what is not an expression is refused with the offset of the problem', async (t) => {
  for (const bad of ['', '8h', 'yesterdayy', '*-8', '*-8x', 't+1.5d', '2026-13-01', '2026-02-30T00:00Z', '*+', 'now now', '99999999999999999999']) {
    t.throws(() => parseTimeExpression(bad), TimeExpressionError, JSON.stringify(bad));
  }
  t.throws(() => evaluateTime(parseTimeExpression('shift'), ctx('2026-03-29T10:00:00Z')), /no shift definition/);
  t.throws(() => evaluateTime(parseTimeExpression('*+146000y'), ctx('2026-03-29T10:00:00Z')), /int64/);
});

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney', 'Pacific/Chatham', 'America/St_Johns'];
// 1990..2060, as ns
const instant = fc.bigInt({ min: 631_152_000_000_000_000n, max: 2_840_140_800_000_000_000n });
const fixedOffset = fc.record({ n: fc.integer({ min: 0, max: 100_000 }), unit: fc.constantFrom('ms', 's', 'm', 'min', 'h'), sign: fc.constantFrom('+', '-') });
const UNIT: Record<string, bigint> = { ms: MS, s: 1000n * MS, m: 60_000n * MS, min: 60_000n * MS, h: H };

t.test('fixed offsets add exactly to any base', async (t) => {
  holds(t, fc.property(instant, fc.constantFrom(...ZONES), fc.constantFrom('*', 't', 'y', 'sun', 'now'), fc.array(fixedOffset, { maxLength: 5 }), (now, tz, base, offsets) => {
    const c: TimeContext = { nowNs: now, timezone: tz, shiftStarts: null };
    const text = base + offsets.map((o) => `${o.sign}${o.n}${o.unit}`).join('');
    const sum = offsets.reduce((s, o) => s + (o.sign === '-' ? -1n : 1n) * BigInt(o.n) * UNIT[o.unit], 0n);
    return resolveTime(text, c) === resolveTime(base, c) + sum;
  }), 2_000);
});

t.test('today is local midnight at or before now, and less than a day (25 h on DST days) before it', async (t) => {
  holds(t, fc.property(instant, fc.constantFrom(...ZONES), (now, tz) => {
    const c: TimeContext = { nowNs: now, timezone: tz, shiftStarts: null };
    const today = resolveTime('t', c);
    const p = zonedParts(today, tz);
    const n = zonedParts(now, tz);
    return p.hour === 0 && p.minute === 0 && p.second === 0 && p.nanos === 0 && today <= now && now - today < 25n * H
      && p.year === n.year && p.month === n.month && p.day === n.day && resolveTime('y', c) < today;
  }), 2_000);
});

t.test('calendar days keep the wall clock at noon, and undo each other', async (t) => {
  holds(t, fc.property(instant, fc.constantFrom(...ZONES), fc.integer({ min: -1000, max: 1000 }), (now, tz, days) => {
    const p = zonedParts(now, tz);
    const noon = zonedToNs({ ...p, hour: 12, minute: 0, second: 0, nanos: 0 }, tz);
    const c: TimeContext = { nowNs: noon, timezone: tz, shiftStarts: null };
    const sign = days < 0 ? '-' : '+';
    const moved = resolveTime(`*${sign}${Math.abs(days)}d`, c);
    const q = zonedParts(moved, tz);
    return q.hour === 12 && q.minute === 0 && resolveTime(`*${sign}${Math.abs(days)}d${days < 0 ? '+' : '-'}${Math.abs(days)}d`, c) === noon;
  }), 1_000);
});

t.test('ISO instants with an offset agree with Date.parse', async (t) => {
  holds(t, fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), (ms) => {
    const iso = new Date(ms).toISOString();
    return resolveTime(iso, { nowNs: 0n, timezone: 'UTC', shiftStarts: null }) === BigInt(ms) * MS;
  }), 2_000);
});

t.test('any text either parses or is refused with a TimeExpressionError, never anything else', async (t) => {
  const pieces = fc.constantFrom('*', 't', 'y', 'now', 'shift', '+', '-', '8', '1.5', 'h', 'd', 'mo', 'y', ' ', '2026-03-01', 'T', '08:00', 'Z', ':', 'x', '9999999999999999');
  holds(t, fc.property(fc.oneof(fc.string(), fc.array(pieces, { maxLength: 8 }).map((a) => a.join(''))), (text) => {
    try {
      const e = parseTimeExpression(text);
      evaluateTime(e, { nowNs: 1_800_000_000_000_000_000n, timezone: 'Europe/Berlin', shiftStarts: ['06:00'] });
      return true;
    } catch (err) {
      return err instanceof TimeExpressionError;
    }
  }), 5_000);
});
