import t from 'tap';
import fc from 'fast-check';
import { columnOf, renderSeries, type MinMaxBand, type SignificantPoints } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, T0, SEC } from '../helpers/series-store.js';
import { toColumns } from '../helpers/chunk-arbitraries.js';
import { encodeChunk } from '../../src/storage/encoding/chunk.js';
import { sectionOffsets } from '../../src/storage/encoding/chunk-header.js';
import { IntMode } from '../../src/storage/encoding/int-column.js';

// Chunks of up to 1,500 points hold several 256-point directory groups, so renders at
// these widths cut chunks at column boundaries: the straddling path (decode the boundary
// group, answer the others from the directory) must give exactly what every raw point
// gives. Reference: M4 computed from the generated points, first occurrence on ties.
const SEED = 9090;
const MS = 1_000_000n;

interface Series { ts: bigint[]; v: number[]; q: number[] }

/** How a test series moves: by up to 0.20 each second, by -0.02..0.02 mostly 0, or in rare steps. */
type Motion = 'wandering' | 'fine' | 'stepping';

/**
 * A 0.01-resolution series on a 1 s grid with ms jitter, collector gaps and quality
 * faults: wandering (values bit-packed, chunks get a group directory), moving finely like
 * a plant measurement (values in RICE_DELTA, decoded from the checkpoint at a group's
 * first point) or stepping rarely (values run-length coded, no directory: the run-length
 * path).
 */
function makeSeries(n: number, seed: number, motion: Motion = 'wandering'): Series {
  let x = seed >>> 0;
  const rnd = () => { x = (Math.imul(x, 1103515245) + 12345) >>> 0; return x / 4294967296; };
  const ts: bigint[] = [], v: number[] = [], q: number[] = [];
  let m = 20_000 + Math.floor(rnd() * 1000), slot = 0, fault = 0;
  for (let i = 0; i < n; i++) {
    slot += rnd() < 0.003 ? 2 + Math.floor(rnd() * 400) : 1;
    if (motion === 'wandering') m += Math.floor(rnd() * 41) - 20;
    else if (motion === 'fine') m += Math.round((rnd() + rnd() - 1) * 2.5);
    else if (rnd() < 0.004) m += Math.floor(rnd() * 41) - 20;
    if (fault > 0) fault--; else if (rnd() < 0.002) fault = 3 + Math.floor(rnd() * 30);
    ts.push(T0 + BigInt(slot) * SEC + BigInt(Math.floor(rnd() * 8)) * MS);
    v.push(m / 100);
    q.push(fault > 0 ? 0 : 192);
  }
  return { ts, v, q };
}

interface Col { n: number; f: number; l: number; lo: number; hi: number }

/** Per-column first/last/min/max indexes of the points in [start, end). */
function reference(s: Series, start: bigint, end: bigint, W: number): Col[] {
  const span = Number(end - start);
  const cols: Col[] = Array.from({ length: W }, () => ({ n: 0, f: -1, l: -1, lo: -1, hi: -1 }));
  s.ts.forEach((t, i) => {
    if (t < start || t >= end) return;
    const c = cols[columnOf(Number(t - start), W, span)];
    if (c.n++ === 0) { c.f = c.lo = c.hi = i; }
    if (s.v[i] < s.v[c.lo]) c.lo = i;
    if (s.v[i] > s.v[c.hi]) c.hi = i;
    c.l = i;
  });
  return cols;
}

/** significant-points as render orders them: before, per column first/min/max/last by time, after. */
function referencePoints(s: Series, cols: Col[], start: bigint, end: bigint): { ts: bigint[]; v: number[] } {
  const ts: bigint[] = [], v: number[] = [];
  const idx: number[] = [];
  let before = -1, after = -1;
  s.ts.forEach((t, i) => { if (t < start) before = i; else if (t >= end && after < 0) after = i; });
  if (before >= 0) idx.push(before);
  for (const c of cols) {
    if (c.n === 0) continue;
    const mid = s.ts[c.lo] <= s.ts[c.hi] ? [c.lo, c.hi] : [c.hi, c.lo];
    let last = -1n;
    for (const i of [c.f, mid[0], mid[1], c.l]) { if (s.ts[i] !== last) { idx.push(i); last = s.ts[i]; } }
  }
  if (after >= 0) idx.push(after);
  for (const i of idx) { ts.push(s.ts[i]); v.push(s.v[i]); }
  return { ts, v };
}

/** Percent of [start, end) covered by segments that start at a good point (segments between consecutive points). */
function referenceGood(s: Series, start: bigint, end: bigint): number {
  let cov = 0, good = 0;
  for (let i = 0; i + 1 < s.ts.length; i++) {
    const a = s.ts[i] > start ? s.ts[i] : start, b = s.ts[i + 1] < end ? s.ts[i + 1] : end;
    if (b <= a) continue;
    cov += Number(b - a);
    if (s.q[i] >= 192) good += Number(b - a);
  }
  return cov > 0 ? (100 * good) / cov : 0; // a range that covers no time: 0 (docs/decisions.md, 2026-11-27)
}

