// Engine-level figures of src/storage on the shared industrial dataset.
//   node --import tsx bench/storage-engine.ts [--series 1000] [--points 10000] [--big-points 10000000]
//        [--in-flight 2] [--render-runs 50] [--idle-series 200] [--idle-periods 300]
//        [--cpu-profile fleet-write.cpuprofile] [--json]
// --in-flight: write calls outstanding at once (1 = each call awaits the previous one's
// durability; 2 = like the ingest pipeline's commitsInFlight: the next group is applied
// while the previous one is synced). Every call still resolves only once durable.
// --cpu-profile: a V8 CPU profile of the fleet write phase only (not generation or reads).
// Inputs are generated (seeded, deterministic) before any timing. Prints a table, or one
// JSON object with --json. Figures: durable write points/s through the write path; bytes
// per point on disk after the load and after sealing every head: the env file (LMDB's
// high-water mark), the live pages (file minus LMDB free pages), a compacted copy
// (`compactCopy`, what a maintenance compaction leaves), a repacked copy (`repackCopy`: every
// table rewritten in key order, leaf pages full), and the sum of chunk bytes;
// render p50/p99 of the big series at width 1000, rollup read latency; and idle seals:
// --idle-series tags that report one point per 15 minutes (report by exception, manual
// entries), each head sealed by an idle seal between two of its points, for --idle-periods
// periods: chunks per series and bytes per point of that store.
// "Everything included" = every table (chunks, tail packs, head records and segments, rollups, audit,
// meta), LMDB's branch/leaf pages, overflow-page rounding and its own free-list tree.
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries } from '../../shared/datasets/industrial.mjs';
import { SeriesStore, listChunks, readRollups, renderSeries, type PointBatch } from '../src/storage/series-store.js';
import type { ValueType } from '../src/storage/encoding/chunk-types.js';
import { sealTally } from '../src/storage/seal.js';
import { parsePackRef } from '../src/storage/tail-packs.js';
import { chunkKey, seriesKey } from '../src/storage/keys.js';
import { repackCopy } from '../src/storage/repack-copy.js';
import { largestInlineValue, overflowPagesOf } from '../src/storage/series-env.js';

interface DatasetSeries { index: number; kind: string; name: string; type: ValueType; points(): Iterable<[bigint, unknown, number]> }

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : dflt; };
const SERIES = opt('series', 1000), POINTS = opt('points', 10_000), BIG = opt('big-points', 10_000_000);
const JSON_OUT = args.includes('--json');
const IN_FLIGHT = opt('in-flight', 2);
const RENDER_RUNS = opt('render-runs', 50);
const IDLE_SERIES = opt('idle-series', 200), IDLE_PERIODS = opt('idle-periods', 300);
const PROFILE = (() => { const i = args.indexOf('--cpu-profile'); return i >= 0 ? args[i + 1] : null; })();
const WRITE_SLICE = 1000; // points per series per write call: one call carries every series
const log = (s: string) => { if (!JSON_OUT) process.stderr.write(s + '\n'); };

interface Columns { id: string; type: ValueType; times: BigInt64Array; values: PointBatch['values']; quality: Uint32Array }

function columnsOf(s: DatasetSeries, n: number): Columns {
  const times = new BigInt64Array(n), quality = new Uint32Array(n);
  const f64 = s.type === 'float64' ? new Float64Array(n) : null, i64 = s.type === 'int64' ? new BigInt64Array(n) : null;
  const u8 = s.type === 'boolean' ? new Uint8Array(n) : null, ord = s.type === 'enum' ? new Int32Array(n) : null;
  const str: string[] | null = s.type === 'string' ? [] : null;
  let k = 0;
  for (const [ts, v, q] of s.points()) {
    times[k] = ts; quality[k] = q;
    if (f64) f64[k] = v as number; else if (i64) i64[k] = BigInt(v as number); else if (u8) u8[k] = v ? 1 : 0;
    else if (ord) ord[k] = (v as { ordinal: number }).ordinal; else str!.push(v as string);
    k++;
  }
  const cut = <T extends { subarray(a: number, b: number): T }>(a: T) => a.subarray(0, k);
  return { id: randomUUID(), type: s.type, times: cut(times), quality: cut(quality), values: f64 ? cut(f64) : i64 ? cut(i64) : u8 ? cut(u8) : ord ? cut(ord) : str! };
}

