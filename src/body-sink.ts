// A growable byte buffer that read tasks serialise response bodies into, so a raw read
// of millions of points allocates nothing per point. JSON and msgpack writers both append
// here. In a read worker the buffer is the body region of a reusable SharedArrayBuffer
// slab (body-slabs.ts, attached per task) and growing moves to a larger slab; elsewhere
// (tests, tools) it is a plain array grown by 1.5x.

const INITIAL_BYTES = 1 << 20;

/** Returns a buffer of at least `need` bytes holding the first `used` bytes of the old one. */
export type SinkGrowth = (used: number, need: number) => Uint8Array;

export class BodySink {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  private readonly growth: SinkGrowth | null;

  constructor(initial = INITIAL_BYTES, growth: SinkGrowth | null = null) {
    this.buf = new Uint8Array(initial);
    this.view = new DataView(this.buf.buffer);
    this.growth = growth;
  }

  /** Writes from now on go to `buf` from its start. */
  attach(buf: Uint8Array): void {
    this.buf = buf;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = 0;
  }

  reset(): void {
    this.pos = 0;
  }

  /** Makes room for n more bytes; callers reserve once per point, then write unchecked. */
  reserve(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.byteLength) return;
    let next: Uint8Array;
    if (this.growth !== null) next = this.growth(this.pos, need);
    else {
      let size = this.buf.byteLength;
      while (size < need) size = Math.ceil(size * 1.5);
      next = new Uint8Array(size);
      next.set(this.buf.subarray(0, this.pos));
    }
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength);
  }

  /** One byte, room made when full (a separator between items: not a per-point path). */
  byte(b: number): void {
    if (this.pos >= this.buf.byteLength) this.reserve(1);
    this.buf[this.pos++] = b;
  }

  /** Pre-encoded bytes (member names, constant fragments). */
  bytes(b: Uint8Array): void {
    this.reserve(b.byteLength);
    this.buf.set(b, this.pos);
    this.pos += b.byteLength;
  }

  /** Bytes [from, to) of pre-encoded text, in a loop: for pieces of a few bytes, set() costs more than the copy. */
  bytesRange(b: Uint8Array, from: number, to: number): void {
    this.reserve(to - from);
    const buf = this.buf;
    let p = this.pos;
    for (let i = from; i < to; i++) buf[p++] = b[i];
    this.pos = p;
  }

  /** A string known to be ASCII (digits, JSON text produced by JSON.stringify of ASCII). */
  ascii(s: string): void {
    this.reserve(s.length);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Any string as UTF-8. */
  utf8(s: string): void {
    this.reserve(s.length * 3);
    this.pos += utf8Into(this.buf, this.pos, s);
  }

  /**
   * A string as a JSON string literal. Printable ASCII without quote or backslash (batch
   * ids, states, units: what string series hold) is copied char by char between quotes;
   * anything else goes through JSON.stringify. The copy costs a fraction of
   * JSON.stringify plus a UTF-8 write per string.
   */
  jsonString(s: string): void {
    const len = s.length;
    this.reserve(len + 2);
    const b = this.buf;
    const p = this.pos + 1;
    let i = 0;
    for (; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 34 || c === 92) break;
      b[p + i] = c;
    }
    if (i === len) {
      b[this.pos] = 34;
      b[p + len] = 34;
      this.pos = p + len + 1;
      return;
    }
    this.utf8(JSON.stringify(s));
  }
}

const encoder = new TextEncoder();
/** Encodes s as UTF-8 at buf[at..] (room already reserved); returns the bytes written. */
export const utf8Into = (buf: Uint8Array, at: number, s: string): number => encoder.encodeInto(s, buf.subarray(at)).written;

/** UTF-8 bytes of a constant fragment, encoded once at module load. */
export const fragment = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));
