// The overlay's sampling (read-overlay-task.ts): one attribute valued at the u-grid instants
// of a group of its episodes, by read-at's rules (read-at-task.ts: the kept point before a
// segment, its kept points, the kept point after; exact point, linear, previous or none).
// Read-at gathers each segment's points as bigint times and boxed values in arrays; at
// 100 x 10 x 500 over back-to-back batches that was ~600k bigints and as many target objects
// per overlay, and most of the task's CPU was the garbage collector. Here times are float64
// ns offsets from the group's first instant (exact while within 2^52 ns, ~52 days, of it),
// values and qualities go to typed scratch reused across groups, and the targets are typed
// columns walked with one moving index. A segment that is not float64, or whose points lie
// too far from the group for exact offsets, is read by read-at's own functions instead.
import type { ReadView } from '../../storage/series-store.js';
import type { PointColumns } from '../../storage/encoding/chunk-types.js';
import { readOpenColumns, scanRange, type DecodedChunks } from '../../storage/series-store.js';
import type { ReadOverlayTask } from '../task-protocol.js';
import { converterOf, enumRefOf, keyOf, pointAt, priorPoint, tooLarge, type PlanAttribute, type PlanSegment, type ValueConverter } from '../resolved-points.js';
import { readMeta } from '../../storage/series-store.js';
import { NO_VALUE, keptAfter, neighbours, segmentPoints, sparse, type KnownPoints } from './read-at-task.js';

/** One attribute of one episode on the grid: per instant its value, quality, flag, the no_value reason or the series it came from. */
export interface OverlayColumns {
  /** Numbers unboxed (a boxed double per point was most of the task's garbage); `other` takes over at the first value that is not a number. */
  num: Float64Array;
  other: unknown[] | null;
  /** 1 where a value was found. */
  has: Uint8Array;
  quality: Uint32Array;
  maxQuality: number;
  interpolated: Uint8Array;
  reason: Array<string | undefined>;
  series: Array<string | undefined>;
  suspect: boolean;
}

export const newColumns = (n: number): OverlayColumns => ({
  num: new Float64Array(n), other: null, has: new Uint8Array(n), quality: new Uint32Array(n), maxQuality: 0, interpolated: new Uint8Array(n),
  reason: new Array<string | undefined>(n), series: new Array<string | undefined>(n), suspect: false,
});

/** An episode's grid (or a piece of it from slot `from`) for one attribute: its instants, the same as ns offsets from the first (exact), its columns. */
export interface GridUser { grid: BigInt64Array; rel: Float64Array; from: number; c: OverlayColumns }

/** The grid's offsets from its first instant (exact integers while the episode spans under 2^53 ns). */
export function relativeGrid(grid: BigInt64Array): Float64Array {
  const rel = new Float64Array(grid.length);
  for (let i = 1; i < grid.length; i++) rel[i] = Number(grid[i] - grid[0]);
  return rel;
}

/**
 * Episodes of one attribute read together when they lie close: sorted by start, an episode
 * joins the group when the gap before it is no longer than the group's span so far, so a
 * group's one scan reads at most about twice the points its episodes cover (batches back to
 * back on a vessel: one scan and one head decode, not one per batch).
 */
