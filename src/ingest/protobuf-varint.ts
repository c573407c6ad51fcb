// Protobuf varints of non-negative integers below 2^53 (plain numbers, no Long), for the
// collector contract's messages written by hand: the collector client's DataBatch
// (src/collector/batch-message.ts) and the server's acks and credit grants
// (server-message-encode.ts). Division, not shifts: shifts would cut values past 2^31.

/** Bytes of the varint of `v`. */
export function varintSize(v: number): number {
  let n = 1;
  while (v >= 128) { v = Math.floor(v / 128); n++; }
  return n;
}

/** Writes the varint of `v` at `at`; returns the offset after it. */
export function writeVarint(buf: Buffer, at: number, v: number): number {
  while (v >= 128) { buf[at++] = (v % 128) | 128; v = Math.floor(v / 128); }
  buf[at++] = v;
  return at;
}
