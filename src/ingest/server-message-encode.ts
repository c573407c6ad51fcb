// The server's writing of the two messages it sends for every settled group, per session
// and lane: ServerMessage { ack } and ServerMessage { credit } (proto/collector.proto), by
// hand. proto-loader's generic serializer builds a message object from ours (fromObject),
// parsing each uint64 decimal string into a Long (Long.fromString, per digit), then encodes
// it through a growable writer: in the ingest thread's profile of the shared bulk load
// (bench:ingest --cpu-prof, 2026-11-28) serializing these small messages was ~4.5% of the
// thread, the Long parsing half of it.
// Both bodies are { Lane lane = 1; uint64 = 2; uint64 = 3 }; the bytes are those the generic
// serializer writes (every field written, zeros too, in field order), checked by
// test/ingest/server-message-encode.test.ts against it. Anything else (another body, a
// lane name the contract does not have, a number that is not a plain decimal below 2^53)
// returns null and goes to the generic serializer.
import type { ServerMessage } from './session-link.js';
import { varintSize, writeVarint } from './protobuf-varint.js';

const LANE_NUMBER: Readonly<Record<string, number>> = { LANE_UNSPECIFIED: 0, LIVE: 1, BACKFILL: 2 };
/** Outer field tags (field << 3 | 2): ack = 2, credit = 3. */
const ACK_TAG = 0x12, CREDIT_TAG = 0x1a;
/** Plain decimals that are certainly below 2^53 (up to 15 digits, no sign, no leading zero but "0"). */
const SAFE_DECIMAL = /^(?:0|[1-9][0-9]{0,14})$/;

function laneBody(tag: number, lane: string, second: string, third: string): Buffer | null {
  const l = LANE_NUMBER[lane];
  if (l === undefined || !SAFE_DECIMAL.test(second) || !SAFE_DECIMAL.test(third)) return null;
  const a = Number(second), c = Number(third);
  const inner = 3 + varintSize(l) + varintSize(a) + varintSize(c);
  const b = Buffer.allocUnsafe(2 + inner);
  let p = 0;
  b[p++] = tag; b[p++] = inner; // inner <= 3 + 1 + 8 + 8 bytes: one length byte
  b[p++] = 0x08; p = writeVarint(b, p, l);
  b[p++] = 0x10; p = writeVarint(b, p, a);
  b[p++] = 0x18; p = writeVarint(b, p, c);
  return b;
}

/** The message's bytes when it is an ack or a credit grant of the plain shape, else null. */
export function encodeServerMessage(m: ServerMessage): Buffer | null {
  if ('ack' in m) {
    const a = m.ack;
    return a !== null && typeof a === 'object' && typeof a.lane === 'string' && typeof a.acked_through === 'string' && typeof a.points === 'string'
      ? laneBody(ACK_TAG, a.lane, a.acked_through, a.points) : null;
  }
  if ('credit' in m) {
    const c = m.credit;
    return c !== null && typeof c === 'object' && typeof c.lane === 'string' && typeof c.points === 'string' && typeof c.available === 'string'
      ? laneBody(CREDIT_TAG, c.lane, c.points, c.available) : null;
  }
  return null;
}
