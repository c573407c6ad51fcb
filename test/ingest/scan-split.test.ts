import t from 'tap';
import fc from 'fast-check';
import { splitScan } from '../../src/ingest/scan-split.js';

const SEED = 20261128;
t.comment(`fast-check seed ${SEED}`);

const STREAMS = 6;

t.test('a scan splits into each stream\'s points in their order, each named by its index in the scan', async (t) => {
  const count = new Int32Array(STREAMS);
  fc.assert(fc.property(fc.array(fc.nat(STREAMS - 1), { minLength: 1, maxLength: 40 }), fc.boolean(), (list, strings) => {
    const n = list.length;
    const streams = Uint32Array.from(list);
    const times = BigInt64Array.from(list.map((_, i) => BigInt(1000 + i)));
    const quality = Uint32Array.from(list.map((_, i) => i % 3 === 0 ? 0 : 192));
    const values = strings ? list.map((_, i) => `v${i}`) : Float64Array.from(list.map((_, i) => i / 2));
    const parts = splitScan(streams, { times, values, quality }, (s) => `series-${s}`, count);
    // one part per distinct stream, in the order of each stream's first point
    const distinct = [...new Set(list)];
    if (parts.map((p) => p.stream).join() !== distinct.join()) return false;
    let total = 0;
    for (const p of parts) {
      const want = list.flatMap((s, i) => s === p.stream ? [i] : []);
      const at = p.at === null ? [p.first] : [...p.at];
      if (at.join() !== want.join() || p.batch.series !== `series-${p.stream}`) return false;
      const vals = Array.from(p.batch.values as ArrayLike<unknown>);
      for (let k = 0; k < want.length; k++) {
        const i = want[k];
        if (p.batch.times[k] !== times[i] || p.batch.quality[k] !== quality[i] || vals[k] !== (values as ArrayLike<unknown>)[i]) return false;
      }
      total += want.length;
    }
    return total === n && count.every((c) => c === 0);
  }), { seed: SEED, numRuns: 500 });
  t.pass('500 scans split as their streams\' subsequences; the scratch is left zero');
});

t.test('every stream once: views of the scan\'s columns, no copy', async (t) => {
  const times = BigInt64Array.of(5n, 6n, 7n), values = Float64Array.of(1, 2, 3), quality = Uint32Array.of(192, 192, 192);
  const parts = splitScan(Uint32Array.of(2, 0, 1), { times, values, quality }, (s) => `s${s}`, new Int32Array(3));
  t.same(parts.map((p) => [p.stream, p.first, p.at]), [[2, 0, null], [0, 1, null], [1, 2, null]]);
  t.equal((parts[1].batch.times as BigInt64Array).buffer, times.buffer, 'the times are a view of the scan\'s column');
  t.equal(parts[1].batch.values[0], 2);
});
