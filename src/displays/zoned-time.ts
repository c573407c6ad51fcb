// Wall-clock time in an IANA zone, from ICU through Intl (no time-zone library): the
// parts of an instant in the zone, and the instant of a wall clock in the zone. One
// formatter per zone is kept (building one costs ~50 µs, using it ~2 µs).
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0..999,999,999 within the second. */
  nanos: number;
}

export interface ZonedParts extends WallClock {
  /** 0 = Sunday. */
  weekday: number;
}

const NS_PER_MS = 1_000_000n;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', weekday: 'short', era: 'short',
    });
    formatters.set(tz, f);
  }
  return f;
}

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/**
 * Recent answers of partsAtMs. A batch (the lint of 1,000 displays, a listing) evaluates `t`
 * and `y` at one "now" over and over, and formatToParts is the costly step: the lint's
 * checks spent more time in it than in everything else (CPU profile, 2026-11-27).
 */
const recentParts = new Map<string, ZonedParts>();
const RECENT_PARTS = 256;

/** Wall-clock parts of a whole-millisecond instant in the zone (a copy the caller may change). */
function partsAtMs(ms: number, tz: string): ZonedParts {
  const key = `${tz} ${ms}`;
  const hit = recentParts.get(key);
  if (hit) return { ...hit };
  const parts = formatParts(ms, tz);
  if (recentParts.size >= RECENT_PARTS) recentParts.delete(recentParts.keys().next().value as string);
  recentParts.set(key, parts);
  return { ...parts };
}

function formatParts(ms: number, tz: string): ZonedParts {
  const out: ZonedParts = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, nanos: 0, weekday: 0 };
  let bc = false;
  for (const p of formatter(tz).formatToParts(new Date(ms))) {
    switch (p.type) {
      case 'year': out.year = Number(p.value); break;
      case 'month': out.month = Number(p.value); break;
      case 'day': out.day = Number(p.value); break;
      case 'hour': out.hour = Number(p.value); break;
      case 'minute': out.minute = Number(p.value); break;
      case 'second': out.second = Number(p.value); break;
      case 'weekday': out.weekday = WEEKDAYS[p.value] ?? 0; break;
      case 'era': bc = p.value.startsWith('B'); break;
      default: break;
    }
  }
  if (bc) out.year = 1 - out.year;
  return out;
}

/** The zone's offset from UTC (ms) at a whole-second instant. */
function offsetMs(ms: number, tz: string): number {
  const p = partsAtMs(ms, tz);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - ms;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

export function zonedParts(ns: bigint, tz: string): ZonedParts {
  const secs = floorDiv(ns, 1_000_000_000n);
  const nanos = Number(ns - secs * 1_000_000_000n);
  const p = partsAtMs(Number(secs) * 1000, tz);
  p.nanos = nanos;
  return p;
}

/**
 * The instant of a wall clock in the zone. Fields may overflow (day 0, day 32): Date.UTC
 * normalises them. In a DST gap the wall clock does not exist and the later offset is
 * taken (02:30 on a spring-forward night reads as 03:30); in an overlap, the earlier instant.
 */
export function zonedToNs(w: WallClock, tz: string): bigint {
  const guess = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  if (!Number.isFinite(guess)) throw new RangeError('the wall clock is outside the years this service reads');
  // A two-pass fixed point: the offset at the guess, then at the corrected instant.
  const first = offsetMs(guess, tz);
  let t = guess - first;
  const second = offsetMs(t, tz);
  if (second !== first) {
    // Across a change of offset: the instant the second offset gives, when it maps back to
    // the wall clock; in a gap neither does, and the later instant is taken.
    const alt = guess - second;
    t = offsetMs(alt, tz) === second ? alt : guess - Math.min(first, second);
  }
  return BigInt(t) * NS_PER_MS + BigInt(w.nanos);
}
