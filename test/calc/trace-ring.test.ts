// The trace ring keeps columns and makes the route's entries on a query: what it gives back
// is what the windows' traces say (traceEntries), the newest TRACE_PER_TARGET instants per
// (rule, asset), across growth, wrap-around and a version that reads more inputs.
import t from 'tap';
import { TraceStore, TRACE_PER_TARGET } from '../../src/calc/engine/trace-ring.js';
import { traceEntries, type TraceContext, type TraceEntry, type WindowOutcome } from '../../src/calc-kernel/window-eval.js';

const SEC = 1_000_000_000n, T0 = 1_800_000_000n * SEC;

function ctx(version: number, refs: string[], boolResult = false): TraceContext {
  return { assetId: 'asset-1', outputSeries: 'out-1', ruleVersion: version, trigger: 'event', boolResult, inputs: refs.map((r, i) => [r, i === 1 ? null : `series-${r}`] as const) };
}

/** A window of `n` instants at T0 + (s0 + j) s, every `k`th instant undefined (division by zero), inputs with and without a point in force. */
function windowOf(s0: number, n: number, inputs: number, provisionalFrom: bigint | null): WindowOutcome {
  const times = BigInt64Array.from({ length: n }, (_, j) => T0 + BigInt(s0 + j) * SEC);
  const quality = Uint32Array.from({ length: n }, (_, j) => (j % 5 === 4 ? 0 : 192));
  const reasons = Float64Array.from({ length: n }, (_, j) => (j % 5 === 4 ? 1 : 0));
  const m = n * inputs;
  return {
    batch: { series: 'out-1', times, values: Float64Array.from({ length: n }, (_, j) => s0 + j + 0.5), quality },
    offsets: new Float64Array(n), evaluated: n, bad: 0, doneThroughNs: times[n - 1], provisionalFromNs: provisionalFrom,
    trace: {
      first: 0, computedAtNs: BigInt(s0) * 7n, values: Float64Array.from({ length: n }, (_, j) => s0 + j + 0.5), reasons,
      inputTs: BigInt64Array.from({ length: m }, (_, x) => times[Math.floor(x / inputs)] - BigInt(x % inputs)),
      inputValues: Float64Array.from({ length: m }, (_, x) => x * 1.25),
      inputQuality: Float64Array.from({ length: m }, (_, x) => (x % 3 === 2 ? -1 : 192)),
    },
  };
}

const plain = (e: TraceEntry[]) => JSON.parse(JSON.stringify(e, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))) as unknown;

t.test('the ring gives back what the windows traced, newest 256 instants, in instant order', async (t) => {
  const store = new TraceStore();
  const c1 = ctx(1, ['A']), c2 = ctx(2, ['A', 'B', 'C'], true);
  const expected: TraceEntry[] = [];
  let s = 0;
  // one-instant windows (live), a few wider ones, then a version reading three inputs
  for (let w = 0; w < 150; w++, s++) { const o = windowOf(s, 1, 1, null); store.ringOf('r', c1).pushWindow(c1, o, T0 + BigInt(s) * SEC, T0 + BigInt(s + 1) * SEC); expected.push(...traceEntries(o, c1, T0 + BigInt(s) * SEC, T0 + BigInt(s + 1) * SEC)); }
  for (let w = 0; w < 3; w++, s += 40) { const o = windowOf(s, 40, 1, T0 + BigInt(s + 20) * SEC); store.ringOf('r', c1).pushWindow(c1, o, T0 + BigInt(s) * SEC, T0 + BigInt(s + 40) * SEC); expected.push(...traceEntries(o, c1, T0 + BigInt(s) * SEC, T0 + BigInt(s + 40) * SEC)); }
  t.same(plain(store.query('r', 'asset-1', 0n, 2n ** 62n)), plain(expected.slice(-TRACE_PER_TARGET)), 'the newest 256 of 270 instants, one input');
  for (let w = 0; w < 30; w++, s += 2) { const o = windowOf(s, 2, 3, T0); store.ringOf('r', c2).pushWindow(c2, o, T0 + BigInt(s) * SEC, T0 + BigInt(s + 2) * SEC); expected.push(...traceEntries(o, c2, T0 + BigInt(s) * SEC, T0 + BigInt(s + 2) * SEC)); }
  const all = store.query('r', 'asset-1', 0n, 2n ** 62n);
  t.same(plain(all), plain(expected.slice(-TRACE_PER_TARGET)), 'after a version with three inputs: both versions\' entries as they were traced');
  t.equal(all.length, TRACE_PER_TARGET);
  const last = all[all.length - 1];
  t.equal(last.rule_version, 2);
  t.equal(last.inputs.length, 3);
  t.equal(last.inputs[1].series, null);
  t.equal(typeof last.value === 'boolean' || last.value === null, true, 'a boolean result shows true or false');
  t.ok(all.some((e) => e.outcome === 'bad' && e.reason !== null && e.value === null), 'undefined results keep their reason');
  t.ok(all.some((e) => e.inputs.some((i) => i.ts_ns === null && i.value === null && i.quality === null)), 'an input with no point in force shows nulls');
  // a range query and another asset
  const some = store.query('r', 'asset-1', T0 + BigInt(s - 10) * SEC, T0 + BigInt(s - 4) * SEC);
  t.same(some.map((e) => e.eval_instant_ns), Array.from({ length: 6 }, (_, j) => T0 + BigInt(s - 10 + j) * SEC));
  t.same(store.query('r', 'asset-2', 0n, 2n ** 62n), []);
  store.dropRule('r');
  t.same(store.query('r', 'asset-1', 0n, 2n ** 62n), []);
});

t.test('a window evaluated again is traced twice, the later computation last', async (t) => {
  const store = new TraceStore();
  const c = ctx(1, ['A']);
  const first = windowOf(0, 3, 1, null), again = windowOf(0, 3, 1, null);
  again.trace!.computedAtNs = first.trace!.computedAtNs + 1n;
  again.trace!.values[1] = 99;
  store.ringOf('r', c).pushWindow(c, first, T0, T0 + 3n * SEC);
  store.ringOf('r', c).pushWindow(c, again, T0, T0 + 3n * SEC);
  const e = store.query('r', 'asset-1', T0 + SEC, T0 + 2n * SEC);
  t.same(e.map((x) => x.value), [1.5, 99]);
});
