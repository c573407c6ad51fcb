// JSON text of live-update payloads, written by hand for the per-point part: a commit group
// of a busy series can carry thousands of points, and building an object per point for
// the generic writer costs more than the socket write. Output matches the lossless JSON
// writer (src/json/): int64 values and ns times as bare digits, strings JSON-escaped.
import type { ValueType } from '../../storage/encoding/chunk-types.js';
import type { LiveColumns } from './commit-source.js';

/** One point's value as JSON text, by the series' value type. */
function valueText(values: LiveColumns['values'], i: number, type: ValueType | null, enumSet: string | null): string {
  const v = values[i];
  switch (type) {
    case 'boolean': return v ? 'true' : 'false';
    case 'enum': return `{"enum_set":${JSON.stringify(enumSet)},"ordinal":${String(v)}}`;
    case 'string': return JSON.stringify(String(v));
    case 'int64': return typeof v === 'bigint' ? v.toString() : String(v);
    default: return typeof v === 'number' ? (Number.isFinite(v) ? String(v) : 'null') : typeof v === 'bigint' ? v.toString() : JSON.stringify(v);
  }
}

/** `[{"ts_ns":…,"value":…,"quality":…}, …]` of the columns' points whose index `keep` accepts. */
export function pointsText(cols: LiveColumns, type: ValueType | null, enumSet: string | null, keep: ((i: number) => boolean) | null): { text: string; count: number } {
  const parts: string[] = [];
  const n = cols.times.length;
  for (let i = 0; i < n; i++) {
    if (keep && !keep(i)) continue;
    parts.push(`{"ts_ns":${cols.times[i].toString()},"value":${valueText(cols.values, i, type, enumSet)},"quality":${cols.quality[i]}}`);
  }
  return { text: `[${parts.join(',')}]`, count: parts.length };
}
