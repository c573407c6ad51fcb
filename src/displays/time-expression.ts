// Relative time expressions as operators write them (PI and Canary style), parsed once
// into a base and offsets, then evaluated against "now", a time zone and (for `shift`) the
// context asset's shift starts.
//
//   expr   := base? offset*          (at least one of the two; a bare offset counts from now)
//   base   := * | now | t | today | y | yesterday | mon..sun | shift | ISO 8601 | ns digits
//   offset := (+|-) number unit       number: digits with an optional fraction
//   unit   := ms | s | m | min | h    fixed lengths, added to the instant
//           | d | w | mo | y          calendar units, applied to the wall clock of the zone
//
// `t` is today 00:00 in the zone, `y` yesterday 00:00, `mon` the latest Monday 00:00
// (today when it is Monday). `shift` is the latest shift start at or before now, from the
// effective asset property `shift_starts` (local "HH:MM" times); without it the
// expression cannot be evaluated and says why. An ISO instant without an offset is wall
// clock time in the zone. Calendar units keep the wall-clock time across DST changes
// ("t-1d" is yesterday 00:00, even when yesterday had 23 hours).
import { zonedParts, zonedToNs, type WallClock } from './zoned-time.js';

export type TimeBase =
  | { kind: 'now' }
  | { kind: 'today' }
  | { kind: 'yesterday' }
  | { kind: 'weekday'; day: number }
  | { kind: 'shift' }
  | { kind: 'instant'; ns: bigint }
  | { kind: 'wall-clock'; wall: WallClock };

export type CalendarUnit = 'd' | 'w' | 'mo' | 'y';
export type TimeOffset = { kind: 'fixed'; ns: bigint } | { kind: 'calendar'; unit: CalendarUnit; count: number };

export interface TimeExpression { base: TimeBase; offsets: TimeOffset[] }

export interface TimeContext {
  nowNs: bigint;
  timezone: string;
  /** Local shift start times ("06:00"), or null when no shift definition exists. */
  shiftStarts: string[] | null;
}

/** Why an expression could not be read or evaluated; `at` is the character offset for parse errors. */
export class TimeExpressionError extends Error {
  constructor(message: string, readonly at: number | null = null) { super(message); this.name = 'TimeExpressionError'; }
}

const NS_PER_MS = 1_000_000n;
const FIXED_UNITS: Record<string, bigint> = { ms: NS_PER_MS, s: 1_000n * NS_PER_MS, m: 60_000n * NS_PER_MS, min: 60_000n * NS_PER_MS, h: 3_600_000n * NS_PER_MS };
const CALENDAR_UNITS: Record<string, CalendarUnit> = { d: 'd', w: 'w', mo: 'mo', y: 'y' };
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const WORD_BASES: Record<string, TimeBase> = {
  '*': { kind: 'now' }, now: { kind: 'now' }, t: { kind: 'today' }, today: { kind: 'today' }, y: { kind: 'yesterday' }, yesterday: { kind: 'yesterday' },
  shift: { kind: 'shift' },
};
for (let d = 0; d < 7; d++) WORD_BASES[DAYS[d]] = { kind: 'weekday', day: d };

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?/i;
const OFFSET = /^([+-])\s*(\d+)(?:\.(\d+))?\s*(ms|min|mo|s|m|h|d|w|y)(?![a-z])/i;
const WORD = /^(\*|[a-z]+)/i;
const MAX_OFFSETS = 16;
/** Largest count of a calendar offset (400 years of days): beyond it a wall clock leaves the years Date can hold. */
const MAX_CALENDAR = 146_100;

