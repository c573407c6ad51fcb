// Render of one big series at a fixed width, engine only (no HTTP), with a breakdown.
//   node --import tsx bench/render.ts [--index 6] [--points 10000000] [--width 1000]
//                                     [--runs 60] [--dir /tmp/render-bench] [--rebuild] [--json]
// Series `index` of the shared dataset (seed 1) goes through the write path once into
// `<dir>-<index>-<points>` and is reused by later runs (pass --rebuild after a codec change).
// Index 0 (what bench/storage-engine.ts renders) is a 0.1-resolution analog that costs
// ~0.41 B/pt (~9,400 points per chunk); index 6 (0.001 resolution, scale 100) ~1.5 B/pt
// (~2,600 points per chunk): the harder case, with ~4x the chunks and as many straddling.
// Figures: p50/p99 wall and CPU per render for both modes and for a band with stat=count,
// and the pieces: LMDB iteration alone, iteration + header parse.
import { existsSync } from 'node:fs';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries } from '../../shared/datasets/industrial.mjs';
import { SeriesStore, listChunks, renderSeries, type PointBatch, type RenderQuery } from '../src/storage/series-store.js';
import { chunkKey, INT64_MAX, INT64_MIN, seriesKey } from '../src/storage/keys.js';
import { readChunkHeader } from '../src/storage/encoding/chunk.js';

interface DatasetSeries { kind: string; name: string; type: 'float64'; points(): Iterable<[bigint, number, number]> }

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : dflt; };
const sopt = (name: string, dflt: string) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : dflt; };
const INDEX = opt('index', 6), POINTS = opt('points', 10_000_000), WIDTH = opt('width', 1000), RUNS = opt('runs', 60);
const DIR = `${sopt('dir', '/tmp/render-bench')}-${INDEX}-${POINTS}`;
const JSON_OUT = args.includes('--json');
const log = (s: string) => { if (!JSON_OUT) process.stderr.write(s + '\n'); };
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

interface Built { id: string; startNs: string; endNs: string; points: number; kind: string }

async function build(): Promise<Built> {
  await rm(DIR, { recursive: true, force: true });
  const s = (datasetSeries({ series: INDEX + 1, points: POINTS }) as DatasetSeries[])[INDEX];
  if (s.type !== 'float64') throw new Error(`series ${INDEX} is ${s.kind}, pick a float64 one`);
  log(`generating ${s.name} (${s.kind}), ${POINTS} points ...`);
  const times = new BigInt64Array(POINTS), values = new Float64Array(POINTS), quality = new Uint32Array(POINTS);
  let n = 0;
  for (const [ts, v, q] of s.points()) { times[n] = ts; values[n] = v; quality[n] = q; n++; }
  const store = SeriesStore.open(DIR);
  const id = randomUUID();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  log(`writing ${n} points ...`);
  for (let a = 0; a < n; a += 100_000) {
    const b = Math.min(n, a + 100_000);
    const batch: PointBatch = { series: id, times: times.subarray(a, b), values: values.subarray(a, b), quality: quality.subarray(a, b) };
    await store.write([batch], { principal: 'bench' });
  }
  await store.sealHeads();
  await store.close();
  const built = { id, startNs: String(times[0]), endNs: String(times[n - 1] + 1n), points: n, kind: s.name };
  await writeFile(join(DIR, 'bench.json'), JSON.stringify(built));
  return built;
}

function time(fn: () => void): { wall: number[]; cpu: number[] } {
  const wall: number[] = [], cpu: number[] = [];
  for (let i = 0; i < RUNS + 10; i++) {
    const c0 = process.cpuUsage(), w0 = performance.now();
    fn();
    const w = performance.now() - w0, c = process.cpuUsage(c0);
    if (i >= 10) { wall.push(w); cpu.push((c.user + c.system) / 1000); } // first 10: warm-up
  }
  return { wall, cpu };
}

async function main() {
  const built: Built = !args.includes('--rebuild') && existsSync(join(DIR, 'bench.json')) ? JSON.parse(await readFile(join(DIR, 'bench.json'), 'utf8')) : await build();
  const store = SeriesStore.open(DIR);
  const startNs = BigInt(built.startNs), endNs = BigInt(built.endNs);
  const chunks = store.read((v) => listChunks(v, built.id, { startNs, endNs }));
  const chunkBytes = chunks.reduce((a, c) => a + c.bytes, 0);
  const out: Record<string, number | string> = {
    series: built.kind, points: built.points, width: WIDTH, chunks: chunks.length,
    bytes_per_point_chunks: +(chunkBytes / built.points).toFixed(4),
    bytes_per_point_env: +((await stat(join(DIR, 'data.mdb'))).size / built.points).toFixed(4),
  };
  const key = seriesKey(built.id);
  const lo = chunkKey(key, INT64_MIN), hi = chunkKey(key, INT64_MAX);
  const figures = (name: string, r: { wall: number[]; cpu: number[] }) => {
    out[`${name}_p50_ms`] = +pct(r.wall, 0.5).toFixed(2);
    out[`${name}_p99_ms`] = +pct(r.wall, 0.99).toFixed(2);
    out[`${name}_cpu_p50_ms`] = +pct(r.cpu, 0.5).toFixed(2);
  };
  figures('iterate', time(() => store.read((v) => { let b = 0; for (const { value } of v.env.chunks.getRange({ start: lo, end: hi, transaction: v.txn })) b += value.length; return b; })));
  figures('iterate_headers', time(() => store.read((v) => { let c = 0; for (const { value } of v.env.chunks.getRange({ start: lo, end: hi, transaction: v.txn })) c += readChunkHeader(value).count; return c; })));
  const q = (mode: RenderQuery['mode'], stat?: RenderQuery['stat']): RenderQuery => ({ startNs, endNs, width: WIDTH, mode, stat });
  let last: ReturnType<typeof renderSeries> | null = null;
  figures('render_sig', time(() => { last = store.read((v) => renderSeries(v, built.id, q('significant-points'))); }));
  out.chunks_from_headers = last!.chunksFromHeaders;
  out.chunks_decoded = last!.chunksDecoded;
  out.points_scanned = last!.pointsScanned;
  figures('render_band', time(() => store.read((v) => renderSeries(v, built.id, q('minmax-band')))));
  figures('render_band_count', time(() => store.read((v) => renderSeries(v, built.id, q('minmax-band', 'count')))));
  await store.close();
  if (JSON_OUT) process.stdout.write(JSON.stringify(out) + '\n');
  else for (const [k, v] of Object.entries(out)) process.stdout.write(`${k.padEnd(28)} ${v}\n`);
}

await main();
