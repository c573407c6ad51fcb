import t, { type Test } from 'tap';
import fc from 'fast-check';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_OPTIONS, PROTO_PATH } from '../../src/ingest/collector-proto.js';
import { decodeBatchMessage } from '../../src/ingest/batch-message-decode.js';
import { encodeBatchMessage } from '../../src/collector/batch-message.js';

const SEED = 20261128;
t.comment(`fast-check seed ${SEED}`);

const def = protoLoader.loadSync(PROTO_PATH, PROTO_OPTIONS);
const session = (def['historian.collector.v1.CollectorIngest'] as unknown as { Session: protoLoader.MethodDefinition<unknown, unknown> }).Session;
const generic = (b: Buffer) => session.requestDeserialize(b) as { body?: string; batch?: Record<string, unknown> };
const encode = (m: unknown) => session.requestSerialize(m);

/** The generic decoder's batch with Buffers as byte arrays, for deep comparison. */
function plain(batch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(batch)) out[k] = Buffer.isBuffer(v) ? [...v] : v;
  return out;
}

function same(t: Test, buf: Buffer): boolean {
  const fast = decodeBatchMessage(buf);
  if (fast === null) return false;
  const g = generic(buf);
  t.equal(g.body, 'batch');
  t.same(plain(fast as unknown as Record<string, unknown>), plain(g.batch as Record<string, unknown>));
  return true;
}

const bytes = fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a));
const u64 = fc.bigInt(0n, 2n ** 64n - 1n).map(String);
const i64 = fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n).map(String);
const batchArb = fc.record({
  stream: fc.nat(0xffffffff), lane: fc.constantFrom('LANE_UNSPECIFIED', 'LIVE', 'BACKFILL'), seq: u64, count: fc.nat(0xffffffff),
  ts_ns: bytes, f64: bytes, i64: bytes, bool: bytes, enum_ordinal: bytes, str: fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 4 }),
  quality: bytes, collector_receipt_ns: i64, streams: bytes,
}, { requiredKeys: [] });

t.test('any DataBatch the generic encoder writes reads the same as the generic decoder reads it', async (t) => {
  let fast = 0, runs = 0;
  fc.assert(fc.property(batchArb, (batch) => {
    runs++;
    if (same(t, encode({ batch }))) fast++;
  }), { seed: SEED, numRuns: 300 });
  // every field here is plain: the hand reader takes all of them
  t.equal(fast, runs);
});

t.test('the collector client\'s batches take the hand reader, for every value type', async (t) => {
  const times = BigInt64Array.from([1n, 2n, 1_700_000_000_000_000_000n]);
  const cases = [
    { type: 'float64' as const, values: Float64Array.from([1.5, -2, 3e300]) },
    { type: 'int64' as const, values: BigInt64Array.from([-1n, 0n, 2n ** 62n]) },
    { type: 'boolean' as const, values: Uint8Array.from([0, 1, 1]) },
    { type: 'enum' as const, values: Int32Array.from([3, -1, 7]) },
    { type: 'string' as const, values: ['a', 'é€', ''] },
  ];
  for (const c of cases) {
    for (const quality of [null, Uint32Array.from([192, 0, 64])]) {
      for (const receiptNs of [0n, 1_700_000_000_123_456_789n, -5n]) {
        t.ok(same(t, encodeBatchMessage({ stream: 7, lane: 'BACKFILL', seq: 2 ** 40, type: c.type, times, values: c.values, quality, receiptNs })), `${c.type} quality ${quality !== null} receipt ${receiptNs}`);
        t.ok(same(t, encodeBatchMessage({ stream: 7, lane: 'LIVE', seq: 3, type: c.type, times, values: c.values, quality, receiptNs, streams: Uint32Array.of(4, 0, 2 ** 32 - 1) })), `${c.type} scan, quality ${quality !== null} receipt ${receiptNs}`);
      }
    }
  }
});

t.test('other messages and surprising shapes go to the generic decoder', async (t) => {
  t.equal(decodeBatchMessage(encode({ heartbeat: { sent_ns: '5' } })), null, 'heartbeat');
  t.equal(decodeBatchMessage(encode({ watermark: { stream: 1, through_ns: '9' } })), null, 'watermark');
  t.equal(decodeBatchMessage(encode({ open: { collector_id: 'c', session_epoch: '1', streams: [], agent: 'a' } })), null, 'open');
  t.equal(decodeBatchMessage(Buffer.alloc(0)), null, 'empty message');
  const ok = encode({ batch: { stream: 1, lane: 'LIVE', seq: '1', count: 1, ts_ns: Buffer.alloc(8), f64: Buffer.alloc(8) } });
  t.not(decodeBatchMessage(ok), null, 'the plain batch itself is read by hand');
  // an unknown field inside the batch (field 15, length-delimited)
  const inner = Buffer.concat([ok.subarray(2), Buffer.from([(15 << 3) | 2, 1, 0])]);
  t.equal(decodeBatchMessage(Buffer.concat([Buffer.from([0x12, inner.length]), inner])), null, 'unknown field');
  // a lane number the contract does not name
  const lane9 = Buffer.from(ok); lane9[lane9.indexOf((2 << 3) | 0, 2) + 1] = 9;
  t.equal(decodeBatchMessage(lane9), null, 'unknown lane number');
  t.equal(decodeBatchMessage(ok.subarray(0, ok.length - 1)), null, 'truncated');
  t.equal(decodeBatchMessage(Buffer.concat([ok, encode({ heartbeat: { sent_ns: '1' } })])), null, 'a second body after the batch');
});

t.test('random bytes: the hand reader reads them as the generic decoder does, or leaves them to it', async (t) => {
  let read = 0;
  fc.assert(fc.property(fc.uint8Array({ maxLength: 80 }), (a) => {
    const buf = Buffer.concat([Buffer.from([0x12, a.length]), Buffer.from(a)]);
    if (a.length > 127) return;
    const fast = decodeBatchMessage(buf);
    if (fast === null) return;
    read++;
    const g = generic(buf);
    t.same(plain(fast as unknown as Record<string, unknown>), plain(g.batch as Record<string, unknown>));
  }), { seed: SEED, numRuns: 2000 });
  t.comment(`${read} of 2000 random bodies were plain`);
});