/** Parses an expression; throws TimeExpressionError naming the offset of the problem. */
export function parseTimeExpression(text: string): TimeExpression {
  if (text.length > 200) throw new TimeExpressionError('longer than 200 characters', 200);
  let i = skip(text, 0);
  let base: TimeBase | null = null;
  const iso = ISO.exec(text.slice(i));
  if (iso) {
    base = isoBase(iso, i);
    i = skip(text, i + iso[0].length);
  } else if (/^\d+(?![\d.])/.test(text.slice(i)) && !OFFSET.test(text.slice(i)) && !/^\d+\s*[a-z]/i.test(text.slice(i))) {
    const digits = /^\d+/.exec(text.slice(i))![0];
    if (digits.length > 19 || BigInt(digits) > 2n ** 63n - 1n) throw new TimeExpressionError('nanoseconds beyond int64', i);
    base = { kind: 'instant', ns: BigInt(digits) };
    i = skip(text, i + digits.length);
  } else {
    const w = WORD.exec(text.slice(i));
    if (w) {
      const word = w[1].toLowerCase();
      const b = WORD_BASES[word];
      if (!b) throw new TimeExpressionError(`"${w[1]}" is not a time base (*, now, t, y, today, yesterday, mon..sun, shift, an ISO 8601 time)`, i);
      base = b;
      i = skip(text, i + w[0].length);
    }
  }
  const offsets: TimeOffset[] = [];
  while (i < text.length) {
    const m = OFFSET.exec(text.slice(i));
    if (!m) throw new TimeExpressionError(`expected an offset such as "-8h" at "${text.slice(i, i + 12)}"`, i);
    if (offsets.length === MAX_OFFSETS) throw new TimeExpressionError(`more than ${MAX_OFFSETS} offsets`, i);
    offsets.push(offsetOf(m, i));
    i = skip(text, i + m[0].length);
  }
  if (base === null && offsets.length === 0) throw new TimeExpressionError('empty: write a time such as "*", "t+6h" or "*-8h"', 0);
  return { base: base ?? { kind: 'now' }, offsets };
}

function skip(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  return i;
}

function isoBase(m: RegExpExecArray, at: number): TimeBase {
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const wall: WallClock = {
    year: Number(y), month: Number(mo), day: Number(d), hour: h ? Number(h) : 0, minute: mi ? Number(mi) : 0, second: s ? Number(s) : 0,
    nanos: frac ? Number(frac.padEnd(9, '0')) : 0,
  };
  if (wall.month < 1 || wall.month > 12 || wall.day < 1 || wall.day > daysIn(wall.year, wall.month) || wall.hour > 23 || wall.minute > 59 || wall.second > 59) {
    throw new TimeExpressionError(`"${m[0]}" is not a valid date and time`, at);
  }
  if (!zone) return { kind: 'wall-clock', wall };
  let offsetMin = 0;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.replace(':', '');
    offsetMin = (digits[0] === '-' ? -1 : 1) * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5)));
    if (Math.abs(offsetMin) > 18 * 60) throw new TimeExpressionError(`"${zone}" is not a UTC offset`, at);
  }
  const ms = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) - offsetMin * 60_000;
  return { kind: 'instant', ns: BigInt(ms) * NS_PER_MS + BigInt(wall.nanos) };
}

