// Asset time zones are IANA names, checked against the zones this Node's ICU knows.
import { ServiceError } from '../../errors.js';

let known: Set<string> | null = null;

function zones(): Set<string> {
  known ??= new Set(Intl.supportedValuesOf('timeZone'));
  return known;
}

/** Returns the zone when it is an IANA name; UTC and aliases that ICU canonicalises are accepted. */
export function checkTimezone(field: string, tz: string): string {
  if (zones().has(tz) || tz === 'UTC') return tz;
  try {
    // Aliases (e.g. "Asia/Calcutta") are valid IANA names although not listed as canonical.
    new Intl.DateTimeFormat('en', { timeZone: tz });
    if (/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(tz)) return tz;
  } catch { /* fall through */ }
  throw new ServiceError('invalid-request', `${field}: "${tz}" is not an IANA time zone name`, { errors: [{ field, problem: 'unknown time zone' }] });
}
