// The collector's store-and-forward buffer: batches that are not known to be durable on
// the server (sent while disconnected, or in flight when a session ended) are appended to
// a log on disk and replayed, oldest first, on the backfill lane after reconnecting. The
// replay position advances only when the server acknowledges a replayed batch, and is
// itself written to disk, so a collector restart resumes the replay where it stopped;
// re-sending a batch the server already had is harmless (identical points are no-ops).
//
// Record layout (little-endian):
//   u32 magic 0x48424631 ("HBF1")  u32 stream  u32 count  u32 value bytes
//   count x i64 ts_ns | value bytes | count x u32 quality
// String values are stored as a JSON array in the value bytes.
import { closeSync, existsSync, truncateSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeFileSync, writeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { BatchColumns } from '../ingest/batch-columns.js';

const MAGIC = 0x48424631;
const HEADER = 16;

/** Length of the log up to its last complete record: a torn tail (a crash mid-append) is cut off. */
function completeLength(bytes: Buffer): number {
  let off = 0;
  while (off + HEADER <= bytes.byteLength && bytes.readUInt32LE(off) === MAGIC) {
    const n = bytes.readUInt32LE(off + 8), vb = bytes.readUInt32LE(off + 12);
    const len = HEADER + n * 8 + vb + n * 4;
    if (off + len > bytes.byteLength) break;
    off += len;
  }
  return off;
}

export interface BufferedBatch {
  /** Byte offset just after this record (the replay position once it is acknowledged). */
  end: number;
  stream: number;
  cols: BatchColumns;
}

export class ForwardBuffer {
  private readonly logPath: string;
  private readonly posPath: string;
  private fd: number;
  private size: number;
  /** Offset up to which every record has been acknowledged. */
  private done: number;

  constructor(dir: string, private readonly types: readonly ValueType[]) {
    mkdirSync(dir, { recursive: true });
    this.logPath = join(dir, 'forward.log');
    this.posPath = join(dir, 'forward.pos');
    if (existsSync(this.logPath)) truncateSync(this.logPath, completeLength(readFileSync(this.logPath)));
    this.fd = openSync(this.logPath, 'a+');
    this.size = statSync(this.logPath).size;
    this.done = existsSync(this.posPath) ? Number(readFileSync(this.posPath, 'utf8')) || 0 : 0;
    if (this.done > this.size) this.done = this.size;
  }

  /** Bytes not yet acknowledged. */
  pendingBytes(): number {
    return this.size - this.done;
  }

  /** Appends a batch durably (fsync), so a collector crash does not lose it either. */
  append(stream: number, cols: BatchColumns): void {
    const n = cols.times.length;
    const type = this.types[stream];
    const valueBytes = type === 'string'
      ? Buffer.from(JSON.stringify(cols.values as string[]), 'utf8')
      : Buffer.from((cols.values as ArrayBufferView).buffer, (cols.values as ArrayBufferView).byteOffset, (cols.values as ArrayBufferView).byteLength);
    const rec = Buffer.allocUnsafe(HEADER + n * 8 + valueBytes.byteLength + n * 4);
    rec.writeUInt32LE(MAGIC, 0);
    rec.writeUInt32LE(stream, 4);
    rec.writeUInt32LE(n, 8);
    rec.writeUInt32LE(valueBytes.byteLength, 12);
    Buffer.from(cols.times.buffer, cols.times.byteOffset, n * 8).copy(rec, HEADER);
    valueBytes.copy(rec, HEADER + n * 8);
    Buffer.from(cols.quality.buffer, cols.quality.byteOffset, n * 4).copy(rec, HEADER + n * 8 + valueBytes.byteLength);
    writeSync(this.fd, rec);
    fsyncSync(this.fd);
    this.size += rec.byteLength;
  }

  /** Reads the unacknowledged records from `from` (default: the replay position), at most `max`. */
  read(max: number, from = this.done): BufferedBatch[] {
    if (from >= this.size) return [];
    const bytes = readFileSync(this.logPath).subarray(from, this.size);
    const out: BufferedBatch[] = [];
    let off = 0;
    while (off + HEADER <= bytes.byteLength && out.length < max) {
      if (bytes.readUInt32LE(off) !== MAGIC) throw new Error(`forward buffer ${this.logPath}: bad record at byte ${from + off}`);
      const stream = bytes.readUInt32LE(off + 4), n = bytes.readUInt32LE(off + 8), vb = bytes.readUInt32LE(off + 12);
      const len = HEADER + n * 8 + vb + n * 4;
      if (off + len > bytes.byteLength) break; // a torn last append (crash while writing): ignored
      const copy = (start: number, length: number) => { const ab = new ArrayBuffer(length); new Uint8Array(ab).set(bytes.subarray(start, start + length)); return ab; };
      const body = off + HEADER;
      const times = new BigInt64Array(copy(body, n * 8));
      const type = this.types[stream];
      let values: BatchColumns['values'];
      switch (type) {
        case 'float64': values = new Float64Array(copy(body + n * 8, vb)); break;
        case 'int64': values = new BigInt64Array(copy(body + n * 8, vb)); break;
        case 'boolean': values = new Uint8Array(copy(body + n * 8, vb)); break;
        case 'enum': values = new Int32Array(copy(body + n * 8, vb)); break;
        default: values = JSON.parse(bytes.subarray(body + n * 8, body + n * 8 + vb).toString('utf8')) as string[];
      }
      const quality = new Uint32Array(copy(body + n * 8 + vb, n * 4));
      off += len;
      out.push({ end: from + off, stream, cols: { times, values, quality } });
    }
    return out;
  }

  /** Records acknowledged through byte offset `end`; empties the log once all are. */
  acknowledge(end: number): void {
    if (end <= this.done) return;
    this.done = end;
    if (this.done >= this.size) {
      closeSync(this.fd);
      rmSync(this.logPath, { force: true });
      rmSync(this.posPath, { force: true });
      this.fd = openSync(this.logPath, 'a+');
      this.size = 0;
      this.done = 0;
      return;
    }
    writeFileSync(`${this.posPath}.tmp`, String(this.done));
    renameSync(`${this.posPath}.tmp`, this.posPath);
  }

  close(): void {
    closeSync(this.fd);
  }
}
