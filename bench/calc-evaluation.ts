// Compiled evaluation of calculation expressions on one thread, alignment included.
//
//   node --import tsx bench/calc-evaluation.ts [--points 1000000] [--repeat 7] [--seed 1] [--json]
//
// Three float64 inputs with different, jittered timestamps (a every 1 s, b every 1 s shifted
// by ~333 ms, c every 2 s shifted by ~667 ms), generated from a fixed seed before timing.
// Each case builds the event-trigger grid (the union of the inputs' timestamps) and
// evaluates the compiled plan over it; the figure is input points per second per worker
// (the goal for `a * b + c`: at least 50,000,000). A hand-written loop doing the
// same alignment and arithmetic for `a * b + c` stands next to it as the baseline.
import { fileURLToPath } from 'node:url';
import { GridScratch, checkExpression, compileExpression, unionGrid, type ExpressionScope, type InputDescriptor, type PointColumns } from '../src/calc/expression/index.js';
import { mulberry32 } from './seeded-random.js';

/**
 * ms_p50 is wall time; cpu_ms_p50 is this thread's CPU time (process.cpuUsage, the process
 * being single-threaded here), which a loaded shared box inflates far less. The per-second
 * figures are from CPU time, i.e. per worker actually running.
 */
export interface CalcEvaluationCase {
  name: string; expression: string; input_points: number; instants: number; ms_p50: number; cpu_ms_p50: number;
  input_points_per_s: number; instants_per_s: number;
}
/** The cases, and their headline figures as flat numbers (bench/calc.ts copies every number). */
export interface CalcEvaluationFigures {
  points_per_input: number; repeat: number; seed: number; cases: CalcEvaluationCase[];
  baseline_input_points_per_s: number; compiled_input_points_per_s: number;
  heavier_input_points_per_s: number; window_avg_input_points_per_s: number;
}

function inputColumns(count: number, periodNs: number, phaseNs: number, rand: () => number): PointColumns {
  const tsOffset = new Float64Array(count);
  const f64 = new Float64Array(count);
  let level = 50;
  for (let i = 0; i < count; i++) {
    tsOffset[i] = i * periodNs + phaseNs + Math.floor(rand() * 1000) * 1000; // jitter up to 1 ms, distinct per input
    level += (rand() - 0.5) * 2;
    f64[i] = level;
  }
  return { type: 'float64', count, tsBase: 1_700_000_000_000_000_000n, tsOffset, f64, i64: null, u8: null, ord: null, str: null, quality: new Uint32Array(count).fill(192) };
}

const scope: ExpressionScope = {
  reference: (text): InputDescriptor | null => (['a', 'b', 'c'].includes(text)
    ? { key: text, valueType: 'float64', quantityKind: null, unitId: null, unit: null, enumSet: null } : null),
  unit: () => null,
  enumMember: () => null,
};

