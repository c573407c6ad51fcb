// Time expressions as operators write them, resolved in the page against the browser's
// clock and time zone: `*` or `now`, `t` (today 00:00), `y` (yesterday 00:00), each
// optionally followed by offsets (`*-8h`, `y+6h`, `t+6h-30m`); a bare offset is from now
// (`-8h`); an ISO 8601 instant; or int64 ns. An expression that does not parse is an
// error shown to the operator, never silently replaced by a default window.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const OFFSET = /([+-])\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)/y;

export class TimeExpressionError extends Error {
  override readonly name = 'TimeExpressionError';
}

function midnight(nowMs: number, daysBack: number): number {
  const d = new Date(nowMs);
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() - daysBack);
  return d.getTime();
}

/** Milliseconds since the epoch for an expression; throws TimeExpressionError naming the problem. */
export function resolveTime(expr: string, nowMs = Date.now()): number {
  const s = expr.trim();
  if (s === '') throw new TimeExpressionError('an empty time');
  if (/^\d{16,19}$/.test(s)) return Number(BigInt(s) / 1_000_000n);
  let base: number;
  let rest: string;
  const m = /^(\*|now|today|yesterday|t|y)/i.exec(s);
  if (m) {
    const word = m[1].toLowerCase();
    base = word === '*' || word === 'now' ? nowMs : midnight(nowMs, word === 't' || word === 'today' ? 0 : 1);
    rest = s.slice(m[1].length);
  } else if (/^[+-]/.test(s)) {
    base = nowMs;
    rest = s;
  } else {
    const iso = Date.parse(s);
    if (Number.isNaN(iso)) throw new TimeExpressionError(`"${expr}" is not a time: write *, *-8h, t, y+6h, an ISO 8601 instant or ns`);
    return iso;
  }
  let at = 0;
  const text = rest.replace(/\s+/g, '');
  while (at < text.length) {
    OFFSET.lastIndex = at;
    const o = OFFSET.exec(text);
    if (!o) throw new TimeExpressionError(`"${expr}": "${text.slice(at)}" is not an offset such as -8h, +30m or -2d`);
    base += (o[1] === '-' ? -1 : 1) * Number(o[2]) * UNIT_MS[o[3]];
    at = OFFSET.lastIndex;
  }
  return base;
}

export interface TimeWindow { startMs: number; endMs: number; /** The window's end follows the clock (live). */ live: boolean }

export function resolveWindow(start: string, end: string, nowMs = Date.now()): TimeWindow {
  const startMs = resolveTime(start, nowMs), endMs = resolveTime(end, nowMs);
  if (!(endMs > startMs)) throw new TimeExpressionError(`the window ${start} to ${end} is empty or inverted`);
  return { startMs, endMs, live: /^(\*|now)$/i.test(end.trim()) };
}

export const msToNs = (ms: number): bigint => BigInt(Math.round(ms)) * 1_000_000n;

export function formatTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