const slice = (c: Columns, a: number, b: number): PointBatch => ({
  series: c.id, times: c.times.subarray(a, b), quality: c.quality.subarray(a, b),
  values: Array.isArray(c.values) ? c.values.slice(a, b) : (c.values as Float64Array).subarray(a, b),
});

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

async function compactedBytes(store: SeriesStore, root: string, name: string): Promise<number> {
  const dir = join(root, `${name}-compact`);
  const size = (await stat(await store.compactCopy(dir))).size;
  await rm(dir, { recursive: true, force: true });
  return size;
}

/** Bytes of a copy with every table rewritten in key order (repack-copy.ts: packed leaf pages). */
async function repackedBytes(store: SeriesStore, root: string, name: string): Promise<number> {
  const dir = join(root, `${name}-repacked`);
  const size = (await stat(await repackCopy(store.env, dir))).size;
  await rm(dir, { recursive: true, force: true });
  return size;
}

async function disk(store: SeriesStore, root: string, name: string, points: number, out: Record<string, number | string>, prefix: string) {
  const d = await store.diskUsage();
  out[`${prefix}file_bytes`] = d.fileBytes;
  out[`${prefix}live_bytes`] = d.liveBytes;
  out[`${prefix}bytes_per_point_file`] = +(d.fileBytes / points).toFixed(3);
  out[`${prefix}bytes_per_point_live`] = +(d.liveBytes / points).toFixed(3);
  if (prefix.endsWith('sealed_')) {
    out[`${prefix}bytes_per_point_compacted`] = +((await compactedBytes(store, root, name)) / points).toFixed(3);
    out[`${prefix}bytes_per_point_repacked`] = +((await repackedBytes(store, root, name)) / points).toFixed(3);
    for (const [table, bytes] of Object.entries(d.tables)) out[`${prefix}table_${table}_bytes_per_point`] = +(bytes / points).toFixed(4);
    // pages by kind (branch/leaf/overflow) and entries: leaf fill shows here, not in the bytes
    for (const [table, p] of Object.entries(d.tablePages)) if (p.entries > 0) out[`${prefix}table_${table}_pages`] = `${p.branch}b/${p.leaf}l/${p.overflow}o/${p.entries}e`;
  }
}

async function create(store: SeriesStore, c: Columns) {
  await store.createSeries({ id: c.id, type: c.type, writableClass: 'collector', ...(c.type === 'enum' ? { enumSet: { id: 'machine-state', ordinals: [0, 1, 2, 3, 4, 5] } } : {}) });
}

/** Tags writing one point per idle period: every head is sealed whole between two of its points. */
async function idleSeals(root: string, out: Record<string, number | string>): Promise<void> {
  log(`idle seals: ${IDLE_SERIES} tags x ${IDLE_PERIODS} periods of 15 min ...`);
  const PERIOD_NS = 900_000_000_000n;
  const tags = (datasetSeries({ series: IDLE_SERIES, points: IDLE_PERIODS }) as DatasetSeries[]).map((s) => columnsOf(s, IDLE_PERIODS));
  // the dataset's values and jitter, one period apart (its outages leave some tags shorter)
  for (const c of tags) { const t0 = c.times[0]; for (let i = 0; i < c.times.length; i++) c.times[i] = t0 + BigInt(i) * PERIOD_NS + (c.times[i] - t0) % 1_000_000_000n; }
  const store = SeriesStore.open(join(root, 'idle'));
  for (const c of tags) await create(store, c);
  const s0 = performance.now();
  for (let i = 0; i < IDLE_PERIODS; i++) {
    await store.write(tags.filter((c) => i < c.times.length).map((c) => slice(c, i, i + 1)), { principal: 'bench' });
    await store.sealHeads(0);
  }
  out.idle_seal_period_ms = +((performance.now() - s0) / IDLE_PERIODS).toFixed(2);
  const points = tags.reduce((a, c) => a + c.times.length, 0);
  let chunks = 0;
  for (const c of tags) chunks += store.read((v) => listChunks(v, c.id, { startNs: c.times[0], endNs: c.times[c.times.length - 1] + 1n })).length;
  out.idle_points = points;
  out.idle_chunks_per_series = +(chunks / tags.length).toFixed(2);
  await disk(store, root, 'idle', points, out, 'idle_sealed_');
  await store.close();
}