t.test('a finely moving series keeps its values in RICE_DELTA, the layout the fine renders below go through', async (t) => {
  const s = makeSeries(1500, 5, 'fine');
  const deltas = s.ts.slice(1).map((ts, i) => Number(ts - s.ts[i]));
  const bytes = encodeChunk(toColumns({ type: 'float64', firstTs: s.ts[0], o0: 0, deltas, values: s.v, quality: s.q }));
  const at = sectionOffsets(bytes).valuesAt;
  t.same([bytes[at], bytes[at + 2]], [0, IntMode.RiceDelta], 'decimal values, integer column RICE_DELTA');
});

for (const motion of ['wandering', 'fine', 'stepping'] as const) t.test(`renders of a ${motion === 'stepping' ? 'rarely stepping' : motion} series across boundaries inside chunks equal a brute-force M4 of every raw point (fast-check seed ${SEED})`, async (t) => {
  const stepping = motion === 'stepping';
  const { store } = await tempStore(t, { seal: { chunkPoints: 1500 } });
  let groupsDecoded = 0, straddled = 0, runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 700, max: 6000 }), fc.nat(), fc.integer({ min: 1, max: 120 }), fc.double({ min: 0, max: 0.6, noNaN: true }), fc.double({ min: 0.2, max: 1.2, noNaN: true }),
      async (n, seed, width, fromFrac, lenFrac) => {
        const s = makeSeries(n, seed, motion);
        const id = newId();
        await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
        await store.write([{ series: id, times: BigInt64Array.from(s.ts), values: Float64Array.from(s.v), quality: Uint32Array.from(s.q) }], WHO);
        // Most points sealed (the head keeps what did not fill a chunk), so renders read chunks and the head.
        const total = Number(s.ts[n - 1] - s.ts[0]);
        const start = s.ts[0] + BigInt(Math.floor(total * fromFrac)), end = start + BigInt(Math.max(1, Math.floor(total * lenFrac)));
        const sp = store.read((v) => renderSeries(v, id, { startNs: start, endNs: end, width, mode: 'significant-points' })) as SignificantPoints;
        const band = store.read((v) => renderSeries(v, id, { startNs: start, endNs: end, width, mode: 'minmax-band', stat: 'count' })) as MinMaxBand;
        const cols = reference(s, start, end, width);
        const want = referencePoints(s, cols, start, end);
        runs++;
        groupsDecoded += sp.groupsDecoded;
        if (sp.groupsDecoded > 0) straddled++;
        if (want.ts.length !== sp.count) return false;
        for (let i = 0; i < sp.count; i++) if (want.ts[i] !== sp.tNs[i] || !Object.is(want.v[i], sp.v[i])) return false;
        for (let c = 0; c < width; c++) {
          const r = cols[c];
          const lo = r.n ? s.v[r.lo] : NaN, hi = r.n ? s.v[r.hi] : NaN;
          if (!Object.is(band.vMin[c], lo) || !Object.is(band.vMax[c], hi) || band.vStat![c] !== r.n) return false;
        }
        const pg = referenceGood(s, start, end);
        return Math.abs(sp.percentGood - pg) < 1e-9 && Math.abs(band.percentGood - pg) < 1e-9;
      },
    ),
    { seed: SEED, numRuns: 60 },
  );
  // Chunks cut by the range's ends are decoded whole; the others took the group path
  // (wandering) or the run-length path (stepping: no directory, no group decoded).
  if (stepping) t.equal(groupsDecoded, 0, 'run-length chunks carry no directory');
  else t.ok(straddled >= 10, `renders that decoded only boundary groups: ${straddled} of ${runs} (${groupsDecoded} groups)`);
});

t.test('a chunk inside one column with quality faults is answered from its header and summary', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 1000 } });
  const s = makeSeries(5000, 77);
  for (let i = 1200; i < 1300; i++) s.q[i] = 0;
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.write([{ series: id, times: BigInt64Array.from(s.ts), values: Float64Array.from(s.v), quality: Uint32Array.from(s.q) }], WHO);
  await store.sealHeads();
  const start = s.ts[0], end = s.ts[4999] + 1n;
  const sp = store.read((v) => renderSeries(v, id, { startNs: start, endNs: end, width: 2, mode: 'significant-points' })) as SignificantPoints;
  t.ok(sp.chunksFromHeaders >= 3, `${sp.chunksFromHeaders} of 5 chunks from headers, faults included`);
  t.ok(Math.abs(sp.percentGood - referenceGood(s, start, end)) < 1e-9, 'percent good equals the time-weighted reference');
  const want = referencePoints(s, reference(s, start, end, 2), start, end);
  t.same([...sp.tNs], want.ts, 'the same significant points as every raw point gives');
});
