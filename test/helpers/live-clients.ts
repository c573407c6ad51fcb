// Clients of the live-update protocols (docs/live-updates.md) for tests and bench/live.ts:
// an SSE reader over fetch streaming, and a small WebSocket client over node:net (RFC 6455
// text frames, masking, ping/pong, close). Node 20's WebSocket global sits behind
// --experimental-websocket, and writing the client here keeps the socket under the test's
// control: it can stop reading to play a slow consumer.
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { parseJson } from '../../src/json/json.js';

export interface LiveMessage {
  /** SSE event name or WebSocket `type`. */
  type: string;
  /** SSE `id:` or WebSocket `event_id`. */
  eventId: string | null;
  /** The JSON payload (WebSocket: the whole message), int64 as bigint. */
  data: Record<string, unknown>;
  receivedMs: number;
}

/** Queue with waiting: next(pred) resolves with the first message (in order) matching pred. */
class Inbox {
  readonly all: LiveMessage[] = [];
  private cursor = 0;
  private waiters: Array<() => void> = [];
  ended = false;
  onMessage: ((m: LiveMessage) => void) | null = null;

  push(m: LiveMessage): void {
    this.all.push(m);
    this.onMessage?.(m);
    for (const w of this.waiters.splice(0)) w();
  }

  end(): void {
    this.ended = true;
    for (const w of this.waiters.splice(0)) w();
  }

  async next(pred: (m: LiveMessage) => boolean = () => true, ms = 10_000): Promise<LiveMessage> {
    const deadline = Date.now() + ms;
    for (;;) {
      while (this.cursor < this.all.length) {
        const m = this.all[this.cursor++];
        if (pred(m)) return m;
      }
      if (this.ended) throw new Error('the stream ended before the expected message');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching message within ${ms} ms; got ${this.all.map((m) => m.type).join(',')}`);
      await new Promise<void>((r) => { const tm = setTimeout(r, left); this.waiters.push(() => { clearTimeout(tm); r(); }); });
    }
  }
}

const decoder = new TextDecoder();
const json = (text: string): Record<string, unknown> => parseJson(Buffer.from(text, 'utf8')) as Record<string, unknown>;

export interface SseClient extends Inbox {
  status: number;
  close(): void;
}

/** POSTs to /v1/read/subscribe and parses the event stream. */
export async function openSse(url: string, body: unknown, headers: Record<string, string> = {}): Promise<SseClient & { text?: string }> {
  const ac = new AbortController();
  const res = await fetch(`${url}/v1/read/subscribe`, {
    method: 'POST', signal: ac.signal,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? `__BIG__${v}` : v)).replace(/"__BIG__(-?\d+)"/g, '$1'),
  });
  const inbox = new Inbox() as Inbox & SseClient & { text?: string };
  inbox.status = res.status;
  inbox.close = () => ac.abort();
  if (res.status !== 200 || !res.body) {
    inbox.text = await res.text();
    inbox.end();
    return inbox;
  }
  const reader = res.body.getReader();
  (async () => {
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let type = 'message', id: string | null = null;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':') || line === '') continue;
          const i = line.indexOf(':');
          const field = i < 0 ? line : line.slice(0, i);
          const v = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
          if (field === 'event') type = v; else if (field === 'id') id = v; else if (field === 'data') data.push(v);
        }
        if (data.length === 0) continue;
        inbox.push({ type, eventId: id, data: json(data.join('\n')), receivedMs: performance.now() });
      }
    }
  })().catch(() => undefined).finally(() => inbox.end());
  return inbox;
}

export interface WsClient extends Inbox {
  socket: Socket;
  closeCode: number | null;
  closeReason: string;
  send(message: unknown): void;
  sendText(text: string): void;
  close(): void;
}

/**
 * Opens GET /v1/stream; rejects with the HTTP status and body when the upgrade is refused.
 * With `onText`, messages go to it as text and are not parsed or kept (benchmarks).
 */
export function openWs(url: string, headers: Record<string, string> = {}, onText?: (text: string) => void): Promise<WsClient> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname);
    socket.setNoDelay(true);
    const key = randomBytes(16).toString('base64');
    const head = [`GET /v1/stream HTTP/1.1`, `Host: ${u.host}`, 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
    const inbox = new Inbox() as Inbox & WsClient;
    inbox.socket = socket;
    inbox.closeCode = null;
    inbox.closeReason = '';
    const frame = (opcode: number, payload: Buffer) => {
      const mask = randomBytes(4);
      const len = payload.length;
      const hdr = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : len < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 255]) : (() => {
        const b = Buffer.alloc(10); b[0] = 0x80 | opcode; b[1] = 0x80 | 127; b.writeBigUInt64BE(BigInt(len), 2); return b;
      })();
      const body = Buffer.alloc(len);
      for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i & 3];
      socket.write(Buffer.concat([hdr, mask, body]));
    };
    inbox.sendText = (text) => frame(1, Buffer.from(text, 'utf8'));
    inbox.send = (m) => inbox.sendText(JSON.stringify(m, (_k, v) => (typeof v === 'bigint' ? `__BIG__${v}` : v)).replace(/"__BIG__(-?\d+)"/g, '$1'));
    inbox.close = () => { try { frame(8, Buffer.from([3, 232])); } catch { /* closed */ } socket.end(); };
    let buf: Buffer = Buffer.alloc(0);
    let upgraded = false;
    let fragments: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const headText = buf.subarray(0, end).toString('latin1');
        const status = Number(headText.split(' ')[1]);
        if (status !== 101) {
          socket.destroy();
          reject(Object.assign(new Error(`upgrade refused: ${status}`), { status, text: buf.subarray(end + 4).toString('utf8') }));
          return;
        }
        upgraded = true;
        buf = buf.subarray(end + 4);
        resolve(inbox);
      }
      for (;;) {
        if (buf.length < 2) return;
        const fin = (buf[0] & 0x80) !== 0, opcode = buf[0] & 15;
        let len = buf[1] & 127, off = 2;
        if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; } else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); off = 10; }
        if (buf.length < off + len) return;
        const payload = buf.subarray(off, off + len);
        buf = buf.subarray(off + len);
        if (opcode === 9) { frame(10, Buffer.from(payload)); continue; }
        if (opcode === 10) continue;
        if (opcode === 8) {
          inbox.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
          inbox.closeReason = payload.subarray(2).toString('utf8');
          socket.end();
          continue;
        }
        fragments.push(Buffer.from(payload));
        if (!fin) continue;
        const text = Buffer.concat(fragments).toString('utf8');
        fragments = [];
        if (onText) { onText(text); continue; }
        const data = json(text);
        inbox.push({ type: String(data.type), eventId: typeof data.event_id === 'string' ? data.event_id : null, data, receivedMs: performance.now() });
      }
    });
    socket.on('close', () => inbox.end());
    socket.on('error', (e) => { if (!upgraded) reject(e); });
    socket.write(head);
  });
}