async function main() {
  const root = await mkdtemp(join(tmpdir(), 'bench-storage-'));
  const out: Record<string, number | string> = { series: SERIES, points_per_series: POINTS, big_series_points: BIG };
  try {
    log(`generating ${SERIES} x ${POINTS} points ...`);
    const cols = (datasetSeries({ series: SERIES, points: POINTS }) as DatasetSeries[]).map((s) => columnsOf(s, POINTS));
    const total = cols.reduce((a, c) => a + c.times.length, 0);
    const dir = join(root, 'fleet');
    const store = SeriesStore.open(dir);
    for (const c of cols) await create(store, c);
    log(`writing ${total} points ...`);
    const session = PROFILE ? new Session() : null;
    if (session) { session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.start'); }
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const inFlight = new Set<Promise<void>>();
    for (let a = 0; a < POINTS; a += WRITE_SLICE) {
      const p: Promise<void> = store.write(cols.map((c) => slice(c, a, Math.min(c.times.length, a + WRITE_SLICE))), { principal: 'bench' })
        .then((r) => { if (r.refused) throw new Error(`refused ${r.refused}`); })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      // the second call joins the queue while the first group runs, so groups alternate
      if (a === 0 && IN_FLIGHT > 1) await new Promise((r) => setTimeout(r, 5));
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    const writeMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    out.write_cpu_s_per_million_points = +(((cpu.user + cpu.system) / 1e6) / (total / 1e6)).toFixed(3);
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(PROFILE!, JSON.stringify(profile));
      session.disconnect();
    }
    out.in_flight = IN_FLIGHT;
    out.write_points = total;
    out.write_points_per_s = Math.round(total / (writeMs / 1000));
    out.write_ms = Math.round(writeMs);
    out.head_cache_loads = store.headCacheStats().loads;
    // the writer's cached head columns, in points, with the fleet open and once every head is sealed
    out.head_cache_points_open = store.headCacheStats().points;
    await disk(store, root, 'fleet', total, out, 'loaded_');
    const t1 = performance.now();
    await store.sealHeads();
    const sealMs = performance.now() - t1;
    out.head_cache_points_sealed = store.headCacheStats().points;
    // where the chunk table's pages go: full chunks (each an overflow value) and each
    // series' last chunk; a value above inlineMax bytes takes overflowPagesOf(len) pages.
    // A last chunk in a tail pack takes none of its own: last_chunk_overflow_pages_per_point
    // is what the last chunks would take stored alone, the tail-packs table what they take.
    const pageSize = store.env.pageSize, inlineMax = largestInlineValue(pageSize);
    let chunkBytes = 0, fullBytes = 0, fullPages = 0, lastBytes = 0, lastPages = 0, lastInline = 0, lastPacked = 0;
    for (const c of cols) {
      const list = store.read((v) => listChunks(v, c.id, { startNs: c.times[0], endNs: c.times[c.times.length - 1] + 1n })).filter((ch) => ch.sealed);
      list.forEach((ch, i) => {
        chunkBytes += ch.bytes;
        const pages = ch.bytes > inlineMax ? overflowPagesOf(ch.bytes, pageSize) : 0;
        if (i < list.length - 1) { fullBytes += ch.bytes; fullPages += pages; } else { lastBytes += ch.bytes; lastPages += pages; if (pages === 0) lastInline++; }
      });
      const last = list[list.length - 1];
      if (last !== undefined && parsePackRef(store.env.chunks.get(chunkKey(seriesKey(c.id), last.startNs)) ?? Buffer.alloc(0)) !== null) lastPacked++;
    }
    out.seal_encodes_per_chunk = +(sealTally.encodes / Math.max(1, sealTally.chunks)).toFixed(3);
    out.full_chunk_page_fill = +(fullBytes / (fullPages * pageSize)).toFixed(4);
    out.last_chunk_bytes_avg = Math.round(lastBytes / cols.length);
    out.last_chunk_overflow_pages_per_point = +((lastPages * pageSize) / total).toFixed(4);
    out.last_chunks_inline = lastInline;
    out.last_chunks_packed = lastPacked;
    out.seal_remaining_heads_ms = Math.round(sealMs);
    await disk(store, root, 'fleet', total, out, 'sealed_');
    out.bytes_per_point_chunks = +(chunkBytes / total).toFixed(3);
    // rollup read latency: one day of 1 h buckets of one series, 200 reads over random series
    const lat: number[] = [];
    for (let i = 0; i < 200; i++) {
      const c = cols[(i * 7919) % cols.length];
      const s = performance.now();
      store.read((v) => readRollups(v, c.id, { interval: '1h', startNs: c.times[0], endNs: c.times[0] + 86_400_000_000_000n, continuity: 'continuous' }));
      lat.push(performance.now() - s);
    }
    out.rollup_read_p50_ms = +pct(lat, 0.5).toFixed(3);
    out.rollup_read_p99_ms = +pct(lat, 0.99).toFixed(3);
    await store.close();

    if (IDLE_SERIES > 0 && IDLE_PERIODS > 0) await idleSeals(root, out);
    if (BIG > 0) {
      log(`generating one series of ${BIG} points ...`);
      const big = columnsOf((datasetSeries({ series: 1, points: BIG }) as DatasetSeries[])[0], BIG);
      const bdir = join(root, 'big');
      const bs = SeriesStore.open(bdir);
      await create(bs, big);
      const b0 = performance.now();
      const bc0 = process.cpuUsage();
      for (let a = 0; a < big.times.length; a += 100_000) await bs.write([slice(big, a, Math.min(big.times.length, a + 100_000))], { principal: 'bench' });
      out.big_write_points_per_s = Math.round(big.times.length / ((performance.now() - b0) / 1000));
      { const c = process.cpuUsage(bc0); out.big_write_cpu_s_per_million_points = +(((c.user + c.system) / 1e6) / (big.times.length / 1e6)).toFixed(3); }
      await bs.sealHeads();
      await disk(bs, root, 'big', big.times.length, out, 'big_sealed_');
      const q = { startNs: big.times[0], endNs: big.times[big.times.length - 1] + 1n, width: 1000 };
      const rt: number[] = [], bt: number[] = [];
      let last: ReturnType<typeof renderSeries> | null = null;
      for (let i = 0; i < RENDER_RUNS + 10; i++) {
        const s = performance.now();
        last = bs.read((v) => renderSeries(v, big.id, { ...q, mode: 'significant-points' }));
        rt.push(performance.now() - s);
        const s2 = performance.now();
        bs.read((v) => renderSeries(v, big.id, { ...q, mode: 'minmax-band' }));
        bt.push(performance.now() - s2);
      }
      rt.splice(0, 10); bt.splice(0, 10); // warm-up
      out.render_sig_p50_ms = +pct(rt, 0.5).toFixed(2);
      out.render_sig_p99_ms = +pct(rt, 0.99).toFixed(2);
      out.render_band_p50_ms = +pct(bt, 0.5).toFixed(2);
      out.render_band_p99_ms = +pct(bt, 0.99).toFixed(2);
      out.render_chunks_from_headers = last!.chunksFromHeaders;
      out.render_chunks_decoded = last!.chunksDecoded;
      await bs.close();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  if (JSON_OUT) process.stdout.write(JSON.stringify(out) + '\n');
  else for (const [k, v] of Object.entries(out)) process.stdout.write(`${k.padEnd(30)} ${v}\n`);
}

await main();
