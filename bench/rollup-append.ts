// appendRollups as the bulk load drives it (issue 33): the shared dataset's numeric series,
// ~10 points of every series per write transaction (one group commit of bench:ingest),
// appended to the rollups of a fresh series env, nothing else written. Prints the process
// CPU per point of the appends (user + system: all of it, commits included; apply: inside the
// transactions, before their commits) and
// the bytes LMDB wrote for them (/proc/self/io write_bytes), with the load average.
//   node --import tsx bench/rollup-append.ts [--series 1000] [--points 3000] [--per 10] [--runs 3] [--src <dir>]
import { mkdtemp, rm, readFile } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries, numeric } from '../../shared/datasets/industrial.mjs';
import type { TimedPoints } from '../src/storage/point-runs.js';

const args = process.argv.slice(2);
const num = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
// --src <dir>[,<dir>...]: the storage modules from other checkouts' src/, run in turn (A/B
// against a copy of HEAD in one process, so that the box's load drifts alike for both)
const srcAt = args.indexOf('--src');
const SRCS = srcAt >= 0 ? args[srcAt + 1].split(',') : [new URL('../src', import.meta.url).pathname];
const impls = await Promise.all(SRCS.map(async (src) => ({
  src,
  openSeriesEnv: (await import(`${src}/storage/series-env.js`) as typeof import('../src/storage/series-env.js')).openSeriesEnv,
  appendRollups: (await import(`${src}/storage/rollups.js`) as typeof import('../src/storage/rollups.js')).appendRollups,
  seriesKey: (await import(`${src}/storage/keys.js`) as typeof import('../src/storage/keys.js')).seriesKey,
})));
const SERIES = num('series', 1000), POINTS = num('points', 3000), PER = num('per', 10), RUNS = num('runs', 3);

const list = (datasetSeries({ series: SERIES, points: POINTS, seed: 1 }) as Array<{ type: string; points(): Iterable<[bigint, unknown, number]> }>)
  .filter((s) => s.type !== 'string').map((s) => {
    const ts = new BigInt64Array(POINTS), f64 = new Float64Array(POINTS), quality = new Uint32Array(POINTS);
    let i = 0;
    for (const [t, v, q] of s.points()) { if (i === POINTS) break; ts[i] = t; f64[i] = Number(numeric(v)); quality[i] = q; i++; }
    return { key: impls[0].seriesKey(randomUUID()), ts: ts.subarray(0, i), f64: f64.subarray(0, i), quality: quality.subarray(0, i) };
  });

async function writeBytes(): Promise<number> {
  const io = await readFile('/proc/self/io', 'utf8');
  return Number(/write_bytes: (\d+)/.exec(io)![1]);
}

for (let run = 0; run < RUNS * impls.length; run++) {
  const { src: SRC, openSeriesEnv, appendRollups } = impls[run % impls.length];
  const dir = await mkdtemp(join(tmpdir(), 'rollup-append-'));
  const env = openSeriesEnv(join(dir, 'series'));
  try {
    let total = 0, applyUs = 0;
    const b0 = await writeBytes();
    const c0 = process.cpuUsage();
    for (let k = 0; k < POINTS; k += PER) {
      env.root.transactionSync(() => {
        const a0 = process.cpuUsage();
        for (const s of list) {
          if (k >= s.ts.length) continue;
          const e = Math.min(k + PER, s.ts.length);
          const pts: TimedPoints = { type: 'float64', count: e - k, ts: s.ts.subarray(k, e), f64: s.f64.subarray(k, e), i64: null, u8: null, ord: null, str: null, quality: s.quality.subarray(k, e) };
          appendRollups({ env, txn: undefined }, s.key, 'float64', k === 0 ? null : s.ts[k - 1], pts);
          total += e - k;
        }
        const a = process.cpuUsage(a0);
        applyUs += a.user + a.system;
      });
    }
    const c = process.cpuUsage(c0);
    await env.root.flushed;
    const bytes = (await writeBytes()) - b0;
    const cpu = (c.user + c.system) / 1e3;
    console.log(JSON.stringify({ src: SRC, series: list.length, points: total, per: PER, cpu_ms: Math.round(cpu), user_ms: Math.round(c.user / 1e3), ns_per_point: Math.round((cpu * 1e6) / total), apply_ns_per_point: Math.round((applyUs * 1e3) / total), written_per_point: Number((bytes / total).toFixed(1)), load: loadavg()[0].toFixed(1) }));
  } finally {
    await env.close();
    await rm(dir, { recursive: true, force: true });
  }
}
