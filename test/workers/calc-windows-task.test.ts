// Calculation windows in the read pool's workers: a rule version crosses as plain data, the
// worker's result equals the same window evaluated on this thread, a new version of a rule is
// evaluated with its own plan (not the one the worker cached for the old version), a diff
// reports what the stored outputs already hold, and a failing window comes back as an error
// by code while the others succeed.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ReadPool } from '../../src/workers/read-pool.js';
import { SeriesStore } from '../../src/storage/series-store.js';
import { checkExpression, planOf, type ExpressionScope } from '../../src/calc/expression/index.js';
import { compiledRuleOf, evaluateWindow, traceContextOf, traceEntries, type Target, type TraceEntry } from '../../src/calc-kernel/window-eval.js';

const ctx = (t: Target) => traceContextOf(t, 'event');
const withoutClock = (e: TraceEntry) => ({ ...e, computed_at_ns: 0n });
import { evaluateWindowsInPool, diffWindowInPool } from '../../src/calc/engine/pool-windows.js';

const SEC = 1_000_000_000n;
const T0 = 1_790_000_000n * SEC;
const scope: ExpressionScope = {
  reference: (text) => (['A', 'B'].includes(text) ? { key: text, valueType: 'float64', quantityKind: null, unitId: null, unit: null, enumSet: null } : null),
  unit: () => null,
  enumMember: () => null,
};

function ruleOf(text: string, version: number) {
  const expression = checkExpression(text, scope, { unitCheck: 'off' });
  return compiledRuleOf({
    ruleId: 'rule-1', version, trigger: { kind: 'event', debounceMs: 0 }, provisional: 'emit',
    expression: planOf(expression), when: null, edge: null, inputRefs: ['A', 'B'], lookbackNs: expression.lookbackNs, lookbackPoints: expression.lookbackPoints,
  });
}

t.test('windows evaluated in a worker equal the same windows on this thread, per rule version', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'calc-windows-'));
  const store = SeriesStore.open(dir);
  const pool = new ReadPool(dir, 2);
  t.teardown(async () => { await pool.close(); await store.close(); await rm(dir, { recursive: true, force: true }); });
  const a = randomUUID(), b = randomUUID(), out = randomUUID();
  for (const id of [a, b]) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await store.createSeries({ id: out, type: 'float64', writableClass: 'calculation' });
  // A every second, B every 3 s half a second later: 2,000 instants of the union per 1,200 s.
  const n = 1200;
  const ta = BigInt64Array.from({ length: n }, (_, i) => T0 + BigInt(i) * SEC);
  const tb = BigInt64Array.from({ length: n / 3 }, (_, i) => T0 + BigInt(i) * 3n * SEC + SEC / 2n);
  await store.write([
    { series: a, times: ta, values: Float64Array.from({ length: n }, (_, i) => i % 17), quality: new Uint32Array(n).fill(192) },
    { series: b, times: tb, values: Float64Array.from({ length: n / 3 }, (_, i) => (i % 5) - 2), quality: Uint32Array.from({ length: n / 3 }, (_, i) => (i % 9 === 0 ? 100 : 192)) },
  ], { principal: 'test' });
  const target = (rule: ReturnType<typeof ruleOf>): Target => ({ rule, assetId: 'asset-1', seriesByRef: new Map([['A', a], ['B', b]]), outputSeries: out, outputType: 'float64' });
  const v1 = target(ruleOf('A / B', 1)), v2 = target(ruleOf('A * B + 1', 2));
  const windows = [0n, 400n, 800n].map((s) => ({ from: T0 + s * SEC, to: T0 + (s + 400n) * SEC }));
  const work = [...windows.map((w) => ({ target: v1, ...w })), ...windows.map((w) => ({ target: v2, ...w }))]
    .map((w) => ({ ...w, kind: 'evaluate' as const, trace: true, triggerName: 'event' }));
  const inPool = await evaluateWindowsInPool(pool, work);
  t.equal(inPool.length, work.length);
  for (const [i, w] of work.entries()) {
    const here = store.read((view) => evaluateWindow(view, w.target, w.from, w.to, { trace: true, triggerName: 'event' }));
    const there = inPool[i];
    if (there instanceof Error) { t.fail(`window ${i}: ${there.message}`); continue; }
    t.same([...there.batch!.times], [...here.batch!.times], `window ${i}: the same instants`);
    t.same([...(there.batch!.values as Float64Array)], [...(here.batch!.values as Float64Array)], `window ${i} (version ${w.target.rule.version}): the same values`);
    t.same([...there.batch!.quality], [...here.batch!.quality], `window ${i}: the same qualities`);
    t.equal(there.bad, here.bad);
    t.same(traceEntries(there, ctx(w.target), w.from, w.to).map(withoutClock), traceEntries(here, ctx(w.target), w.from, w.to).map(withoutClock), `window ${i}: the same trace`);
  }
  const first = inPool[0], again = inPool[3];
  if (!(first instanceof Error) && !(again instanceof Error)) {
    t.not((first.batch!.values as Float64Array)[5], (again.batch!.values as Float64Array)[5], 'version 2 is not evaluated with version 1\'s cached plan');
    t.ok(first.bad > 0, 'A / B divides by zero where B is 0: bad points, computed in the worker');
  }

  // A diff against the stored outputs: nothing stored yet, then everything unchanged once written.
  const fresh = await diffWindowInPool(pool, { target: v2, ...windows[0], kind: 'diff', mode: 'recalculate', sampleRoom: 3 });
  t.equal(fresh.changed + fresh.unchanged, 0);
  t.ok(fresh.added > 0 && fresh.batch !== null, 'every instant is new, and its points come back');
  t.equal(fresh.sample.length, 3);
  await store.write([fresh.batch!], { principal: 'test' });
  const same = await diffWindowInPool(pool, { target: v2, ...windows[0], kind: 'diff', mode: 'recalculate', sampleRoom: 3 });
  t.same([same.added, same.changed, same.unchanged], [0, 0, fresh.added], 'what was written is unchanged');
  const preview = await diffWindowInPool(pool, { target: v1, ...windows[0], kind: 'diff', mode: 'recalculate', sampleRoom: 0, keepBatch: false });
  t.ok(preview.changed > 0, 'version 1 would change them');
  t.equal(preview.batch, null, 'a preview brings back no columns');

  // A window that fails (a range over 2^53 ns) answers by code; the others still evaluate.
  const mixed = await evaluateWindowsInPool(pool, [
    { target: v1, from: T0, to: T0 + 2n ** 54n, kind: 'evaluate' },
    { target: v1, ...windows[1], kind: 'evaluate' },
  ]);
  t.ok(mixed[0] instanceof Error && (mixed[0] as Error & { code?: string }).code === 'invalid-request', 'the long window is refused by code');
  t.notOk(mixed[1] instanceof Error, 'the other window is evaluated');
});