export function groups(users: GridUser[]): GridUser[][] {
  const sorted = users.filter((x) => x.grid.length > 0).sort((x, y) => (x.grid[0] < y.grid[0] ? -1 : x.grid[0] > y.grid[0] ? 1 : 0));
  const out: GridUser[][] = [];
  let cur: GridUser[] = [], lo = 0n, hi = 0n;
  for (const u of sorted) {
    const start = u.grid[0], end = u.grid[u.grid.length - 1];
    if (cur.length > 0 && start - hi > hi - lo) { out.push(cur); cur = []; }
    if (cur.length === 0) { lo = start; hi = end; }
    if (end > hi) hi = end;
    cur.push(u);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** Offsets from the group's base are exact integers below this magnitude (sums and differences of two stay under 2^53). */
const SAFE = 2 ** 52;
const SAFE_N = BigInt(SAFE);

/** Scratch reused across groups and tasks of this worker (tasks run one at a time on a thread). */
const scratch = {
  at: new Float64Array(0), user: new Int32Array(0), slot: new Int32Array(0), order: new Int32Array(0),
  off: new Float64Array(0), val: new Float64Array(0), q: new Uint32Array(0),
};

function targetRoom(n: number): void {
  if (scratch.at.length >= n) return;
  const m = Math.max(n, 2 * scratch.at.length);
  scratch.at = new Float64Array(m); scratch.user = new Int32Array(m); scratch.slot = new Int32Array(m); scratch.order = new Int32Array(m);
}

function knownRoom(n: number): void {
  if (scratch.off.length >= n) return;
  const m = Math.max(n, 1024, 2 * scratch.off.length);
  const off = new Float64Array(m), val = new Float64Array(m), q = new Uint32Array(m);
  off.set(scratch.off); val.set(scratch.val); q.set(scratch.q);
  scratch.off = off; scratch.val = val; scratch.q = q;
}

/** A segment's kept points in scratch (off, val, q), `n` of them; null when the typed path cannot read it exactly. */
interface KnownTyped { n: number; last: bigint }

/** An instant as an offset from base: exact, or ±Infinity past the safe range. */
function offsetOf(x: bigint, base: bigint): number {
  const d = x - base;
  return d >= SAFE_N ? Infinity : d <= -SAFE_N ? -Infinity : Number(d);
}

/** read-at's segmentPoints into typed scratch: the kept point before, the kept points, the kept point after; null: not float64, or too far from base. */
function segmentTyped(view: ReadView, seg: PlanSegment, head: PointColumns | null, base: bigint, keep: number, conv: ValueConverter | null, budget: { left: number; limit: number }, members: ReadOverlayTask['members']): KnownTyped | null {
  const meta = readMeta(view, seg.series);
  if (meta === undefined) return { n: 0, last: -1n };
  const key = keyOf(seg.series);
  const memo: DecodedChunks = new Map();
  const enumSet = enumRefOf(members, meta);
  const start = BigInt(seg.startNs), end = BigInt(seg.endNs);
  const floor = BigInt(seg.boundFromNs), ceiling = seg.boundToNs === null ? null : BigInt(seg.boundToNs);
  let n = 0;
  const exact = (ts: bigint, value: unknown, q: number): boolean => {
    const o = offsetOf(ts, base);
    if (typeof value !== 'number' || !Number.isFinite(o)) return false;
    knownRoom(n + 1);
    scratch.off[n] = o; scratch.val[n] = value; scratch.q[n] = q; n++;
    return true;
  };
  const before = priorPoint(view, key, start, floor, keep, enumSet, conv, memo, head);
  if (before !== null && !exact(before.ts, before.value, before.quality)) return null;
  let last = -1n, typed = true;
  const left = budget.left;
  scanRange(view, key, start, end, (cols, i0, i1) => {
    if ((budget.left -= i1 - i0) < 0) throw tooLarge(budget.limit);
    const delta = offsetOf(cols.tsBase, base);
    if (cols.type !== 'float64' || Math.abs(delta) + Math.max(Math.abs(cols.tsOffset[i0]), Math.abs(cols.tsOffset[i1 - 1])) >= SAFE) { typed = false; return false; }
    knownRoom(n + i1 - i0);
    const { off, val, q } = scratch;
    const f64 = cols.f64!, quality = cols.quality, tsOffset = cols.tsOffset;
    for (let i = i0; i < i1; i++) {
      if (quality[i] < keep) continue;
      off[n] = delta + tsOffset[i];
      val[n] = conv === null ? f64[i] : conv.apply(f64[i]);
      q[n] = quality[i];
      n++;
    }
    last = cols.tsBase + BigInt(tsOffset[i1 - 1]);
    return true;
  }, undefined, head);
  // read-at's scan reads the segment again and counts its points then
  if (!typed) { budget.left = left; return null; }
  const after = keptAfter(view, key, end - 1n, ceiling, keep, memo, head);
  if (after !== null) {
    const p = pointAt(view, key, after, enumSet, conv, head);
    if (p !== null && !exact(p.ts, p.value, p.quality)) return null;
  }
  return { n, last };
}

/** One attribute's values at the grid instants of a group of its episodes, under the segments (bindings) that cover them; returns the points read. */
export function onGrid(view: ReadView, t: ReadOverlayTask, a: PlanAttribute, users: GridUser[], keep: number, now: bigint, budget: { left: number; limit: number }): number {
  let total = 0;
  for (const u of users) total += u.grid.length;
  targetRoom(total);
  const { at, user, slot, order } = scratch;
  const base = users[0].grid[0];
  let n = 0, inOrder = true;
  for (let k = 0; k < users.length; k++) {
    const { grid, rel } = users[k];
    // a group spanning more than the safe range is valued through bigints (read-at's objects)
    const start = offsetOf(grid[0], base);
    if (!Number.isFinite(start) || start + rel[rel.length - 1] >= SAFE) return onGridExact(view, t, a, users, keep, now, budget);
    for (let i = 0; i < rel.length; i++) {
      at[n] = start + rel[i]; user[n] = k; slot[n] = users[k].from + i; order[n] = n;
      if (n > 0 && at[n] < at[n - 1]) inOrder = false;
      n++;
    }
  }
  // episodes that do not overlap (the usual case on one asset) are in order already
  if (!inOrder) order.subarray(0, n).sort((x, y) => at[x] - at[y] || x - y);
  const conv = converterOf(a);
  const cols = users.map((u) => u.c);
  const put = (x: number, v: unknown, q: number, interpolated: boolean, series: string) => {
    const c = cols[user[x]], i = slot[x];
    c.has[i] = 1;
    if (c.other === null && typeof v === 'number') c.num[i] = v;
    else {
      if (c.other === null) { c.other = new Array<unknown>(c.num.length); for (let s = 0; s < c.num.length; s++) if (c.has[s] === 1) c.other[s] = c.num[s]; }
      c.other[i] = v;
    }
    c.quality[i] = q;
    if (q > c.maxQuality) c.maxQuality = q;
    if (interpolated) c.interpolated[i] = 1;
    c.series[i] = series;
  };
  const none = (x: number, reason: string, series?: string) => { const c = cols[user[x]]; c.reason[slot[x]] = reason; c.series[slot[x]] = series; };
  // read-at's valueAt over its KnownPoints (the sparse seek and the fallback scan)
  const fromKnown = (k: KnownPoints, j: number, x: number, series: string) => {
    const ts = base + BigInt(at[x]);
    if (j >= 0 && k.ts[j] === ts) { put(x, k.val[j], k.q[j], false, series); return; }
    if (a.continuity === 'event') { none(x, NO_VALUE.event, series); return; }
    if (j < 0) { none(x, NO_VALUE.before, series); return; }
    if (a.continuity === 'stepped') { put(x, k.val[j], k.q[j], true, series); return; }
    if (j + 1 >= k.ts.length) { none(x, NO_VALUE.after, series); return; }
    const v0 = k.num[j], v1 = k.num[j + 1];
    const f = Number(ts - k.ts[j]) / Number(k.ts[j + 1] - k.ts[j]);
    put(x, v0 + (v1 - v0) * f, Math.min(k.q[j], k.q[j + 1]), true, series);
  };
  const suspect = () => { for (const c of cols) c.suspect = true; };
  let visited = 0, i = 0;
  for (const seg of a.segments) {
    const segStart = offsetOf(BigInt(seg.startNs), base), segEnd = offsetOf(BigInt(seg.endNs), base);
    for (; i < n && at[order[i]] < segStart; i++) none(order[i], NO_VALUE.unbound);
    let j = i;
    while (j < n && at[order[j]] < segEnd) j++;
    if (j === i) continue;
    // the segment clipped to these instants: the scan reads only the points they need
    const first = base + BigInt(at[order[i]]), last = base + BigInt(at[order[j - 1]]) + 1n;
    const s0 = BigInt(seg.startNs), s1 = BigInt(seg.endNs);
    const clipped = { ...seg, startNs: String(first > s0 ? first : s0), endNs: String(last < s1 ? last : s1) };
    // the head decoded once for both the sparseness check and the scan
    const head = readMeta(view, seg.series) === undefined ? null : readOpenColumns(view, keyOf(seg.series));
    if (sparse(view, clipped, j - i, head)) {
      for (; i < j; i++) {
        const x = order[i];
        const known = neighbours(view, clipped, base + BigInt(at[x]), keep, conv, t.members);
        visited += known.ts.length;
        if (known.suspect(now)) suspect();
        fromKnown(known, known.ts.length > 0 && known.ts[0] <= base + BigInt(at[x]) ? 0 : -1, x, seg.series);
      }
      continue;
    }
    const typed = segmentTyped(view, clipped, head, base, keep, conv, budget, t.members);
    if (typed === null) {
      const known = segmentPoints(view, clipped, keep, conv, budget, t.members);
      visited += known.ts.length;
      if (known.suspect(now)) suspect();
      for (let p = 0; i < j; i++) {
        const ts = base + BigInt(at[order[i]]);
        while (p < known.ts.length && known.ts[p] <= ts) p++;
        fromKnown(known, p - 1, order[i], seg.series);
      }
      continue;
    }
    const kn = typed.n, { off, val, q } = scratch;
    visited += kn;
    if (typed.last > now) suspect();
    const series = seg.series, continuity = a.continuity;
    for (let p = 0; i < j; i++) {
      const x = order[i], ax = at[x];
      while (p < kn && off[p] <= ax) p++;
      const k = p - 1;
      if (k >= 0 && off[k] === ax) put(x, val[k], q[k], false, series);
      else if (continuity === 'event') none(x, NO_VALUE.event, series);
      else if (k < 0) none(x, NO_VALUE.before, series);
      else if (continuity === 'stepped') put(x, val[k], q[k], true, series);
      else if (k + 1 >= kn) none(x, NO_VALUE.after, series);
      else {
        const v0 = val[k], v1 = val[k + 1];
        const f = (ax - off[k]) / (off[k + 1] - off[k]);
        put(x, v0 + (v1 - v0) * f, q[k] < q[k + 1] ? q[k] : q[k + 1], true, series);
      }
    }
  }
  for (; i < n; i++) none(order[i], NO_VALUE.unbound);
  return visited;
}

/** A group too wide for exact float offsets (over ~52 days): each episode alone, cut into pieces each narrower than that (at worst one instant a piece). */
function onGridExact(view: ReadView, t: ReadOverlayTask, a: PlanAttribute, users: GridUser[], keep: number, now: bigint, budget: { left: number; limit: number }): number {
  let visited = 0;
  for (const u of users) {
    for (let p0 = 0; p0 < u.grid.length;) {
      let p1 = p0 + 1;
      while (p1 < u.grid.length && u.grid[p1] - u.grid[p0] < SAFE_N) p1++;
      const grid = u.grid.subarray(p0, p1);
      visited += onGrid(view, t, a, [{ grid, rel: relativeGrid(grid), from: u.from + p0, c: u.c }], keep, now, budget);
      p0 = p1;
    }
  }
  return visited;
}