/** The baseline: `a * b + c` aligned by hand over the union grid, no plan, no quality or reasons. */
function handWritten(cols: PointColumns[], grid: { tsOffset: Float64Array; count: number }, out: Float64Array): void {
  const [a, b, c] = cols;
  let ia = -1, ib = -1, ic = -1;
  for (let i = 0; i < grid.count; i++) {
    const t = grid.tsOffset[i];
    // The same cursor steps as the compiled plan's alignment (a branch-free single step first).
    ia += ia + 1 < a.count && a.tsOffset[ia + 1] <= t ? 1 : 0;
    ib += ib + 1 < b.count && b.tsOffset[ib + 1] <= t ? 1 : 0;
    ic += ic + 1 < c.count && c.tsOffset[ic + 1] <= t ? 1 : 0;
    while (ia + 1 < a.count && a.tsOffset[ia + 1] <= t) ia++;
    while (ib + 1 < b.count && b.tsOffset[ib + 1] <= t) ib++;
    while (ic + 1 < c.count && c.tsOffset[ic + 1] <= t) ic++;
    out[i] = ia < 0 || ib < 0 || ic < 0 ? 0 : a.f64![ia] * b.f64![ib] + c.f64![ic];
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
}

export async function runCalcEvaluationBench(opts: { points?: number; repeat?: number; seed?: number } = {}): Promise<CalcEvaluationFigures> {
  const points = opts.points ?? 1_000_000;
  const repeat = opts.repeat ?? 7;
  const seed = opts.seed ?? 1;
  const rand = mulberry32(seed);
  const cols = [inputColumns(points, 1e9, 0, rand), inputColumns(points, 1e9, 333e6, rand), inputColumns(Math.ceil(points / 2), 2e9, 667e6, rand)];
  const start = cols[0].tsBase;
  const end = start + BigInt(points) * 1_000_000_000n + 10_000_000_000n;
  const inputPoints = cols.reduce((s, c) => s + c.count, 0);
  const cases: CalcEvaluationCase[] = [];
  const measure = (name: string, expression: string, run: () => number) => {
    run(); // warm the JIT
    const times: number[] = [];
    const cpu: number[] = [];
    let instants = 0;
    for (let r = 0; r < repeat; r++) {
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      instants = run();
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const c1 = process.cpuUsage(c0);
      cpu.push((c1.user + c1.system) / 1e3);
    }
    const ms = median(times);
    const cpuMs = median(cpu);
    cases.push({ name, expression, input_points: inputPoints, instants, ms_p50: Number(ms.toFixed(2)), cpu_ms_p50: Number(cpuMs.toFixed(2)),
      input_points_per_s: Math.round(inputPoints / (cpuMs / 1e3)), instants_per_s: Math.round(instants / (cpuMs / 1e3)) });
  };
  const compiled = (text: string) => {
    const plan = compileExpression(checkExpression(text, scope, { unitCheck: 'strict' }));
    let out: { count: number; values: Float64Array; quality: Uint32Array; reason: Uint8Array } | null = null;
    // As a read-pool worker evaluates: the grid's buffers and the result arrays reused across evaluations.
    const scratch = new GridScratch();
    return () => {
      const ordered = plan.inputs.map((i) => cols[['a', 'b', 'c'].indexOf(i.key)]);
      const grid = unionGrid(ordered, start, end, scratch);
      if (!out || out.values.length < grid.count) {
        out = { count: 0, values: new Float64Array(grid.count), quality: new Uint32Array(grid.count), reason: new Uint8Array(grid.count) };
      }
      plan.evaluateInto(ordered, grid, out);
      return grid.count;
    };
  };
  let baselineOut = new Float64Array(0);
  const baselineScratch = new GridScratch();
  measure('baseline: hand-written a * b + c', 'a * b + c', () => {
    const grid = unionGrid(cols, start, end, baselineScratch);
    if (baselineOut.length < grid.count) baselineOut = new Float64Array(grid.count);
    handWritten(cols, grid, baselineOut);
    return grid.count;
  });
  measure('compiled a * b + c', 'a * b + c', compiled('a * b + c'));
  const heavy = 'if a > b then sqrt(abs(a * b)) + c / 2 else max(a, c) - b * 0.5';
  measure('compiled, heavier', heavy, compiled(heavy));
  measure('compiled, trailing 5 min average', 'avg(a, 5m) + b - c', compiled('avg(a, 5m) + b - c'));
  return {
    points_per_input: points, repeat, seed, cases,
    baseline_input_points_per_s: cases[0].input_points_per_s, compiled_input_points_per_s: cases[1].input_points_per_s,
    heavier_input_points_per_s: cases[2].input_points_per_s, window_avg_input_points_per_s: cases[3].input_points_per_s,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name: string): number | undefined => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : undefined;
  };
  const figures = await runCalcEvaluationBench({ points: opt('points'), repeat: opt('repeat'), seed: opt('seed') });
  if (args.includes('--json')) {
    process.stdout.write(JSON.stringify(figures) + '\n');
  } else {
    const rows = figures.cases.map((c) => [c.name, c.expression, String(c.input_points), String(c.instants), c.ms_p50.toFixed(1), c.cpu_ms_p50.toFixed(1),
      (c.input_points_per_s / 1e6).toFixed(1), (c.instants_per_s / 1e6).toFixed(1)]);
    const head = ['case', 'expression', 'input points', 'instants', 'wall ms p50', 'cpu ms p50', 'M input pts/cpu-s', 'M instants/cpu-s'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (r: string[]) => r.map((x, i) => x.padEnd(widths[i])).join('  ');
    process.stdout.write(`${line(head)}\n${rows.map(line).join('\n')}\ngoal: compiled a * b + c >= 50 M input points/s per worker (one thread)\n`);
  }
}
