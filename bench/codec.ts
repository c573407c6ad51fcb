// Chunk codec benchmark on the shared industrial dataset.
//
//   node --import tsx bench/codec.ts [--series 1000] [--points 10000] [--seed 1]
//                                    [--budget 4000] [--json]
//
// Generates the dataset (seeded) before timing, seals each series into chunks as the
// engine does (encodeChunkPrefix at the byte budget, MAX_CHUNK_POINTS cap), then reports
// bytes per point per kind and in total (raw chunk bytes, and a model of LMDB pages),
// encode and decode points/s on one thread, and, for the record of design choices, the
// size of alternatives: other timestamp layouts and deflate over whole chunks.

import os from 'node:os';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ChunkWriter } from '../src/storage/encoding/byte-io.js';
import {
  CHUNK_BYTE_BUDGET, decodeChunk, decodeNumericInto, encodeChunkPrefix, MAX_CHUNK_POINTS,
} from '../src/storage/encoding/chunk.js';
import { sectionOffsets } from '../src/storage/encoding/chunk-header.js';
import type { PointColumns, ValueType } from '../src/storage/encoding/chunk-types.js';
import { encodeIntColumn } from '../src/storage/encoding/int-column.js';
import { createPointColumns, slicePointColumns } from '../src/storage/encoding/point-columns.js';
import { SERIES_PAGE_SIZE, largestInlineValue, overflowPagesOf } from '../src/storage/series-env.js';

type DatasetValue = number | boolean | string | { enum_set: string; ordinal: number };
interface DatasetSeries {
  index: number;
  kind: string;
  name: string;
  type: ValueType;
  points(): Iterable<[bigint, DatasetValue, number]>;
}
interface DatasetModule {
  datasetSeries(o: { series: number; points: number; seed: number }): DatasetSeries[];
}

