import t from 'tap';
import fc from 'fast-check';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_OPTIONS, PROTO_PATH } from '../../src/ingest/collector-proto.js';
import { encodeServerMessage } from '../../src/ingest/server-message-encode.js';
import { readLaneMessage, type LaneMessage } from '../../src/collector/server-message-decode.js';
import type { ServerMessage } from '../../src/ingest/session-link.js';

const SEED = 20261128;
t.comment(`fast-check seed ${SEED}`);

const def = protoLoader.loadSync(PROTO_PATH, PROTO_OPTIONS);
const session = (def['historian.collector.v1.CollectorIngest'] as unknown as { Session: protoLoader.MethodDefinition<unknown, unknown> }).Session;
const generic = (m: ServerMessage) => session.responseSerialize(m);
const read = (b: Buffer) => session.responseDeserialize(b) as Record<string, Record<string, unknown>> & { body: string };

/** What the generic decoder says, in readLaneMessage's terms. */
function expected(b: Buffer): LaneMessage {
  const m = read(b);
  const body = m.body as 'ack' | 'credit', f = m[body];
  const [second, third] = body === 'ack' ? [f.acked_through, f.points] : [f.points, f.available];
  return { body, lane: f.lane as LaneMessage['lane'], second: Number(second), third: Number(third) };
}

const varint = (v: number): number[] => { const out: number[] = []; while (v >= 128) { out.push((v % 128) | 128); v = Math.floor(v / 128); } out.push(v); return out; };
const lane = fc.constantFrom('LANE_UNSPECIFIED', 'LIVE', 'BACKFILL');
const safe = fc.oneof(fc.nat(300), fc.nat(0xffffffff), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));

t.test('an ack or a credit grant reads as the generic decoder reads it', async (t) => {
  const out: LaneMessage = { body: 'ack', lane: 'LIVE', second: 0, third: 0 };
  let runs = 0;
  fc.assert(fc.property(lane, safe, safe, fc.boolean(), (l, a, b, isAck) => {
    runs++;
    const m: ServerMessage = isAck ? { ack: { lane: l, acked_through: String(a), points: String(b) } } : { credit: { lane: l, points: String(a), available: String(b) } };
    for (const bytes of [encodeServerMessage(m) ?? generic(m), generic(m)]) {
      if (!readLaneMessage(bytes, out)) throw new Error(`not taken: ${bytes.toString('hex')}`);
      const want = expected(bytes);
      if (JSON.stringify(out) !== JSON.stringify(want)) throw new Error(`${JSON.stringify(out)} against ${JSON.stringify(want)}`);
    }
  }), { seed: SEED, numRuns: 1000 });
  t.equal(runs, 1000);
});

t.test('fields in another order or left out read as the generic decoder reads them', async (t) => {
  const out: LaneMessage = { body: 'ack', lane: 'LIVE', second: 0, third: 0 };
  let runs = 0;
  fc.assert(fc.property(fc.constantFrom(0x12, 0x1a), fc.shuffledSubarray([[0x08, 2], [0x10, 123_456_789], [0x18, 2 ** 40 + 7]] as Array<[number, number]>), (tag, fields) => {
    runs++;
    const inner = fields.flatMap(([key, v]) => [key, ...varint(v)]);
    const bytes = Buffer.from([tag, inner.length, ...inner]);
    if (!readLaneMessage(bytes, out)) throw new Error(`not taken: ${bytes.toString('hex')}`);
    const want = expected(bytes);
    if (JSON.stringify(out) !== JSON.stringify(want)) throw new Error(`${JSON.stringify(out)} against ${JSON.stringify(want)}`);
  }), { seed: SEED, numRuns: 200 });
  t.equal(runs, 200);
});

t.test('anything else is left to the generic decoder', async (t) => {
  const out: LaneMessage = { body: 'ack', lane: 'LIVE', second: 0, third: 0 };
  const ack = encodeServerMessage({ ack: { lane: 'LIVE', acked_through: '7', points: '1000' } }) as Buffer;
  const left: Array<[string, Buffer]> = [
    ['a heartbeat', generic({ heartbeat: { sent_ns: '123' } })],
    ['a welcome', generic({ welcome: { live_credit: '10', backfill_credit: '20', streams: [] } } as unknown as ServerMessage)],
    ['a lane number the contract does not have', Buffer.from([0x12, 6, 0x08, 3, 0x10, 1, 0x18, 1])],
    ['an unknown field', Buffer.from([0x12, 8, 0x08, 1, 0x10, 1, 0x18, 1, 0x20, 1])],
    ['a length-delimited field where a varint belongs', Buffer.from([0x12, 4, 0x0a, 0, 0x10, 1])],
    ['a number past 2^53', generic({ ack: { lane: 'LIVE', acked_through: '9007199254740993', points: '1' } })],
    ['the largest uint64', generic({ ack: { lane: 'LIVE', acked_through: '18446744073709551615', points: '1' } })],
    ['a varint cut short', Buffer.from([0x12, 3, 0x08, 1, 0x10])],
    ['a length past the message', ack.subarray(0, ack.length - 1)],
    ['trailing bytes', Buffer.concat([ack, Buffer.from([0])])],
    ['two bodies', Buffer.concat([ack, ack])],
    ['nothing', Buffer.alloc(0)],
  ];
  for (const [what, bytes] of left) t.notOk(readLaneMessage(bytes, out), what);
});
