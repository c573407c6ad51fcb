// Swinging-door trending (Bristol 1990), the classic historian compression: a point is
// archived only when no straight line from the last archived point stays within
// +-deviation of every point skipped since. As in the classic algorithm, the stored line
// from one archived point to the next keeps skipped points within 2x deviation (the line
// within 1x starts at the archived point's door, not at the point). Applied at seal time to float64 heads when a
// lifecycle policy asks for it; the caller records the sealed range as lossy.
import type { PointColumns } from './encoding/chunk-types.js';
import { allocColumns, copyValue } from './point-runs.js';

/**
 * Returns the kept points (a new run, same base) or the input itself when every point is
 * kept. Always keeps the first and last point and both sides of any quality change, so
 * the quality record stays exact.
 */
export function swingingDoor(c: PointColumns, deviation: number): PointColumns {
  const n = c.count;
  if (n <= 2 || c.type !== 'float64' || !(deviation > 0)) return c;
  const t = c.tsOffset, v = c.f64!, q = c.quality;
  const keep = new Uint8Array(n);
  keep[0] = 1; keep[n - 1] = 1;
  let a = 0, up = -Infinity, low = Infinity;
  for (let i = 1; i < n; i++) {
    if (q[i] !== q[i - 1]) {
      keep[i - 1] = 1; keep[i] = 1;
      a = i; up = -Infinity; low = Infinity;
      continue;
    }
    const dt = t[i] - t[a];
    const su = (v[i] - (v[a] + deviation)) / dt;
    const sl = (v[i] - (v[a] - deviation)) / dt;
    if (su > up) up = su;
    if (sl < low) low = sl;
    if (up > low) {
      // the doors crossed: the previous point is the last one a single line could reach
      a = i - 1; keep[a] = 1;
      const dt2 = t[i] - t[a];
      up = (v[i] - (v[a] + deviation)) / dt2;
      low = (v[i] - (v[a] - deviation)) / dt2;
    }
  }
  let kept = 0;
  for (let i = 0; i < n; i++) kept += keep[i];
  if (kept === n) return c;
  const out = allocColumns(c.type, kept, c.tsBase);
  for (let i = 0, j = 0; i < n; i++) {
    if (!keep[i]) continue;
    out.tsOffset[j] = t[i]; copyValue(c, i, out, j); out.quality[j] = q[i]; j++;
  }
  out.count = kept;
  return out;
}