const args = process.argv.slice(2);
const opt = (name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const SERIES = opt('series', 1000);
const POINTS = opt('points', 10_000);
const SEED = opt('seed', 1);
const BUDGET = opt('budget', CHUNK_BYTE_BUDGET);
const JSON_OUT = args.includes('--json');
const log = (s: string): void => {
  if (!JSON_OUT) process.stdout.write(s + '\n');
};

const { datasetSeries } = (await import('../../shared/datasets/industrial.mjs' as string)) as DatasetModule;

function toColumns(s: DatasetSeries): PointColumns {
  const pts = [...s.points()];
  const cols = createPointColumns(s.type, pts.length);
  cols.count = pts.length;
  cols.tsBase = pts[0][0];
  for (let i = 0; i < pts.length; i++) {
    const [ts, v, q] = pts[i];
    cols.tsOffset[i] = Number(ts - cols.tsBase);
    cols.quality[i] = q;
    if (cols.f64) cols.f64[i] = v as number;
    else if (cols.i64) cols.i64[i] = BigInt(v as number);
    else if (cols.u8) cols.u8[i] = v ? 1 : 0;
    else if (cols.ord) cols.ord[i] = (v as { ordinal: number }).ordinal;
    else if (cols.str) cols.str[i] = v as string;
  }
  return cols;
}

/**
 * LMDB pages of a new series env (SERIES_PAGE_SIZE): values above largestInlineValue go to
 * their own overflow pages (overflowPagesOf). Smaller values sit in
 * leaf pages, counted here at their size plus key and node header (a lower bound: leaves
 * are rarely full).
 */
function modelledDiskBytes(len: number): number {
  const KEY = 24;
  const NODE = 8;
  if (len > largestInlineValue(SERIES_PAGE_SIZE, KEY)) return overflowPagesOf(len, SERIES_PAGE_SIZE) * SERIES_PAGE_SIZE + KEY + NODE + 8;
  return len + KEY + NODE + 2;
}

log(`generating ${SERIES} series x ${POINTS} points (seed ${SEED})...`);
const t0 = performance.now();
const dataset = datasetSeries({ series: SERIES, points: POINTS, seed: SEED }).map((s) => ({ s, cols: toColumns(s) }));
log(`generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

/**
 * CPU time of this thread's process since `from`, in ms. Reported next to wall time because
 * the box is shared: under load the wall clock counts time spent waiting for a core.
 */
function cpuMsSince(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

interface Chunked { kind: string; type: ValueType; chunks: Uint8Array[]; points: number }
/** Seals every series as the engine does; best of 3 passes (the machine is shared). */
function sealAll(): { sealed: Chunked[]; ms: number; cpuMs: number } {
  const sealed: Chunked[] = [];
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  for (const { s, cols } of dataset) {
    const chunks: Uint8Array[] = [];
    let at = 0;
    while (at < cols.count) {
      const { bytes, count } = encodeChunkPrefix(slicePointColumns(cols, at, cols.count - at), BUDGET);
      chunks.push(bytes);
      at += count;
    }
    sealed.push({ kind: s.kind, type: s.type, chunks, points: cols.count });
  }
  return { sealed, ms: performance.now() - start, cpuMs: cpuMsSince(cpu0) };
}
let { sealed, ms: encodeMs, cpuMs: encodeCpuMs } = sealAll();
for (let pass = 1; pass < 3; pass++) {
  const again = sealAll();
  if (again.ms < encodeMs) ({ sealed, ms: encodeMs } = again);
  encodeCpuMs = Math.min(encodeCpuMs, again.cpuMs);
}
const totalPoints = sealed.reduce((a, c) => a + c.points, 0);

interface KindRow { kind: string; series: number; points: number; chunks: number; bytes: number; disk: number; deflated: number; header: number; summary: number; times: number; values: number; quality: number }
const byKind = new Map<string, KindRow>();
let totalBytes = 0;
let totalDisk = 0;
let totalDeflated = 0;
let chunkCount = 0;
for (const c of sealed) {
  const row = byKind.get(c.kind) ?? { kind: c.kind, series: 0, points: 0, chunks: 0, bytes: 0, disk: 0, deflated: 0, header: 0, summary: 0, times: 0, values: 0, quality: 0 };
  row.series++;
  row.points += c.points;
  for (const b of c.chunks) {
    const d = deflateRawSync(b, { level: 6 }).length + 1;
    row.chunks++;
    row.bytes += b.length;
    // Section offsets from the header (FORMAT.md). "header" is the header's fields and the
    // trailer CRC; "summary" is render's summary, its padding and the header CRC (the same
    // split for every version: v1/v2 header fields are the fixed 100 bytes, v3's end where
    // its summary starts).
    const { timesAt, valuesAt, qualityAt, summaryAt } = sectionOffsets(b);
    const fieldsEnd = b[0] === 1 || b[0] === 2 ? 100 : summaryAt;
    row.header += fieldsEnd + 4;
    row.summary += timesAt - fieldsEnd;
    row.times += valuesAt - timesAt;
    row.values += qualityAt - valuesAt;
    row.quality += b.length - 4 - qualityAt;
    row.disk += modelledDiskBytes(b.length);
    row.deflated += Math.min(d, b.length + 1);
    chunkCount++;
    totalBytes += b.length;
    totalDisk += modelledDiskBytes(b.length);
    totalDeflated += Math.min(d, b.length + 1);
  }
  byKind.set(c.kind, row);
}

// Decode: every numeric chunk into reused columns, several rounds, after a warm-up.
const numeric = sealed.filter((c) => c.type !== 'string');
const numericPoints = numeric.reduce((a, c) => a + c.points, 0);
const outs = new Map<ValueType, PointColumns>();
for (const t of ['float64', 'int64', 'boolean', 'enum', 'string'] as ValueType[]) outs.set(t, createPointColumns(t, MAX_CHUNK_POINTS));
const tsOut = new Float64Array(MAX_CHUNK_POINTS);
const f64Out = new Float64Array(MAX_CHUNK_POINTS);

/** Best of several timed rounds: points/s by wall clock and by CPU time. */
interface Rate { wall: number; cpu: number }
function timeDecode(rounds: number, fn: (b: Uint8Array, t: ValueType) => number, set: Chunked[]): Rate {
  let decoded = 0;
  for (const c of set) for (const b of c.chunks) decoded += fn(b, c.type); // warm-up
  let best = Infinity;
  let bestCpu = Infinity;
  for (let r = 0; r < rounds; r++) {
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    for (const c of set) for (const b of c.chunks) decoded += fn(b, c.type);
    best = Math.min(best, performance.now() - start);
    bestCpu = Math.min(bestCpu, cpuMsSince(cpu0));
  }
  if (decoded === 0) throw new Error('nothing decoded');
  const points = set.reduce((a, c) => a + c.points, 0);
  return { wall: points / (best / 1000), cpu: points / (bestCpu / 1000) };
}
const rounds = Math.max(3, Math.min(10, Math.round(30_000_000 / Math.max(1, numericPoints))));
const decodeColumnsPps = timeDecode(rounds, (b, t) => decodeChunk(b, outs.get(t) as PointColumns), numeric);
const decodeNumericPps = timeDecode(rounds, (b) => decodeNumericInto(b, tsOut, f64Out), numeric);
const byType = new Map<ValueType, Rate>();
for (const t of ['float64', 'int64', 'boolean', 'enum', 'string'] as ValueType[]) {
  const set = sealed.filter((c) => c.type === t);
  if (set.length > 0) byType.set(t, timeDecode(3, (b, tt) => decodeChunk(b, outs.get(tt) as PointColumns), set));
}

// Alternatives for the timestamp column, over the same chunk boundaries (first 200 series).
const alt = { gridResidual: 0, deltaFor: 0, deltaOfDeltaFor: 0, points: 0 };
{
  const w = new ChunkWriter();
  const x = new Float64Array(MAX_CHUNK_POINTS);
  for (const { cols } of dataset.slice(0, 200)) {
    for (let at = 0; at < cols.count; at += 3600) {
      const n = Math.min(3600, cols.count - at);
      const o = cols.tsOffset;
      let unit = 0;
      const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
      for (let i = 1; i < n; i++) unit = gcd(o[at + i] - o[at], unit);
      unit ||= 1;
      const size = (fill: (i: number) => number): number => {
        for (let i = 0; i < n; i++) x[i] = fill(i);
        w.reset();
        encodeIntColumn(w, x, n);
        return w.pos;
      };
      const u = (i: number): number => (o[at + i] - o[at]) / unit;
      alt.deltaFor += size((i) => (i === 0 ? 0 : u(i) - u(i - 1)));
      alt.deltaOfDeltaFor += size((i) => (i < 2 ? u(i) : u(i) - 2 * u(i - 1) + u(i - 2)));
      // Period from the chunk's median delta (the codec refines it and handles gaps).
      const deltas = Float64Array.from({ length: n - 1 }, (_, i) => u(i + 1) - u(i)).sort();
      const p = deltas[(n - 1) >> 1];
      alt.gridResidual += size((i) => u(i) - i * p);
      alt.points += n;
    }
  }
}

// Inflate cost, for the "compress the whole chunk" option.
let inflateMs = 0;
{
  const sample = sealed.slice(0, 100).flatMap((c) => c.chunks.map((b) => deflateRawSync(b, { level: 6 })));
  const start = performance.now();
  for (const d of sample) inflateRawSync(d);
  inflateMs = performance.now() - start;
  const pts = sealed.slice(0, 100).reduce((a, c) => a + c.points, 0);
  inflateMs = (inflateMs / pts) * 1e6; // ns per point
}

const kinds = [...byKind.values()].sort((a, b) => b.series - a.series);
const result = {
  series: SERIES,
  pointsPerSeries: POINTS,
  points: totalPoints,
  budgetBytes: BUDGET,
  chunks: chunkCount,
  pointsPerChunk: totalPoints / chunkCount,
  bytesPerPoint: totalBytes / totalPoints,
  modelledDiskBytesPerPoint: totalDisk / totalPoints,
  deflatedBytesPerPoint: totalDeflated / totalPoints,
  encodePointsPerSec: totalPoints / (encodeMs / 1000),
  encodePointsPerCpuSec: totalPoints / (encodeCpuMs / 1000),
  loadAverage1m: os.loadavg()[0],
  decodeColumnsPointsPerSec: decodeColumnsPps,
  decodeNumericPointsPerSec: decodeNumericPps,
  decodeColumnsPointsPerSecByType: Object.fromEntries(byType),
  inflateNsPerPoint: inflateMs,
  kinds: Object.fromEntries(kinds.map((k) => [k.kind, { series: k.series, points: k.points, chunks: k.chunks, bytesPerPoint: k.bytes / k.points, headerBytesPerPoint: k.header / k.points, summaryBytesPerPoint: k.summary / k.points, timeBytesPerPoint: k.times / k.points, valueBytesPerPoint: k.values / k.points, qualityBytesPerPoint: k.quality / k.points, modelledDiskBytesPerPoint: k.disk / k.points, deflatedBytesPerPoint: k.deflated / k.points }])),
  timestampAlternativesBytesPerPoint: {
    gridResidual: alt.gridResidual / alt.points,
    deltaFor: alt.deltaFor / alt.points,
    deltaOfDeltaFor: alt.deltaOfDeltaFor / alt.points,
  },
};

if (JSON_OUT) {
  process.stdout.write(JSON.stringify(result) + '\n');
} else {
  const f = (x: number, d = 3): string => x.toFixed(d);
  const m = (x: number): string => `${(x / 1e6).toFixed(1)} M`;
  log('');
  log('kind        series   points      chunks  B/pt   disk B/pt  deflated B/pt | header summary times  values quality');
  for (const k of kinds) {
    const parts = [k.header, k.summary, k.times, k.values, k.quality].map((x) => f(x / k.points).padStart(6)).join(' ');
    log(`${k.kind.padEnd(11)} ${String(k.series).padStart(6)} ${String(k.points).padStart(9)} ${String(k.chunks).padStart(9)}  ${f(k.bytes / k.points)}  ${f(k.disk / k.points).padStart(9)}  ${f(k.deflated / k.points).padStart(13)} | ${parts}`);
  }
  log(`${'total'.padEnd(11)} ${String(SERIES).padStart(6)} ${String(totalPoints).padStart(9)} ${String(chunkCount).padStart(9)}  ${f(result.bytesPerPoint)}  ${f(result.modelledDiskBytesPerPoint).padStart(9)}  ${f(result.deflatedBytesPerPoint).padStart(13)}`);
  log('');
  log(`budget ${BUDGET} B, ${f(result.pointsPerChunk, 0)} points per chunk on average`);
  log(`single thread; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`);
  log('                                      points/s (wall)   points/CPU-s');
  const rate = (name: string, wall: number, cpu: number) => log(`${name.padEnd(38)}${m(wall).padStart(10)}   ${m(cpu).padStart(12)}`);
  rate('encode (seal at the budget)', result.encodePointsPerSec, result.encodePointsPerCpuSec);
  rate('decode numeric chunks into columns', decodeColumnsPps.wall, decodeColumnsPps.cpu);
  rate('decode numeric view (times + f64)', decodeNumericPps.wall, decodeNumericPps.cpu);
  for (const [t, pps] of byType) rate(`  decodeChunk ${t}`, pps.wall, pps.cpu);
  log(`inflate of deflated chunks            ${f(inflateMs, 1)} ns/point (extra)`);
  log('timestamp layouts alone (B/pt, 3600-point chunks, first 200 series, gaps included):');
  for (const [k, v] of Object.entries(result.timestampAlternativesBytesPerPoint)) log(`  ${k.padEnd(16)} ${f(v)}`);
}
