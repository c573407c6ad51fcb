import t from 'tap';
import fc from 'fast-check';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_OPTIONS, PROTO_PATH } from '../../src/ingest/collector-proto.js';
import { encodeServerMessage } from '../../src/ingest/server-message-encode.js';
import type { ServerMessage } from '../../src/ingest/session-link.js';

const SEED = 20261128;
t.comment(`fast-check seed ${SEED}`);

const def = protoLoader.loadSync(PROTO_PATH, PROTO_OPTIONS);
const session = (def['historian.collector.v1.CollectorIngest'] as unknown as { Session: protoLoader.MethodDefinition<unknown, unknown> }).Session;
const generic = (m: ServerMessage) => session.responseSerialize(m);
const read = (b: Buffer) => session.responseDeserialize(b) as Record<string, unknown>;

const lane = fc.constantFrom('LANE_UNSPECIFIED', 'LIVE', 'BACKFILL');
const safe = fc.oneof(fc.nat(300), fc.nat(0xffffffff), fc.integer({ min: 0, max: 999_999_999_999_999 })).map(String);

t.test('an ack or a credit grant is written with the bytes the generic serializer writes', async (t) => {
  let runs = 0;
  fc.assert(fc.property(lane, safe, safe, fc.boolean(), (l, a, b, isAck) => {
    runs++;
    const m: ServerMessage = isAck ? { ack: { lane: l, acked_through: a, points: b } } : { credit: { lane: l, points: a, available: b } };
    const fast = encodeServerMessage(m);
    if (fast === null) throw new Error(`not taken: ${JSON.stringify(m)}`);
    if (!fast.equals(generic(m))) throw new Error(`bytes differ for ${JSON.stringify(m)}: ${fast.toString('hex')} / ${generic(m).toString('hex')}`);
  }), { seed: SEED, numRuns: 1000 });
  t.equal(runs, 1000);
  const back = read(encodeServerMessage({ ack: { lane: 'LIVE', acked_through: '123456789012345', points: '1000' } })!);
  t.same(back.ack, { lane: 'LIVE', acked_through: '123456789012345', points: '1000' });
});

t.test('anything else is left to the generic serializer', async (t) => {
  const left: ServerMessage[] = [
    { ack: { lane: 'SIDEWAYS', acked_through: '1', points: '1' } },
    { ack: { lane: 'LIVE', acked_through: '18446744073709551615', points: '1' } },
    { ack: { lane: 'LIVE', acked_through: '9007199254740993', points: '1' } },
    { credit: { lane: 'LIVE', points: '-1', available: '0' } },
    { credit: { lane: 'LIVE', points: '01', available: '0' } },
    { credit: { lane: 'LIVE', points: '1e3', available: '0' } },
    { heartbeat: { sent_ns: '1' } },
    { rejected: { lane: 'LIVE', seq: '1', stream: 0, reason: 'fenced', detail: '', retryable: true, expected_seq: '0' } },
  ];
  for (const m of left) t.equal(encodeServerMessage(m), null, JSON.stringify(m));
  // and the generic one still writes the large ones exactly
  t.same(read(generic(left[1])).ack, { lane: 'LIVE', acked_through: '18446744073709551615', points: '1' });
});
