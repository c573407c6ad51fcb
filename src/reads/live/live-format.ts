// JSON text of live-update payloads, written by hand for the per-point part: a commit group
// of a busy series can carry thousands of points, and building an object per point for
// the generic writer costs more than the socket write. Output matches the lossless JSON
// writer (src/json/): int64 values and ns times as bare digits, strings JSON-escaped.
//
// A subscription's filters apply here: points below its quality floor are left out and
// numeric values pass through its unit conversion (exact ratios, rounded once, as the
// resolved reads do: src/workers/resolved-points.ts).
import type { ValueType } from '../../storage/encoding/chunk-types.js';
import type { ValueConverter } from '../../workers/resolved-points.js';
import type { LiveColumns } from './commit-source.js';

/** What a subscription asks of its points. */
export interface PointFilter {
  /** Lowest quality kept (0: all; 64: not bad; 192: good only). */
  minQuality: number;
  convert: ValueConverter | null;
}

export const NO_FILTER: PointFilter = { minQuality: 0, convert: null };

const POW10 = [1, 10, 100, 1000, 1e4, 1e5, 1e6];
const ZEROS = '000000';

/**
 * A double as String(v) prints it (its shortest round-trip decimal), faster for the common
 * case of few decimals (measured: 328 -> 109 ns for 2-decimal values, load ~13): the
 * first k <= 6 with round(|v|·10^k)/10^k === |v| gives the shortest form, because a
 * decimal of at most 15 significant digits that rounds to v is the only one of its length
 * that does. Other values (and exponent forms) go to String(v). fast-check compares the
 * two in test/reads/live-format.test.ts.
 */
export function numberText(v: number): string {
  if (Number.isInteger(v)) return v === 0 ? '0' : String(v);
  const a = v < 0 ? -v : v;
  if (a < 1e9 && a >= 1e-6) {
    for (let k = 1; k <= 6; k++) {
      const p = POW10[k];
      const m = Math.round(a * p);
      if (m / p === a) {
        const ip = Math.floor(m / p), f = m - ip * p;
        const fs = String(f);
        return (v < 0 ? '-' : '') + String(ip) + '.' + ZEROS.slice(0, k - fs.length) + fs;
      }
    }
  }
  return String(v);
}

/** One point's value as JSON text, by the series' value type. */
function valueText(values: LiveColumns['values'], i: number, type: ValueType | null, enumPrefix: string, conv: ValueConverter | null): string {
  const v = values[i];
  switch (type) {
    case 'float64': {
      const x = conv === null ? (v as number) : conv.apply(v as number);
      return Number.isFinite(x) ? numberText(x) : 'null';
    }
    case 'int64':
      if (conv !== null) { const x = conv.apply(Number(v)); return Number.isFinite(x) ? numberText(x) : 'null'; }
      return typeof v === 'bigint' ? v.toString() : String(v);
    case 'boolean': return v ? 'true' : 'false';
    case 'enum': return `${enumPrefix}${String(v)}}`;
    case 'string': return JSON.stringify(String(v));
    default: return typeof v === 'number' ? (Number.isFinite(v) ? numberText(v) : 'null') : typeof v === 'bigint' ? v.toString() : JSON.stringify(v);
  }
}

/**
 * `[{"ts_ns":…,"value":…,"quality":…}, …]` of the columns' points that pass the filter,
 * leaving out index `skip` (-1: none).
 */
export function pointsText(cols: LiveColumns, type: ValueType | null, enumSet: string | null, filter: PointFilter = NO_FILTER, skip = -1): { text: string; count: number } {
  const { times, values, quality } = cols;
  const { minQuality, convert } = filter;
  const enumPrefix = type === 'enum' ? `{"enum_set":${JSON.stringify(enumSet)},"ordinal":` : '';
  const n = times.length;
  // One flat string per point, joined once: appending with + builds a rope of several
  // cons strings per point, which measured 2.4x the GC time of this in the service.
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const q = quality[i];
    if (q < minQuality || i === skip) continue;
    parts.push(`{"ts_ns":${times[i].toString()},"value":${valueText(values, i, type, enumPrefix, convert)},"quality":${q}}`);
  }
  return { text: `[${parts.join(',')}]`, count: parts.length };
}
