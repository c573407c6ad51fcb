// bench:live's subscribers: an SSE reader and a WebSocket reader over raw sockets that
// note, for each `points` event, when it arrived and which (series, first ts_ns) entries
// it held, read from the bytes as they came (no string of the event, no JSON parse).
// The subscribers share the service's two cores: clients that decoded each event into a
// string and scanned it with a regular expression spent 0.7-0.9 s of CPU a run, more
// than half of it in GC, and that CPU was taken from ingest, not from the service's
// delivery. What is received is the same bytes; the readers only look at less of them.
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

/** Called with the key `${series}:${first ts_ns}` of each entry of a `points` event and when its bytes arrived (absolute ms). */
export type OnEntry = (key: string, receivedMs: number) => void;

const absMs = () => performance.timeOrigin + performance.now();

const SERIES = Buffer.from('"series":"');
const FIRST_TS = Buffer.from('","points":[{"ts_ns":');
const EVENT_END = Buffer.from('\n\n');
const SNAPSHOT_EVENT = Buffer.from('event: snapshot');
const POINTS_MESSAGE = Buffer.from('{"type":"points"');
const SNAPSHOT_MESSAGE = Buffer.from('{"type":"snapshot"');
const UUID_LENGTH = 36;

/** Each entry of the points event in buf[from, to): its series and its first point's time. */
function entries(buf: Buffer, from: number, to: number, onEntry: OnEntry, receivedMs: number): void {
  for (let at = buf.indexOf(SERIES, from); at >= 0 && at < to; at = buf.indexOf(SERIES, at + 1)) {
    const s = at + SERIES.length;
    const ts = s + UUID_LENGTH + FIRST_TS.length;
    if (ts > to || buf.compare(FIRST_TS, 0, FIRST_TS.length, s + UUID_LENGTH, ts) !== 0) continue; // an entry without points
    let e = ts;
    while (e < to && buf[e] >= 48 && buf[e] <= 57) e++;
    onEntry(`${buf.toString('latin1', s, s + UUID_LENGTH)}:${buf.toString('latin1', ts, e)}`, receivedMs);
  }
}

/** One buffer every socket reads into (Node's default allocates one per read: GC). */
const readBuffer = Buffer.alloc(1 << 16);

/** A socket to the service whose reads go to onChunk (a view of the shared read buffer, valid during the call). */
function reading(port: number, onChunk: (chunk: Buffer) => void): Socket {
  const s = connect({ port, host: '127.0.0.1', onread: { buffer: readBuffer, callback: (n: number, buf: Uint8Array) => { onChunk(Buffer.from(buf.buffer, buf.byteOffset, n)); return true; } } });
  s.setNoDelay(true);
  return s;
}

const startsWith = (buf: Buffer, at: number, prefix: Buffer) => buf.length >= at + prefix.length && buf.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;

/**
 * POST /v1/read/subscribe over a raw socket; resolves once the snapshot arrived. The body
 * is chunked (one chunk per event written), so events are cut at their blank line and the
 * chunk-size lines between them are never inside an entry.
 */
export function sseReceiver(port: number, body: string, onEntry: OnEntry): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let pending: Buffer | null = null;
    let started = false, ready = false;
    const s = reading(port, (chunk) => {
      const now = absMs();
      let buf = pending === null ? chunk : Buffer.concat([pending, chunk]);
      pending = null;
      if (!started) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) { pending = Buffer.from(buf); return; }
        if (!startsWith(buf, 0, Buffer.from('HTTP/1.1 200'))) { reject(new Error(buf.toString('utf8', 0, 300))); s.destroy(); return; }
        started = true;
        buf = buf.subarray(end + 4);
      }
      const cut = buf.lastIndexOf(EVENT_END);
      if (cut < 0) { pending = Buffer.from(buf); return; }
      if (cut + 2 < buf.length) pending = Buffer.from(buf.subarray(cut + 2)); // the read buffer is reused
      if (!ready) {
        const snap = buf.indexOf(SNAPSHOT_EVENT);
        if (snap >= 0 && snap < cut) { ready = true; resolve(s); }
      }
      entries(buf, 0, cut, onEntry, now);
    });
    s.on('error', reject);
    s.write(`POST /v1/read/subscribe HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
}

/** A masked client frame (RFC 6455: clients mask). */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 255]);
  const mask = randomBytes(4);
  const body = Buffer.alloc(len);
  for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([head, mask, body]);
}

/**
 * GET /v1/stream over a raw socket with one subscription (`subscribe` is its message's
 * text); resolves once its snapshot arrived. Answers pings; frames are read in place.
 */
export function wsReceiver(port: number, subscribe: string, onEntry: OnEntry): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let pending: Buffer | null = null;
    let upgraded = false, ready = false;
    const s = reading(port, (chunk) => {
      const now = absMs();
      let buf = pending === null ? chunk : Buffer.concat([pending, chunk]);
      pending = null;
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) { pending = Buffer.from(buf); return; }
        if (!startsWith(buf, 0, Buffer.from('HTTP/1.1 101'))) { reject(new Error(buf.toString('utf8', 0, 300))); s.destroy(); return; }
        upgraded = true;
        buf = buf.subarray(end + 4);
        s.write(clientFrame(1, Buffer.from(subscribe, 'utf8')));
      }
      let at = 0;
      for (;;) {
        if (buf.length - at < 2) break;
        const opcode = buf[at] & 15;
        let len = buf[at + 1] & 127, off = at + 2;
        if (len === 126) { if (buf.length - at < 4) break; len = buf.readUInt16BE(at + 2); off = at + 4; } else if (len === 127) { if (buf.length - at < 10) break; len = Number(buf.readBigUInt64BE(at + 2)); off = at + 10; }
        if (buf.length < off + len) break;
        if (opcode === 9) s.write(clientFrame(10, Buffer.from(buf.subarray(off, off + len))));
        else if (opcode === 1 && startsWith(buf, off, POINTS_MESSAGE)) entries(buf, off, off + len, onEntry, now);
        else if (opcode === 1 && !ready && startsWith(buf, off, SNAPSHOT_MESSAGE)) { ready = true; resolve(s); }
        else if (opcode === 8) { s.end(); return; }
        at = off + len;
      }
      if (at < buf.length) pending = Buffer.from(buf.subarray(at)); // the read buffer is reused
    });
    s.on('error', reject);
    const key = randomBytes(16).toString('base64');
    s.write(`GET /v1/stream HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  });
}

/** Closes a receiver's socket (a WebSocket with a close frame first). */
export function closeReceiver(s: Socket, ws: boolean): void {
  if (ws) { try { s.write(clientFrame(8, Buffer.from([3, 232]))); } catch { /* closed */ } s.end(); return; }
  s.destroy();
}
