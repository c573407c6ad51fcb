// Batches recorded together are merged per target as their statements one by one would have
// left the progress row, and no round names a target twice (an upsert cannot touch a row twice).
import t from 'tap';
import { coalesceDone, newCursor, type WindowDone } from '../../src/calc/engine/progress-store.js';

const cursors = { a: newCursor(), b: newCursor(), a2: newCursor() };
function done(asset: 'a' | 'b', version: number, start: bigint, end: bigint, evaluations: number, extra: Partial<WindowDone> = {}): WindowDone {
  return {
    ruleId: 'r', assetId: asset, ruleVersion: version, outputSeries: `out-${asset}`, startNs: start, endNs: end, throughNs: end - 1n,
    evaluations, errors: 0, lastError: null, cursor: cursors[asset], ...extra,
  };
}

t.test('a target\'s later windows fold into its first: later through, counts summed, span over what evaluated', async (t) => {
  const rounds = coalesceDone([
    [done('a', 1, 10n, 11n, 1), done('b', 1, 10n, 11n, 1)],
    [done('a', 1, 20n, 21n, 1, { errors: 1, lastError: 'division' })],
    [done('a', 1, 30n, 31n, 0, { throughNs: 40n }), done('b', 1, 20n, 21n, 2)],
    [done('a', 1, 41n, 42n, 1)],
  ]);
  t.equal(rounds.length, 1);
  const [a, b] = rounds[0];
  t.match(a, { assetId: 'a', startNs: 10n, endNs: 42n, throughNs: 41n, evaluations: 3, errors: 1, lastError: 'division' });
  t.match(b, { assetId: 'b', startNs: 10n, endNs: 21n, throughNs: 20n, evaluations: 3, errors: 0, lastError: null });
});

t.test('a window that evaluated nothing moves progress but not the lineage span', async (t) => {
  const [[a]] = coalesceDone([[done('a', 1, 5n, 6n, 0, { throughNs: 9n })], [done('a', 1, 12n, 13n, 1)]]);
  t.match(a, { startNs: 12n, endNs: 13n, throughNs: 12n, evaluations: 1 });
});

t.test('a new version or cursor for the same target goes to the next round', async (t) => {
  const rounds = coalesceDone([
    [done('a', 1, 10n, 11n, 1)],
    [done('a', 2, 20n, 21n, 1, { cursor: cursors.a2 })],
    [done('a', 2, 30n, 31n, 1, { cursor: cursors.a2 })],
    [done('b', 1, 30n, 31n, 1)],
  ]);
  t.same(rounds.map((r) => r.map((d) => [d.assetId, d.ruleVersion, d.startNs, d.endNs])), [
    [['a', 1, 10n, 11n], ['b', 1, 30n, 31n]],
    [['a', 2, 20n, 31n]],
  ]);
  for (const r of rounds) t.equal(new Set(r.map((d) => d.assetId)).size, r.length, 'no target twice in a round');
});

t.test('the lists given are not changed', async (t) => {
  const first = done('a', 1, 10n, 11n, 1);
  coalesceDone([[first], [done('a', 1, 20n, 21n, 1)]]);
  t.match(first, { startNs: 10n, endNs: 11n, evaluations: 1 });
});
