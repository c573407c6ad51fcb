// The point runs that the golden-byte tests of every chunk format version pin (v2 and v3
// encode the same runs, so their files show what each version spends on one chunk), and
// the checks both versions' goldens must pass: exact decode, and the group directory.
import type { Test } from 'tap';
import { decodeChunk } from '../../src/storage/encoding/chunk.js';
import { ChunkGroups, ChunkSummary, readChunkSummary } from '../../src/storage/encoding/chunk-range.js';
import { createPointColumns } from '../../src/storage/encoding/point-columns.js';
import type { PointColumns } from '../../src/storage/encoding/chunk-types.js';
import { type PointRun, timeAt, toColumns } from './chunk-arbitraries.js';

/** The runs' first time (2023-11-14T22:13:20Z). */
export const T0 = 1_700_000_000_000_000_000n;

/** 300 decimal points on a jittered 1 s grid, a deterministic wander: two directory groups. */
function directoryRun(): PointRun {
  const deltas: number[] = [], values: number[] = [], quality: number[] = [];
  let m = 20_000, seed = 7;
  for (let i = 0; i < 300; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    m += (seed % 41) - 20;
    values.push(m / 1000);
    quality.push(i >= 100 && i < 110 ? 0 : 192);
    if (i > 0) deltas.push(1_000_000_000 + ((seed >> 8) % 8) * 1_000_000);
  }
  return { type: 'float64', firstTs: T0, o0: 0, deltas, values, quality };
}

export const GOLDEN_RUNS: Array<{ name: string; run: PointRun }> = [
  { name: 'decimal', run: { type: 'float64', firstTs: T0, o0: 0, deltas: [1_003_000_000, 998_000_000, 1_001_000_000, 1_000_000_000], values: [20.5, 20.6, 20.6, 20.4, 20.7], quality: [192, 192, 192, 192, 192] } },
  { name: 'split', run: { type: 'float64', firstTs: T0, o0: 0, deltas: [1, 2], values: [0.1 + 0.2, -0, 5e-324], quality: [192, 64, 0] } },
  { name: 'int64', run: { type: 'int64', firstTs: -(2n ** 63n), o0: 0, deltas: [7, 7], values: [2n ** 63n - 1n, -(2n ** 63n), 0n], quality: [192, 192, 192] } },
  { name: 'boolean', run: { type: 'boolean', firstTs: T0, o0: 0, deltas: [1e9, 1e9, 1e9, 1e9, 1e9], values: [0, 0, 0, 1, 1, 0], quality: [192, 192, 192, 192, 0, 0] } },
  { name: 'enum', run: { type: 'enum', firstTs: 0n, o0: 0, deltas: [100, 100, 100], values: [3, 3, 5, -1], quality: [4294967295, 192, 192, 192] } },
  { name: 'string', run: { type: 'string', firstTs: T0, o0: 0, deltas: [10e9, 10e9, 10e9], values: ['B-1', 'B-1', 'é𝄞', ''], quality: [192, 192, 192, 192] } },
  { name: 'gapped time', run: { type: 'int64', firstTs: T0, o0: 0, deltas: [1_002_000_000, 999_000_000, 5_004_000_000, 1_000_000_000], values: [100n, 101n, 101n, 105n, 110n], quality: [192, 192, 0, 0, 192] } },
  { name: 'group directory', run: directoryRun() },
];

/** `bytes` decode to exactly the points of `cols`: times, quality and every value bit. */
export function checkDecodesExactly(t: Test, bytes: Uint8Array, cols: PointColumns): void {
  const out = createPointColumns(cols.type, cols.count);
  t.equal(decodeChunk(bytes, out), cols.count);
  let same = true;
  for (let i = 0; i < cols.count; i++) if (timeAt(out, i) !== timeAt(cols, i) || out.quality[i] !== cols.quality[i]) same = false;
  t.ok(same, 'times and quality decode exactly');
  const col = { float64: 'f64', int64: 'i64', boolean: 'u8', enum: 'ord', string: 'str' }[cols.type] as 'f64' | 'i64' | 'u8' | 'ord' | 'str';
  const want = Array.from(cols[col] as ArrayLike<unknown>).slice(0, cols.count);
  const got = Array.from(out[col] as ArrayLike<unknown>).slice(0, cols.count);
  t.ok(want.every((v, i) => Object.is(v, got[i])), 'values decode exactly');
}

/** The 'group directory' golden's summary describes its two groups exactly, and each group decodes alone. */
export function checkGroupDirectory(t: Test, bytes: Uint8Array, version: number): void {
  const run = GOLDEN_RUNS.find((r) => r.name === 'group directory')!.run;
  const cols = toColumns(run);
  const s = new ChunkSummary();
  t.ok(readChunkSummary(bytes, cols.count, s), `a version ${version} chunk has a summary`);
  t.equal(s.groups, 2);
  s.loadDirectory();
  let nonGood = 0;
  for (let i = 0; i + 1 < cols.count; i++) if (cols.quality[i] < 192) nonGood += cols.tsOffset[i + 1] - cols.tsOffset[i];
  t.equal(s.nonGoodNs, nonGood, 'non-good time is the time after each non-good point');
  t.equal(s.lastGood, true);
  const f = cols.f64!;
  for (let g = 0; g < 2; g++) {
    const a = g * 256, b = Math.min(cols.count, a + 256);
    let lo = a, hi = a;
    for (let i = a; i < b; i++) { if (f[i] < f[lo]) lo = i; if (f[i] > f[hi]) hi = i; }
    t.same([s.firstRel[g], s.firstV[g], s.minV[g], s.minIdx[g], s.maxV[g], s.maxIdx[g]], [cols.tsOffset[a] - cols.tsOffset[0], f[a], f[lo], lo, f[hi], hi], `group ${g}`);
    const ts = new Float64Array(256), v = new Float64Array(256);
    const groups = new ChunkGroups();
    groups.open(bytes, s, cols.count, cols.type);
    groups.decode(a, b, ts, v);
    t.equal(groups.timeAt(lo), cols.tsOffset[lo] - cols.tsOffset[0], `group ${g}: time of its min alone`);
    let same = true;
    for (let i = a; i < b; i++) if (ts[i - a] !== cols.tsOffset[i] - cols.tsOffset[0] || !Object.is(v[i - a], f[i])) same = false;
    t.ok(same, `group ${g} decodes alone to its points`);
  }
}
