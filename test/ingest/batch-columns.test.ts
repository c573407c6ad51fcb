import t from 'tap';
import fc from 'fast-check';
import { decodeBatchColumns, encodeBatchColumns, type WireBatch } from '../../src/ingest/batch-columns.js';

const SEED = 20250505;
t.comment(`fast-check seed ${SEED}`);
const MAX_TS = 2n ** 62n;
const empty = Buffer.alloc(0);

function wire(count: number, cols: ReturnType<typeof encodeBatchColumns>, pad: number): WireBatch {
  // Copy each column at an odd offset of a larger buffer, as protobuf decoding hands them over.
  const shift = (b: Buffer | undefined) => { if (!b) return empty; const big = Buffer.alloc(b.byteLength + pad); b.copy(big, pad); return big.subarray(pad); };
  return { stream: 0, lane: 'LIVE', seq: '1', count, ts_ns: shift(cols.ts_ns), f64: shift(cols.f64), i64: shift(cols.i64), bool: shift(cols.bool),
    enum_ordinal: shift(cols.enum_ordinal), str: cols.str ?? [], quality: shift(cols.quality), collector_receipt_ns: '0', streams: empty };
}

t.test('float64 and int64 columns round-trip exactly at any buffer alignment', async (t) => {
  fc.assert(fc.property(
    fc.array(fc.tuple(fc.bigInt(0n, MAX_TS), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n), fc.nat(0xffffffff)), { minLength: 1, maxLength: 200 }),
    fc.integer({ min: 0, max: 7 }),
    (pts, pad) => {
      const times = BigInt64Array.from(pts.map((p) => p[0]));
      const f = Float64Array.from(pts.map((p) => p[1]));
      const i = BigInt64Array.from(pts.map((p) => p[2]));
      const q = Uint32Array.from(pts.map((p) => p[3]));
      const df = decodeBatchColumns(wire(pts.length, encodeBatchColumns('float64', times, f, q), pad), 'float64', 1000, MAX_TS);
      const di = decodeBatchColumns(wire(pts.length, encodeBatchColumns('int64', times, i, null), pad), 'int64', 1000, MAX_TS);
      if (!df.ok || !di.ok) return false;
      for (let k = 0; k < pts.length; k++) {
        if (df.cols.times[k] !== times[k] || !Object.is(df.cols.values[k], f[k]) || df.cols.quality[k] !== q[k]) return false;
        if ((di.cols.values as BigInt64Array)[k] !== i[k] || di.cols.quality[k] !== 192) return false;
      }
      return true;
    }), { seed: SEED, numRuns: 300 });
  t.pass('300 random batches round-tripped');
});

t.test('random column lengths never throw: the batch is either decoded or refused with a reason', async (t) => {
  fc.assert(fc.property(
    fc.integer({ min: -2, max: 20 }), fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 100 }),
    fc.constantFrom('float64', 'int64', 'boolean', 'enum', 'string'),
    (count, ts, vals, q, type) => {
      const b: WireBatch = { stream: 0, lane: 'LIVE', seq: '1', count, ts_ns: Buffer.from(ts), f64: Buffer.from(vals), i64: empty, bool: empty, enum_ordinal: empty, str: [], quality: Buffer.from(q), collector_receipt_ns: '0', streams: empty };
      const out = decodeBatchColumns(b, type as 'float64', 10, MAX_TS);
      if (out.ok) return type === 'float64' && ts.length === count * 8 && vals.length === count * 8;
      return ['wrong-type', 'bad-timestamps', 'bad-columns', 'too-large'].includes(out.reason) && out.detail.length > 0;
    }), { seed: SEED, numRuns: 500 });
  t.pass('500 random shapes handled');
});

t.test('the time bounds check on 32-bit words agrees with BigInt comparison, and reports the batch maximum', async (t) => {
  const edges = [0n, 1n, -1n, 2n ** 32n - 1n, 2n ** 32n, -(2n ** 63n), 2n ** 63n - 1n, 2n ** 62n];
  const time = fc.oneof(fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n), fc.constantFrom(...edges), fc.bigInt(0n, 2n ** 40n));
  fc.assert(fc.property(
    fc.array(time, { minLength: 1, maxLength: 50 }),
    fc.oneof(fc.bigInt(0n, 2n ** 63n - 1n), fc.constantFrom(0n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 63n - 1n)),
    fc.integer({ min: 0, max: 7 }),
    (ts, limit, pad) => {
      const times = BigInt64Array.from(ts);
      const out = decodeBatchColumns(wire(ts.length, encodeBatchColumns('float64', times, new Float64Array(ts.length), null), pad), 'float64', 1000, limit);
      const firstBad = ts.findIndex((x) => x < 0n || x > limit);
      if (firstBad >= 0) return !out.ok && out.reason === 'bad-timestamps' && out.detail.startsWith(`point ${firstBad} `);
      return out.ok && out.maxTs === ts.reduce((a, b) => (b > a ? b : a));
    }), { seed: SEED, numRuns: 1000 });
  t.pass('1000 random batches checked against the BigInt reference');
});
