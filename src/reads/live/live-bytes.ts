// The bytes of `points` events. A dispatch writes each column's points once per formatting
// (value type, enum set, quality floor, unit) into the hub's arena; each subscription then
// copies the ranges it takes, behind its attributes' fixed heads, into one payload
// `{"attributes":[…]}`, written with free room on both sides so that each transport puts
// its frame around it in place (SSE's `id:`/`event:`/`data:` lines, the WebSocket's
// `{"type":"points","id":…,"event_id":…,` members) and hands the socket one contiguous
// view: no string per point or per event, and no UTF-8 encoding of the event at the write.
// uWS copies what it cannot send at once, so both buffers are reused from event to event.
import { BodySink } from '../../body-sink.js';
import type { ValueType } from '../../storage/encoding/chunk-types.js';
import type { LiveColumns } from './commit-source.js';
import { writePoints, type PointFilter } from './live-format.js';

/** One column's points array as bytes in the arena. */
export interface PointsRange {
  start: number;
  end: number;
  count: number;
}

/** Past this a buffer is replaced by a small one once used (one burst must not keep its room). */
const KEEP_BYTES = 8 << 20;
const INITIAL_BYTES = 1 << 16;

/** Formatted columns of one dispatch (or of one replayed group), reset before each. */
export class PointsArena {
  readonly sink = new BodySink(INITIAL_BYTES);
  private readonly formatted = new Map<LiveColumns, Map<string, PointsRange>>();

  reset(): void {
    if (this.sink.buf.byteLength > KEEP_BYTES) this.sink.attach(new Uint8Array(INITIAL_BYTES));
    this.sink.reset();
    this.formatted.clear();
  }

  /** The columns' points under one formatting, written once per key (`key` names type, enum set and filter). */
  shared(c: LiveColumns, type: ValueType | null, enumSet: string | null, filter: PointFilter, key: string): PointsRange {
    let byKey = this.formatted.get(c);
    if (!byKey) { byKey = new Map(); this.formatted.set(c, byKey); }
    let r = byKey.get(key);
    if (r === undefined) { r = this.own(c, type, enumSet, filter, -1); byKey.set(key, r); }
    return r;
  }

  /** The columns' points for one subscription alone (index `skip` left out). */
  own(c: LiveColumns, type: ValueType | null, enumSet: string | null, filter: PointFilter, skip: number): PointsRange {
    const start = this.sink.pos;
    const count = writePoints(this.sink, c, type, enumSet, filter, skip);
    return { start, end: this.sink.pos, count };
  }
}

/** Free bytes before a payload: the longest frame prefix (a WebSocket's, with a 128-character id JSON-escaped) fits. */
export const PAYLOAD_HEADROOM = 1024;
/** Free bytes after a payload (SSE's blank line). */
export const PAYLOAD_TAILROOM = 2;

/**
 * A `points` event's payload `{"attributes":[…]}` at buf[start, end), with PAYLOAD_HEADROOM
 * free bytes before and PAYLOAD_TAILROOM after. A transport may write its frame into that
 * room and over the opening brace, and must leave buf[start] a `{` when it returns (the
 * same payload goes to every subscription sharing it); valid until the next payload.
 */
export interface PointsPayload {
  buf: Uint8Array;
  start: number;
  end: number;
}

/** Composes payloads, one at a time, in one reused buffer. */
class PayloadWriter {
  private readonly sink = new BodySink(INITIAL_BYTES);
  private entries = 0;

  begin(): void {
    if (this.sink.buf.byteLength > KEEP_BYTES) this.sink.attach(new Uint8Array(INITIAL_BYTES));
    this.sink.reset();
    this.sink.reserve(PAYLOAD_HEADROOM + 16);
    this.sink.pos = PAYLOAD_HEADROOM;
    this.sink.ascii('{"attributes":[');
    this.entries = 0;
  }

  /** One attribute's member: its head (`{"attribute_id":…,"points":`), the points bytes at from[start, end), `}`. */
  entry(head: Uint8Array, from: Uint8Array, start: number, end: number): void {
    const sink = this.sink;
    sink.reserve(head.byteLength + (end - start) + 2);
    const b = sink.buf;
    if (this.entries++ > 0) b[sink.pos++] = 44;
    b.set(head, sink.pos);
    sink.pos += head.byteLength;
    b.set(from.subarray(start, end), sink.pos);
    sink.pos += end - start;
    b[sink.pos++] = 125;
  }

  end(): PointsPayload {
    const sink = this.sink;
    sink.reserve(2 + PAYLOAD_TAILROOM);
    sink.buf[sink.pos++] = 93;
    sink.buf[sink.pos++] = 125;
    return { buf: sink.buf, start: PAYLOAD_HEADROOM, end: sink.pos };
  }
}

export const payloads = new PayloadWriter();

/** Writes an ASCII string into buf at p (frame prefixes: ids and event names); returns the position after it. */
export function putAsciiAt(buf: Uint8Array, p: number, s: string): number {
  for (let k = 0; k < s.length; k++) buf[p + k] = s.charCodeAt(k);
  return p + s.length;
}
