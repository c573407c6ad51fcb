// The calculation engine's write as bench/calc.ts's live figure drives it (issue 27): many
// calculation output series, one point each per second, written through SeriesStore.write
// in batches of --batch series (the engine's batches), on a store opened as the service's
// main thread opens it. Prints this thread's CPU per output point (user + system from
// /proc, so the commits' other threads are not counted) and the apply time inside the
// write transactions per point, with the load average: an A/B of the write path runs this
// file from two checkouts in turn.
// --day-hours h: each series first gets one point in each of the day's first h hours, and the
// timed seconds fall in hour h, so each append changes a day block of h + 1 hour rows (a
// service late in the UTC day; 0, the default, times the first hour of a fresh series).
//   node --import tsx bench/calc-write.ts [--series 10000] [--seconds 30] [--batch 1000] [--day-hours 0] [--json]
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { SeriesStore, type PointBatch } from '../src/storage/series-store.js';
import { LatestTable } from '../src/storage/latest-table.js';

const args = process.argv.slice(2);
const num = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
const SERIES = num('series', 10_000), SECONDS = num('seconds', 30), BATCH = num('batch', 1000), DAY_HOURS = num('day-hours', 0);
/** Seconds written before timing: heads, metas and rollup blocks are then in the caches, as in a running service. */
const WARM = 5;
const SEC = 1_000_000_000n;

/** This thread's CPU seconds (user + system, clock ticks of 10 ms). */
const threadCpuS = () => { const f = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) / 100; };

const dir = await mkdtemp(join(tmpdir(), 'calc-write-'));
let applyMs = 0;
const store = SeriesStore.open(join(dir, 'series'), { latest: LatestTable.create(), onTransaction: (t) => { applyMs += t.applyEnd - t.applyStart; } });
try {
  const ids = Array.from({ length: SERIES }, () => randomUUID());
  await store.createSeriesMany(ids.map((id) => ({ id, type: 'float64', writableClass: 'calculation' })));
  const HOUR = 3_600n * SEC;
  const day = (BigInt(Date.now()) * 1_000_000n / (24n * HOUR)) * 24n * HOUR;
  const start = day + BigInt(DAY_HOURS) * HOUR;
  let value = 0;
  const second = async (s: number, at = start + BigInt(s) * SEC) => {
    const writes: Array<Promise<unknown>> = [];
    for (let b = 0; b < SERIES; b += BATCH) {
      const batches: PointBatch[] = [];
      for (let i = b; i < Math.min(SERIES, b + BATCH); i++) batches.push({ series: ids[i], times: BigInt64Array.of(at), values: Float64Array.of((value++ % 1000) * 2 + 1), quality: Uint32Array.of(192) });
      writes.push(store.write(batches, { principal: 'calculation-engine' }));
    }
    await Promise.all(writes);
  };
  for (let h = 0; h < DAY_HOURS; h++) await second(0, day + BigInt(h) * HOUR);
  for (let s = 0; s < WARM; s++) await second(s);
  applyMs = 0;
  const c0 = threadCpuS(), t0 = performance.now();
  for (let s = WARM; s < WARM + SECONDS; s++) await second(s);
  const cpuS = threadCpuS() - c0, wallMs = performance.now() - t0;
  const points = SERIES * SECONDS;
  const figures = {
    series: SERIES, seconds: SECONDS, batch: BATCH, day_hours: DAY_HOURS, points,
    thread_cpu_us_per_point: Number(((cpuS * 1e6) / points).toFixed(2)),
    apply_us_per_point: Number(((applyMs * 1e3) / points).toFixed(2)),
    wall_us_per_point: Number(((wallMs * 1e3) / points).toFixed(2)),
    load: loadavg()[0].toFixed(1),
  };
  console.log(args.includes('--json') ? JSON.stringify(figures) : Object.entries(figures).map(([k, v]) => `${k.padEnd(24)} ${v}`).join('\n'));
} finally {
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
