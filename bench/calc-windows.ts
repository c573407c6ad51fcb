// The read pool's side of live calculation windows (issue 27), without the service around
// it: a real store of `assets` input series, each written one point a second (one commit a
// second for all of them, as ingest groups them, so every open head holds a segment per
// commit merged as the writer merges them), and a template rule `Out = X * 2 + 1` whose live
// windows [t, t + 1 s) are evaluated in one read-pool worker, as the engine sends them, each
// second after that second's commit. Figures: CPU per window of the whole process (the worker,
// and the main thread's share: the task's clone both ways), measured over `rounds` seconds
// after `warm` seconds of history.
//   npm run bench:calc-windows -- [--assets 10000] [--warm 120] [--rounds 20] [--json]
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadPool } from '../src/workers/read-pool.js';
import { SeriesStore, type PointBatch } from '../src/storage/series-store.js';
import { checkExpression, planOf, type ExpressionScope } from '../src/calc/expression/index.js';
import { compiledRuleOf, type Target } from '../src/calc-kernel/window-eval.js';
import { evaluateWindowsInPool } from '../src/calc/engine/pool-windows.js';
import { mulberry32 } from './seeded-random.js';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
const ASSETS = opt('assets', 10_000), WARM = opt('warm', 120), ROUNDS = opt('rounds', 20);
const SEC = 1_000_000_000n;
const T0 = 1_790_000_000n * SEC;

function uuidOf(rand: () => number): string {
  const h = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const scope: ExpressionScope = {
  reference: (text) => (text === 'X' ? { key: text, valueType: 'float64', quantityKind: null, unitId: null, unit: null, enumSet: null } : null),
  unit: () => null,
  enumMember: () => null,
};

/** CPU ticks (user + system, 1/100 s) of each thread of this process, by thread id. */
function threadTicks(): Map<string, { name: string; ticks: number }> {
  const out = new Map<string, { name: string; ticks: number }>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(), ticks: Number(f[11]) + Number(f[12]) });
    } catch { /* a thread that ended meanwhile */ }
  }
  return out;
}

async function main(): Promise<void> {
  const rand = mulberry32(27);
  const inputs = Array.from({ length: ASSETS }, () => uuidOf(rand));
  const outputs = Array.from({ length: ASSETS }, () => uuidOf(rand));
  const values = Float64Array.from({ length: (WARM + ROUNDS) * ASSETS }, () => Math.round(rand() * 1000) / 10);
  const dir = await mkdtemp(join(tmpdir(), 'bench-calc-windows-'));
  const store = SeriesStore.open(dir);
  const pool = new ReadPool(dir, 1);
  try {
    await store.createSeriesMany(inputs.map((id) => ({ id, type: 'float64', writableClass: 'collector' })));
    await store.createSeriesMany(outputs.map((id) => ({ id, type: 'float64', writableClass: 'calculation' })));
    const second = async (s: number) => {
      const batches: PointBatch[] = inputs.map((series, a) => ({ series, times: BigInt64Array.of(T0 + BigInt(s) * SEC), values: Float64Array.of(values[s * ASSETS + a]), quality: Uint32Array.of(192) }));
      await store.write(batches, { principal: 'bench' });
    };
    for (let s = 0; s < WARM; s++) await second(s);
    const expression = checkExpression('X * 2 + 1', scope, { unitCheck: 'off' });
    const rule = compiledRuleOf({
      ruleId: 'rule-1', version: 1, trigger: { kind: 'event', debounceMs: 0 }, provisional: 'emit',
      expression: planOf(expression), when: null, edge: null, inputRefs: ['X'], lookbackNs: expression.lookbackNs, lookbackPoints: expression.lookbackPoints,
    });
    const targets: Target[] = inputs.map((x, a) => ({ rule, assetId: `asset-${a}`, seriesByRef: new Map([['X', x]]), outputSeries: outputs[a], outputType: 'float64' }));
    const round = async (s: number) => {
      const from = T0 + BigInt(s) * SEC;
      const outcomes = await evaluateWindowsInPool(pool, targets.map((target) => ({ target, from, to: from + SEC, kind: 'evaluate' as const, trace: true, triggerName: 'event' })));
      let n = 0;
      for (const o of outcomes) { if (o instanceof Error) throw o; n += o.evaluated; }
      if (n !== ASSETS) throw new Error(`second ${s}: ${n} instants evaluated, expected ${ASSETS}`);
      return outcomes;
    };
    // A first pass compiles and warms the worker (not measured).
    await round(WARM - 1);
    let cpu = 0, wall = 0;
    const ticks0 = threadTicks();
    let check = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const s = WARM + r;
      await second(s);
      const c0 = process.cpuUsage(), w0 = performance.now();
      const outcomes = await round(s);
      const c = process.cpuUsage(c0);
      wall += performance.now() - w0;
      cpu += c.user + c.system;
      for (const [a, o] of outcomes.entries()) {
        const v = ((o as { batch: PointBatch }).batch.values as Float64Array)[0];
        if (v !== values[s * ASSETS + a] * 2 + 1) throw new Error(`asset ${a} second ${s}: ${v}`);
        check += v;
      }
    }
    const windows = ASSETS * ROUNDS;
    // Per thread over the measured rounds (each round's input commit included: the store's
    // writes run on this process's threads too), µs per window, threads that used > 1%.
    const threads: Record<string, number> = {};
    for (const [tid, t] of threadTicks()) {
      const us = ((t.ticks - (ticks0.get(tid)?.ticks ?? 0)) * 10_000) / windows;
      if (us > 1) threads[`${t.name}/${tid}`] = Math.round(us * 10) / 10;
    }
    const figures = { assets: ASSETS, warm_s: WARM, rounds: ROUNDS, cpu_us_per_window: Math.round((cpu / windows) * 10) / 10, wall_us_per_window: Math.round((wall * 1000 / windows) * 10) / 10, threads_us_per_window_with_commits: threads, checksum: check };
    if (args.includes('--json')) console.log(JSON.stringify(figures));
    else {
      console.log(`live calculation windows in one read-pool worker: ${ASSETS} assets, ${ROUNDS} rounds after ${WARM} s of history`);
      const rows: Array<[string, string]> = [
        ['process CPU per window (µs)', String(figures.cpu_us_per_window)],
        ['wall per window (µs)', String(figures.wall_us_per_window)],
        ...Object.entries(threads).map(([name, us]): [string, string] => [`  thread ${name}, commits included (µs)`, String(us)]),
      ];
      for (const [k, v] of rows) console.log(`${k.padEnd(52)} ${v.padStart(10)}`);
    }
  } finally {
    await pool.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
