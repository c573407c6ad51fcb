// The engine's live windows as the read pool evaluates them (columns across the thread, each
// input's record and open tail read with the worker's kept key): the results equal the same
// windows evaluated on this thread for random heads and windows, and what the worker keeps
// per series never hides a change (a new finalised watermark, a rebind to another series).
import t from 'tap';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ReadPool } from '../../src/workers/read-pool.js';
import { SeriesStore } from '../../src/storage/series-store.js';
import { checkExpression, planOf, type ExpressionScope } from '../../src/calc/expression/index.js';
import { compiledRuleOf, evaluateWindow, type Target, type WindowOutcome } from '../../src/calc-kernel/window-eval.js';
import { evaluateWindowsInPool, type WindowWork } from '../../src/calc/engine/pool-windows.js';

const SEED = Number(process.env.FC_SEED ?? 27_2811);
t.comment(`fast-check seed ${SEED} (replay a failure with FC_SEED and the printed path)`);

const SEC = 1_000_000_000n;
const T0 = 1_790_000_000n * SEC;
const scope: ExpressionScope = {
  reference: (text) => (['A', 'B'].includes(text) ? { key: text, valueType: 'float64', quantityKind: null, unitId: null, unit: null, enumSet: null } : null),
  unit: () => null,
  enumMember: () => null,
};

function ruleOf(text: string, version: number, refs: string[]) {
  const expression = checkExpression(text, scope, { unitCheck: 'off' });
  return compiledRuleOf({
    ruleId: `rule-${text}`, version, trigger: { kind: 'event', debounceMs: 0 }, provisional: 'emit',
    expression: planOf(expression), when: null, edge: null, inputRefs: refs, lookbackNs: expression.lookbackNs, lookbackPoints: expression.lookbackPoints,
  });
}

function sameOutcome(t: { fail: (message: string) => void }, there: WindowOutcome | Error, here: WindowOutcome, what: string): boolean {
  if (there instanceof Error) { t.fail(`${what}: ${there.message}`); return false; }
  const a = there.batch, b = here.batch;
  const same = JSON.stringify([a && [...a.times], a && [...(a.values as Float64Array)], a && [...a.quality], a?.series, there.bad, there.evaluated, there.doneThroughNs, there.provisionalFromNs], (_, v) => (typeof v === 'bigint' ? String(v) : v))
    === JSON.stringify([b && [...b.times], b && [...(b.values as Float64Array)], b && [...b.quality], b?.series, here.bad, here.evaluated, here.doneThroughNs, here.provisionalFromNs], (_, v) => (typeof v === 'bigint' ? String(v) : v));
  if (!same) t.fail(`${what}: the pool's outcome differs from this thread's`);
  return same;
}

t.test('pool windows equal this thread\'s for random heads, commits and windows', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pool-windows-'));
  const store = SeriesStore.open(dir);
  const pool = new ReadPool(dir, 2);
  t.teardown(async () => { await pool.close(); await store.close(); await rm(dir, { recursive: true, force: true }); });
  const sum = ruleOf('A * 2 + B', 1, ['A', 'B']), ratio = ruleOf('A / B', 1, ['A', 'B']);
  let runs = 0;
  await fc.assert(fc.asyncProperty(
    // Per series, commits of 1-4 points a few hundred ms to seconds apart (heads of many segments).
    fc.array(fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 3000 }), fc.integer({ min: -3, max: 3 })), { minLength: 0, maxLength: 40 }), { minLength: 3, maxLength: 3 }),
    fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: -5, max: 120 }), fc.integer({ min: 1, max: 30 }), fc.boolean()), { minLength: 1, maxLength: 12 }),
    async (commits, windows) => {
      runs++;
      const ids = commits.map(() => randomUUID());
      for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
      const out = randomUUID();
      const next = ids.map(() => T0);
      const longest = Math.max(...commits.map((c) => c.length));
      for (let k = 0; k < longest; k++) {
        const batches = [];
        for (const [s, list] of commits.entries()) {
          if (k >= list.length) continue;
          const [n, gapMs, v] = list[k];
          const times = new BigInt64Array(n), values = new Float64Array(n);
          for (let i = 0; i < n; i++) { next[s] += BigInt(gapMs) * 1_000_000n; times[i] = next[s]; values[i] = v + i / 4; }
          batches.push({ series: ids[s], times, values, quality: new Uint32Array(n).fill(v === 0 ? 100 : 192) });
        }
        if (batches.length > 0) await store.write(batches, { principal: 'test' });
      }
      // A target reads two of the three series (or one unbound), under one of two rules.
      const work: WindowWork[] = windows.map(([x, y, startS, lengthS, trace]) => {
        const refs = new Map<string, string | null>([['A', ids[x]], ['B', y === 3 ? null : ids[y]]]);
        const target: Target = { rule: (x + y) % 2 === 0 ? sum : ratio, assetId: `asset-${x}-${y}`, seriesByRef: refs, outputSeries: out, outputType: 'float64' };
        const from = T0 + BigInt(startS) * SEC;
        return { target, from, to: from + BigInt(lengthS) * SEC, kind: 'evaluate', trace, triggerName: 'event' };
      });
      const inPool = await evaluateWindowsInPool(pool, work);
      return work.every((w, i) => sameOutcome(t, inPool[i], store.read((view) => evaluateWindow(view, w.target, w.from, w.to, { trace: w.trace ?? false, triggerName: 'event' })), `window ${i}`));
    }), { seed: SEED, numRuns: 25 });
  t.equal(runs, 25, 'every run compared');
});

t.test('a worker sees a series\' new finalised watermark and a rebind at once', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pool-windows-'));
  const store = SeriesStore.open(dir);
  const pool = new ReadPool(dir, 1);
  t.teardown(async () => { await pool.close(); await store.close(); await rm(dir, { recursive: true, force: true }); });
  const a = randomUUID(), other = randomUUID(), out = randomUUID();
  for (const id of [a, other]) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  for (let s = 0n; s < 10n; s++) {
    await store.write([
      { series: a, times: BigInt64Array.of(T0 + s * SEC), values: Float64Array.of(Number(s)), quality: Uint32Array.of(192) },
      { series: other, times: BigInt64Array.of(T0 + s * SEC), values: Float64Array.of(100 + Number(s)), quality: Uint32Array.of(192) },
    ], { principal: 'test' });
  }
  const rule = ruleOf('A * 2 + 1', 1, ['A']);
  const target = (series: string): Target => ({ rule, assetId: 'asset-1', seriesByRef: new Map([['A', series]]), outputSeries: out, outputType: 'float64' });
  const live = (tg: Target) => evaluateWindowsInPool(pool, [{ target: tg, from: T0 + 8n * SEC, to: T0 + 9n * SEC, kind: 'evaluate' }]);
  const [before] = await live(target(a)) as WindowOutcome[];
  t.equal(before.provisionalFromNs, T0 + 8n * SEC, 'nothing final yet: the output is provisional');
  await store.setFinalised(a, T0 + 20n * SEC);
  const [after] = await live(target(a)) as WindowOutcome[];
  t.equal(after.provisionalFromNs, null, 'the new watermark is seen by the same worker: final');
  t.same([...(after.batch!.values as Float64Array)], [17]);
  const [rebound] = await live(target(other)) as WindowOutcome[];
  t.same([...(rebound.batch!.values as Float64Array)], [217], 'the rebound input is read, not the one the worker read before');
  t.equal(rebound.provisionalFromNs, T0 + 8n * SEC, 'and its own (absent) watermark');
});
