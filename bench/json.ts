// Throughput of the JSON codec next to V8's JSON.parse / JSON.stringify on fixed bodies
// generated from a seed before timing, and of the raw-read point writers (JSON, msgpack
// rows, msgpack columns, JSON columns) on 1M points of the shared dataset's first float64 series, cut in
// chunk-sized runs as the raw task sees them: points per CPU-second of this thread.
// Run: node --import tsx bench/json.ts [--json]
import { parseJson, stringifyJson } from '../src/json/json.js';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries } from '../../shared/datasets/industrial.mjs';
import { BodySink } from '../src/body-sink.js';
import { writeJsonPoints } from '../src/workers/raw-points-json.js';
import { writeMsgpackPoints } from '../src/workers/raw-points-msgpack.js';
import { ColumnPage } from '../src/workers/raw-points-columns.js';
import { JsonColumnPage, putCount, reserveCount } from '../src/workers/raw-columns-json.js';
import { EnumMemberText } from '../src/workers/enum-member-text.js';
import { allocColumns } from '../src/storage/point-runs.js';
import { MAX_CHUNK_POINTS } from '../src/storage/encoding/chunk.js';
import type { PointColumns } from '../src/storage/encoding/chunk-types.js';
import { mulberry32 } from './seeded-random.js';

const SEED = 20240611;

/** A model-listing style body: objects with uuids, names, paths, numbers, flags, small arrays. */
function apiBody(targetBytes: number): string {
  const rnd = mulberry32(SEED);
  const hex = () => Math.floor(rnd() * 0xffffffff).toString(16).padStart(8, '0');
  const items: unknown[] = [];
  let size = 0;
  while (size < targetBytes) {
    const item = {
      attribute_id: `${hex()}-${hex().slice(0, 4)}-4${hex().slice(0, 3)}-8${hex().slice(0, 3)}-${hex()}${hex().slice(0, 4)}`,
      name: `Pump ${Math.floor(rnd() * 1000)} discharge pressure`,
      path: `/site/area ${Math.floor(rnd() * 20)}/unit ${Math.floor(rnd() * 50)}`,
      continuity_class: rnd() < 0.5 ? 'continuous' : 'stepped',
      retired: rnd() < 0.1,
      tx_id: Math.floor(rnd() * 1e9),
      limits: { lo: Math.round(rnd() * 1000) / 10, hi: Math.round(rnd() * 10000) / 10 },
      overridden_fields: rnd() < 0.3 ? ['name', 'display_unit_id'] : [],
      display_unit_id: null,
    };
    size += JSON.stringify(item).length + 1;
    items.push(item);
  }
  return JSON.stringify({ items, cursor: null });
}

/** A point-write body: ns timestamps beyond 2^53, so the exact (bigint) path runs. */
function pointsBody(targetBytes: number): string {
  const rnd = mulberry32(SEED + 1);
  const parts: string[] = [];
  let t = 1700000000123456789n;
  let size = 0;
  while (size < targetBytes) {
    t += BigInt(1_000_000 + Math.floor(rnd() * 1000));
    const p = `{"t":${t},"v":${(rnd() * 100).toFixed(3)},"q":192}`;
    parts.push(p);
    size += p.length + 1;
  }
  return `{"series":"0b6c8f5e-3c1a-4d2b-9a7e-1f2e3d4c5b6a","points":[${parts.join(',')}]}`;
}

