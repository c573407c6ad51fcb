// The collector client's reading of the two messages the server sends for every settled
// group: ServerMessage { ack } and ServerMessage { credit } (proto/collector.proto), by hand,
// the mirror of the server's writing of them (src/ingest/server-message-encode.ts).
// proto-loader's generic decoder builds a message object per message, turns each uint64
// into a Long and then into a decimal string (longs: String) that the client parses back
// into a number: in the bench:ingest client's profile (2026-11-28, ~12,000 of these
// messages a load) that was ~0.35 CPU-s of the client's ~2.5.
// Both bodies are { Lane lane = 1; uint64 = 2; uint64 = 3 }. Fields may come in any order or
// be left out (zero); anything else (another body, an unknown field or wire type, a lane
// number the contract does not have, a number past 2^53, trailing bytes) is not taken and
// goes to the generic decoder.

export type WireLaneName = 'LANE_UNSPECIFIED' | 'LIVE' | 'BACKFILL';

/** An ack (second: acked_through, third: points) or a credit grant (second: points, third: available). */
export interface LaneMessage {
  body: 'ack' | 'credit';
  lane: WireLaneName;
  second: number;
  third: number;
}

const LANES: readonly WireLaneName[] = ['LANE_UNSPECIFIED', 'LIVE', 'BACKFILL'];
/** Outer field tags (field << 3 | 2): ack = 2, credit = 3. */
const ACK_TAG = 0x12, CREDIT_TAG = 0x1a;
/** The 8th byte of a varint starts at bit 49: with it, any value below 2^56 is read exactly enough to be refused. */
const MAX_VARINT_BYTES = 8;

/**
 * Reads `b` (one ServerMessage's bytes) into `out` when it is an ack or a credit grant;
 * returns false, `out` left in an unspecified state, when it is anything else.
 */
export function readLaneMessage(b: Uint8Array, out: LaneMessage): boolean {
  if (b.length < 2 || b[1] >= 128) return false; // the body is at most 1 + 3 x 9 bytes: a one-byte length
  const tag = b[0];
  if (tag !== ACK_TAG && tag !== CREDIT_TAG) return false;
  const end = 2 + b[1];
  if (end !== b.length) return false;
  let lane = 0, second = 0, third = 0;
  let p = 2;
  while (p < end) {
    const key = b[p++];
    let v = 0, mul = 1, n = 0, byte = 128;
    while (byte >= 128) {
      if (p >= end || n === MAX_VARINT_BYTES) return false;
      byte = b[p++];
      v += (byte & 127) * mul;
      mul *= 128;
      n++;
    }
    if (v > Number.MAX_SAFE_INTEGER) return false;
    if (key === 0x08) lane = v;
    else if (key === 0x10) second = v;
    else if (key === 0x18) third = v;
    else return false;
  }
  if (lane >= LANES.length) return false;
  out.body = tag === ACK_TAG ? 'ack' : 'credit';
  out.lane = LANES[lane];
  out.second = second;
  out.third = third;
  return true;
}
