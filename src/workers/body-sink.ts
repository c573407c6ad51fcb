// A growable byte buffer that read tasks serialise response bodies into, one per worker
// and reused across tasks (grown by 1.5x, never shrunk), so a raw read of millions of
// points allocates nothing per point. JSON and msgpack writers both append here; the
// finished body is copied once into a SharedArrayBuffer for the main thread.

const INITIAL_BYTES = 1 << 20;

export class BodySink {
  buf: Uint8Array;
  view: DataView;
  pos = 0;

  constructor(initial = INITIAL_BYTES) {
    this.buf = new Uint8Array(initial);
    this.view = new DataView(this.buf.buffer);
  }

  reset(): void {
    this.pos = 0;
  }

  /** Makes room for n more bytes; callers reserve once per point, then write unchecked. */
  reserve(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.byteLength) return;
    let size = this.buf.byteLength;
    while (size < need) size = Math.ceil(size * 1.5);
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  byte(b: number): void {
    this.buf[this.pos++] = b;
  }

  /** Pre-encoded bytes (member names, constant fragments). */
  bytes(b: Uint8Array): void {
    this.reserve(b.byteLength);
    this.buf.set(b, this.pos);
    this.pos += b.byteLength;
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
    this.pos += Buffer.from(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength).write(s, this.pos, 'utf8');
  }

  /** The body so far, copied into a SharedArrayBuffer of exactly its length. */
  toShared(): SharedArrayBuffer {
    const sab = new SharedArrayBuffer(this.pos);
    new Uint8Array(sab).set(this.buf.subarray(0, this.pos));
    return sab;
  }
}

/** UTF-8 bytes of a constant fragment, encoded once at module load. */
export const fragment = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));
