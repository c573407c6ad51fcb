// Little-endian byte writer and bounds-checked reader for chunk sections.
//
// The writer owns one growable buffer (grown by ~1.5x, never shrunk) so that encoding a
// stream of chunks reuses the same memory; `finish()` returns a copy. Bit-packed
// payloads are written as 32-bit words at 4-byte-aligned offsets of that buffer, which
// is why the writer keeps a Uint32Array view next to the byte view.
//
// The reader never reads past its end: every structural read checks the remaining bytes
// and throws ChunkCorruptError naming what was being read, so a damaged chunk can
// neither crash nor hang the decoder.

import { ChunkCorruptError } from './chunk-types.js';

if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) {
  // Word views of chunk bytes assume the platform order equals the on-disk order.
  throw new Error('BUG: chunk codecs need a little-endian platform');
}

export class ChunkWriter {
  bytes: Uint8Array;
  words: Uint32Array;
  view: DataView;
  pos = 0;

  constructor(initialBytes = 8192) {
    const buf = new ArrayBuffer(initialBytes);
    this.bytes = new Uint8Array(buf);
    this.words = new Uint32Array(buf);
    this.view = new DataView(buf);
  }

  reset(): void {
    this.pos = 0;
  }

  /** Makes room for `n` more bytes; keeps the buffer length a multiple of 8 so word views fit. */
  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.bytes.length) return;
    let size = this.bytes.length;
    while (size < need) size = Math.ceil((size * 1.5) / 8) * 8;
    const buf = new ArrayBuffer(size);
    const bytes = new Uint8Array(buf);
    bytes.set(this.bytes.subarray(0, this.pos));
    this.bytes = bytes;
    this.words = new Uint32Array(buf);
    this.view = new DataView(buf);
  }

  u8(v: number): void {
    this.ensure(1);
    this.bytes[this.pos++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    this.view.setUint16(this.pos, v, true);
    this.pos += 2;
  }

  u32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }

  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  i64(v: bigint): void {
    this.ensure(8);
    this.view.setBigInt64(this.pos, v, true);
    this.pos += 8;
  }

  /** Unsigned LEB128 of a non-negative integer number up to 2^54 (exact in a double). */
  varint(v: number): void {
    this.ensure(8);
    while (v >= 128) {
      this.bytes[this.pos++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    this.bytes[this.pos++] = v;
  }

  /** Zigzag then LEB128, for signed integers with |v| < 2^53. */
  svarint(v: number): void {
    this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  /** Unsigned LEB128 of a 64-bit unsigned bigint (up to 10 bytes). */
  bigVarint(v: bigint): void {
    this.ensure(10);
    while (v >= 128n) {
      this.bytes[this.pos++] = Number(v & 127n) | 128;
      v >>= 7n;
    }
    this.bytes[this.pos++] = Number(v);
  }

  raw(src: Uint8Array): void {
    this.ensure(src.length);
    this.bytes.set(src, this.pos);
    this.pos += src.length;
  }

  /** Pads with zero bytes to the next multiple of 4 (relative to the chunk start). */
  align4(): void {
    while ((this.pos & 3) !== 0) this.u8(0);
  }

  /** Reserves `n` zeroed 32-bit words at an aligned position and returns their word index. */
  reserveWords(n: number): number {
    this.align4();
    this.ensure(n * 4);
    const at = this.pos >>> 2;
    this.words.fill(0, at, at + n);
    this.pos += n * 4;
    return at;
  }

  finish(): Uint8Array {
    return this.bytes.slice(0, this.pos);
  }
}

/**
 * Reads a sealed chunk. `words` is a word view of the same bytes (aligned copy when the
 * caller's bytes are not 4-byte aligned); word index = byte offset / 4.
 */
export class ChunkReader {
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly words: Uint32Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  fail(what: string): never {
    throw new ChunkCorruptError(`chunk corrupt: ${what} at byte ${this.pos} of ${this.bytes.length}`, this.bytes.length);
  }

  need(n: number, what: string): void {
    if (n < 0 || this.pos + n > this.end) this.fail(`${what} runs past the end of its section (needs ${n} bytes)`);
  }

  u8(what: string): number {
    this.need(1, what);
    return this.bytes[this.pos++];
  }

  varint(what: string): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= this.end) this.fail(`${what} varint runs past the end of its section`);
      const b = this.bytes[this.pos++];
      result += (b & 127) * scale;
      if (b < 128) return result;
      scale *= 128;
    }
    return this.fail(`${what} varint longer than 8 bytes`);
  }

  svarint(what: string): number {
    const z = this.varint(what);
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  bigVarint(what: string): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.fail(`${what} varint runs past the end of its section`);
      const b = this.bytes[this.pos++];
      result |= BigInt(b & 127) << shift;
      if (b < 128) return result;
      shift += 7n;
    }
    return this.fail(`${what} varint longer than 10 bytes`);
  }

  align4(): void {
    this.pos = (this.pos + 3) & ~3;
    if (this.pos > this.end) this.fail('alignment padding');
  }

  /** Claims `n` aligned words and returns the word index of the first. */
  takeWords(n: number, what: string): number {
    this.align4();
    this.need(n * 4, what);
    const at = this.pos >>> 2;
    this.pos += n * 4;
    return at;
  }

  take(n: number, what: string): Uint8Array {
    this.need(n, what);
    const s = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
}

/** Bytes of x (an integer, 0 <= x < 2^53) as a varint (LEB128, 7 bits a byte): what the encoders size their layouts with. */
export function varintLen(x: number): number {
  let n = 1;
  while (x >= 128) {
    x = Math.floor(x / 128);
    n++;
  }
  return n;
}

/** Bytes of x as an svarint (zigzag, then varint). */
export const svarintLen = (x: number): number => varintLen(x >= 0 ? x * 2 : -x * 2 - 1);