function offsetOf(m: RegExpExecArray, at: number): TimeOffset {
  const [, sign, whole, frac, rawUnit] = m;
  const unit = rawUnit.toLowerCase();
  const neg = sign === '-';
  if (unit in FIXED_UNITS) {
    if (whole.length > 15) throw new TimeExpressionError('offset too large', at);
    const scale = 10n ** BigInt(frac?.length ?? 0);
    const ns = (BigInt(whole + (frac ?? '')) * FIXED_UNITS[unit]) / scale;
    return { kind: 'fixed', ns: neg ? -ns : ns };
  }
  if (frac) throw new TimeExpressionError(`a calendar offset (${unit}) takes a whole number`, at);
  const count = Number(whole);
  if (count > MAX_CALENDAR) throw new TimeExpressionError('offset too large', at);
  return { kind: 'calendar', unit: CALENDAR_UNITS[unit], count: neg ? -count : count };
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Wall clocks are kept within the years Date handles exactly (±270,000 years is its edge; we stay far inside). */
const MAX_WALL_NS = 8_000_000_000_000_000_000n;

/** Evaluates a parsed expression to ns since the epoch. */
export function evaluateTime(expr: TimeExpression, ctx: TimeContext): bigint {
  try {
    let ns = baseNs(expr.base, ctx);
    for (const o of expr.offsets) {
      if (o.kind === 'fixed') ns += o.ns;
      else ns = addCalendar(ns, o.unit, o.count, ctx.timezone);
      if (ns < INT64_MIN || ns > INT64_MAX || ns > MAX_WALL_NS || ns < -MAX_WALL_NS) throw new TimeExpressionError('the time falls outside the int64 nanosecond range');
    }
    return ns;
  } catch (e) {
    // Date's own range (±275,000 years) is far outside int64 ns; reaching it is the same refusal.
    if (e instanceof RangeError) throw new TimeExpressionError('the time falls outside the int64 nanosecond range');
    throw e;
  }
}

/** Parses and evaluates in one step. */
export function resolveTime(text: string | number | bigint, ctx: TimeContext): bigint {
  if (typeof text !== 'string') return BigInt(text);
  return evaluateTime(parseTimeExpression(text), ctx);
}

function midnight(ctx: TimeContext, daysBack: number): bigint {
  const p = zonedParts(ctx.nowNs, ctx.timezone);
  return zonedToNs({ year: p.year, month: p.month, day: p.day - daysBack, hour: 0, minute: 0, second: 0, nanos: 0 }, ctx.timezone);
}

function baseNs(b: TimeBase, ctx: TimeContext): bigint {
  switch (b.kind) {
    case 'now': return ctx.nowNs;
    case 'today': return midnight(ctx, 0);
    case 'yesterday': return midnight(ctx, 1);
    case 'weekday': {
      const p = zonedParts(ctx.nowNs, ctx.timezone);
      return midnight(ctx, (p.weekday - b.day + 7) % 7);
    }
    case 'instant': return b.ns;
    case 'wall-clock': return zonedToNs(b.wall, ctx.timezone);
    case 'shift': return shiftStart(ctx);
  }
}

/** The latest shift start at or before now: each start time on today and yesterday, the latest one not in the future. */
function shiftStart(ctx: TimeContext): bigint {
  if (!ctx.shiftStarts || ctx.shiftStarts.length === 0) throw new TimeExpressionError('no shift definition: the context asset has no effective property shift_starts');
  const p = zonedParts(ctx.nowNs, ctx.timezone);
  let best: bigint | null = null;
  for (const s of ctx.shiftStarts) {
    const m = /^(\d{2}):(\d{2})$/.exec(s);
    if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) throw new TimeExpressionError(`shift start "${s}" is not a local time HH:MM`);
    for (const back of [0, 1]) {
      const at = zonedToNs({ year: p.year, month: p.month, day: p.day - back, hour: Number(m[1]), minute: Number(m[2]), second: 0, nanos: 0 }, ctx.timezone);
      if (at <= ctx.nowNs && (best === null || at > best)) best = at;
    }
  }
  return best as bigint;
}

function addCalendar(ns: bigint, unit: CalendarUnit, count: number, tz: string): bigint {
  const p = zonedParts(ns, tz);
  const wall: WallClock = { year: p.year, month: p.month, day: p.day, hour: p.hour, minute: p.minute, second: p.second, nanos: p.nanos };
  if (unit === 'd') wall.day += count;
  else if (unit === 'w') wall.day += 7 * count;
  else {
    const months = unit === 'mo' ? count : 12 * count;
    const total = wall.year * 12 + (wall.month - 1) + months;
    wall.year = Math.floor(total / 12);
    wall.month = (total % 12) + 1;
    wall.day = Math.min(wall.day, daysIn(wall.year, wall.month));
  }
  return zonedToNs(wall, tz);
}
