// fillTimes forms base + offset in 32-bit halves: it must equal BigInt arithmetic for any
// base in the int64 range the engine sees and any exact offset below 2^53.
import t from 'tap';
import fc from 'fast-check';
import { fillTimes } from '../../src/calc-kernel/instant-times.js';

const SEED = 27_2026;

t.test('fillTimes equals base + offset in BigInt for every base and offset', async (t) => {
  fc.assert(fc.property(
    fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }),
    fc.array(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { minLength: 1, maxLength: 50 }),
    (base, offs) => {
      const offsets = Float64Array.from(offs);
      const out = new BigInt64Array(offs.length);
      fillTimes(out, base, offsets, offs.length);
      return offs.every((o, k) => out[k] === base + BigInt(o));
    }), { seed: SEED, numRuns: 2_000 });
  const idx = Int32Array.of(2, 0);
  const out = new BigInt64Array(2);
  fillTimes(out, 1_700_000_000_123_456_789n, Float64Array.of(1, 2, 4_294_967_296), 2, idx);
  t.same([...out], [1_700_000_004_418_424_085n, 1_700_000_000_123_456_790n], 'through an index, across the 2^32 carry');
});
