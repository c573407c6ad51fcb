// The hand-written DataBatch encoder against the contract: protobufjs (through
// proto-loader, as the server decodes) must read back every field of any batch, and the
// server's column decoder must get the same points.
import t from 'tap';
import fc from 'fast-check';
import * as protoLoader from '@grpc/proto-loader';
import { encodeBatchMessage, writeBatchMessage, type BatchFields } from '../../src/collector/batch-message.js';
import { decodeBatchColumns, type WireBatch } from '../../src/ingest/batch-columns.js';
import { PROTO_PATH, PROTO_OPTIONS } from '../../src/ingest/collector-proto.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';

const def = protoLoader.loadSync(PROTO_PATH, PROTO_OPTIONS);
const session = (def['historian.collector.v1.CollectorIngest'] as Record<string, protoLoader.MethodDefinition<unknown, unknown>>).Session;
const decode = (b: Buffer) => session.requestDeserialize(b) as { body: string; batch: WireBatch };

const INT64 = fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n });

const batch = fc.constantFrom<ValueType>('float64', 'int64', 'boolean', 'enum', 'string').chain((type) => fc.integer({ min: 1, max: 40 }).chain((n) => fc.record({
  stream: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
  lane: fc.constantFrom<'LIVE' | 'BACKFILL'>('LIVE', 'BACKFILL'),
  seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  type: fc.constant(type),
  times: fc.array(fc.bigInt({ min: 0n, max: (1n << 62n) }), { minLength: n, maxLength: n }).map((a) => BigInt64Array.from(a)),
  values: ({
    float64: fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: n, maxLength: n }).map((a) => Float64Array.from(a)),
    int64: fc.array(INT64, { minLength: n, maxLength: n }).map((a) => BigInt64Array.from(a)),
    boolean: fc.array(fc.integer({ min: 0, max: 1 }), { minLength: n, maxLength: n }).map((a) => Uint8Array.from(a)),
    enum: fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { minLength: n, maxLength: n }).map((a) => Int32Array.from(a)),
    string: fc.array(fc.string({ unit: 'binary', maxLength: 20 }), { minLength: n, maxLength: n }),
  } as Record<ValueType, fc.Arbitrary<BatchFields['values']>>)[type],
  quality: fc.option(fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { minLength: n, maxLength: n }).map((a) => Uint32Array.from(a)), { nil: null }),
  receiptNs: INT64,
}))) as fc.Arbitrary<BatchFields>;

const bytes = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

t.test('protobufjs reads back every field of any batch, and the server decoder the same points', async (t) => {
  let checked = 0;
  fc.assert(fc.property(batch, (b) => {
    const m = decode(encodeBatchMessage(b));
    if (m.body !== 'batch') throw new Error(`body ${m.body}`);
    const w = m.batch;
    const expect = (what: string, ok: boolean) => { if (!ok) throw new Error(`${what} differs`); };
    expect('stream', w.stream === b.stream);
    expect('lane', w.lane === b.lane);
    expect('seq', w.seq === String(b.seq));
    expect('count', w.count === b.times.length);
    expect('collector_receipt_ns', w.collector_receipt_ns === b.receiptNs.toString());
    expect('ts_ns', w.ts_ns.equals(bytes(b.times)));
    expect('quality', b.quality === null ? w.quality.length === 0 : w.quality.equals(bytes(b.quality)));
    const field = { float64: 'f64', int64: 'i64', boolean: 'bool', enum: 'enum_ordinal', string: 'str' } as const;
    for (const f of ['f64', 'i64', 'bool', 'enum_ordinal'] as const) {
      expect(f, f === field[b.type] ? w[f].equals(bytes(b.values as Uint8Array)) : w[f].length === 0);
    }
    expect('str', b.type === 'string' ? JSON.stringify(w.str) === JSON.stringify(b.values) : w.str.length === 0);
    const d = decodeBatchColumns(w, b.type, 1_000_000, 1n << 62n);
    if (!d.ok) throw new Error(`server decoder refused: ${d.detail}`);
    expect('server times', bytes(d.cols.times).equals(bytes(b.times)));
    checked++;
  }), { numRuns: 400 });
  t.equal(checked, 400);
});

t.test('written into a larger frame at an offset, the message is the same bytes', async (t) => {
  const b: BatchFields = { stream: 7, lane: 'BACKFILL', seq: 300, type: 'float64', times: BigInt64Array.from([1n, 2n, 3n]), values: Float64Array.from([0.5, -1, 2e300]), quality: null, receiptNs: -5n };
  const alone = encodeBatchMessage(b);
  const frame = Buffer.alloc(4096, 0xee);
  const { buf, bytes: n } = writeBatchMessage(b, (need) => { t.ok(need + 5 <= frame.length); return frame; }, 5);
  t.equal(buf, frame);
  t.equal(n, alone.length);
  t.ok(frame.subarray(5, 5 + n).equals(alone), 'same bytes after the offset');
  t.equal(frame[4], 0xee, 'nothing written before the offset');
  t.equal(frame[5 + n], 0xee, 'nothing written past the message');
});