function time(fn: () => void, bytes: number): number {
  for (let i = 0; i < 10; i++) fn(); // warm up
  const runs: number[] = [];
  for (let r = 0; r < 21; r++) {
    const t0 = process.hrtime.bigint();
    fn();
    runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  runs.sort((a, b) => a - b);
  const ms = runs[10]; // median of 21: the box is shared, the mean would carry the noise
  return bytes / 1e6 / (ms / 1000);
}

const results: Record<string, { bytes: number; candidate_mb_s: number; baseline_mb_s: number; ratio: number }> = {};

function row(name: string, bytes: number, candidate: () => void, baseline: () => void): void {
  const c = time(candidate, bytes);
  const b = time(baseline, bytes);
  results[name] = { bytes, candidate_mb_s: round(c), baseline_mb_s: round(b), ratio: round(b / c) };
}

const round = (x: number) => Math.round(x * 100) / 100;

const api = apiBody(1 << 20);
const apiBuf = Buffer.from(api);
const points = pointsBody(1 << 20);
const pointsBuf = Buffer.from(points);
const apiValue = parseJson(apiBuf);
const pointsValue = parseJson(pointsBuf);
const pointsAsNumbers = JSON.parse(points) as unknown;

row('parse api body (fast path)', apiBuf.length, () => parseJson(apiBuf), () => JSON.parse(apiBuf.toString('utf8')));
row('parse points body (exact bigint path)', pointsBuf.length, () => parseJson(pointsBuf), () => JSON.parse(pointsBuf.toString('utf8')));
row('stringify api body', apiBuf.length, () => stringifyJson(apiValue), () => JSON.stringify(apiValue));
row('stringify points body (bigint vs number)', pointsBuf.length, () => stringifyJson(pointsValue), () => JSON.stringify(pointsAsNumbers));

/** 1M float64 points of the dataset as decoded chunk columns of MAX_CHUNK_POINTS each. */
function datasetRuns(n: number): PointColumns[] {
  const s = (datasetSeries({ series: 1000, points: n }) as Array<{ type: string; points(): Iterable<[bigint, number, number]> }>).find((x) => x.type === 'float64')!;
  const runs: PointColumns[] = [];
  let c: PointColumns | null = null;
  for (const [ts, v, q] of s.points()) {
    if (!c || c.count === MAX_CHUNK_POINTS) { c = allocColumns('float64', MAX_CHUNK_POINTS, ts); runs.push(c); }
    c.tsOffset[c.count] = Number(ts - c.tsBase); c.f64![c.count] = v; c.quality[c.count] = q; c.count++;
  }
  return runs;
}

/** The same times as enum points: seeded ordinals 0..3 held for runs of 1..50 points (a state tag). */
function enumRuns(from: PointColumns[]): PointColumns[] {
  const rnd = mulberry32(SEED + 1);
  let o = 0, left = 0;
  return from.map((f) => {
    const c = allocColumns('enum', MAX_CHUNK_POINTS, f.tsBase);
    for (let i = 0; i < f.count; i++) {
      if (left-- <= 0) { o = Math.floor(rnd() * 4); left = 1 + Math.floor(rnd() * 50); }
      c.tsOffset[i] = f.tsOffset[i]; c.ord![i] = o; c.quality[i] = f.quality[i];
    }
    c.count = f.count;
    return c;
  });
}
const ENUM_SET_ID = '0b6c5a1e-8f61-4a53-9d4a-2f1f3c4e5d6f';
const MEMBER_NAMES = { 0: 'stopped', 1: 'running', 2: 'starting', 3: 'tripped' };

/** Median points per CPU-second of the thread over 11 runs (after 3 warm-up runs), and bytes per point. */
function writerRate(runs: PointColumns[], write: (sink: BodySink) => void): { points_per_cpu_s: number; bytes_per_point: number } {
  const points = runs.reduce((a, c) => a + c.count, 0);
  const sink = new BodySink(64 << 20);
  for (let i = 0; i < 3; i++) { sink.reset(); write(sink); }
  const rates: number[] = [];
  for (let r = 0; r < 11; r++) {
    sink.reset();
    const c0 = process.cpuUsage();
    write(sink);
    const c = process.cpuUsage(c0);
    rates.push(points / ((c.user + c.system) / 1e6));
  }
  rates.sort((a, b) => a - b);
  return { points_per_cpu_s: Math.round(rates[5]), bytes_per_point: round(sink.pos / points) };
}

const runs = datasetRuns(1_000_000);
const columnPage = new ColumnPage();
const jsonColumnPage = new JsonColumnPage();
const writers = {
  'raw points JSON': writerRate(runs, (sink) => { let first = true; for (const c of runs) { writeJsonPoints(sink, c, 0, c.count, first, '""'); first = false; } }),
  'raw points msgpack rows': writerRate(runs, (sink) => { for (const c of runs) writeMsgpackPoints(sink, c, 0, c.count, ''); }),
  'raw points msgpack columns': writerRate(runs, (sink) => { columnPage.begin(sink, 'float64', 1_000_000); for (const c of runs) columnPage.append(c, 0, c.count); columnPage.finish(); }),
  // framed as the raw task frames it: the count's field kept before the page, filled after (and the page moved back to it)
  'raw points JSON columns': writerRate(runs, (sink) => {
    sink.ascii('{"count":'); const countAt = reserveCount(sink); sink.ascii(',"points":{"ts_ns":[');
    jsonColumnPage.begin(sink); for (const c of runs) jsonColumnPage.append(c, 0, c.count); jsonColumnPage.finish(); putCount(sink, countAt, jsonColumnPage.count); jsonColumnPage.end();
  }),
  // Enum series (same times, seeded ordinals): without and with each point's member name.
  ...(() => {
    const e = enumRuns(runs);
    const idJson = JSON.stringify(ENUM_SET_ID);
    const jsonNames = new EnumMemberText(ENUM_SET_ID, MEMBER_NAMES, 'json'), mpNames = new EnumMemberText(ENUM_SET_ID, MEMBER_NAMES, 'msgpack');
    return {
      'raw points JSON enum': writerRate(e, (sink) => { let first = true; for (const c of e) { writeJsonPoints(sink, c, 0, c.count, first, idJson); first = false; } }),
      'raw points JSON enum + member': writerRate(e, (sink) => { let first = true; for (const c of e) { writeJsonPoints(sink, c, 0, c.count, first, idJson, jsonNames); first = false; } }),
      'raw points msgpack rows enum': writerRate(e, (sink) => { for (const c of e) writeMsgpackPoints(sink, c, 0, c.count, ENUM_SET_ID); }),
      'raw points msgpack rows enum + member': writerRate(e, (sink) => { for (const c of e) writeMsgpackPoints(sink, c, 0, c.count, ENUM_SET_ID, mpNames); }),
    };
  })(),
};

if (process.argv.includes('--json')) {
  console.log(JSON.stringify({ bench: 'json', seed: SEED, node: process.version, results, writers }));
} else {
  console.log(`seed ${SEED}, node ${process.version}; baseline = JSON.parse(buf.toString()) / JSON.stringify; ratio = baseline speed / ours`);
  console.table(Object.fromEntries(Object.entries(results).map(([k, v]) => [k, { KiB: Math.round(v.bytes / 1024), 'ours MB/s': v.candidate_mb_s, 'V8 MB/s': v.baseline_mb_s, 'x slower': v.ratio }])));
  console.log('raw-read point writers, 1M float64 points of the shared dataset, and the same times as enum points (median of 11, CPU time of this thread):');
  console.table(Object.fromEntries(Object.entries(writers).map(([k, v]) => [k, { 'M points/CPU-s': round(v.points_per_cpu_s / 1e6), 'bytes/point': v.bytes_per_point }])));
}
