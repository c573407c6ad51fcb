// The collector's one gRPC call (CollectorIngest/Session) over Node's own HTTP/2 client:
// length-prefixed messages on one stream, the status from the trailers. Why not grpc-js
// here: each message it sends passes ~8 layers (interceptors, resolving, retrying, load
// balancing, subchannel calls, compression filter), copies the bytes into a new framed
// Buffer, and costs ~45 us of CPU against ~13 us for the same 16 KB written to the HTTP/2
// stream directly (measured, docs/decisions.md); a collector sends thousands of batches a
// second. The frames are built in place by the caller (5 bytes of headroom, see frame())
// from a small pool of reusable buffers, so a batch allocates nothing.
// The server stays grpc-js (src/ingest/grpc-server.ts); this speaks the same wire protocol:
// application/grpc, te: trailers, grpc-status and grpc-message in the trailers (or in the
// headers of a trailers-only answer).
import http2 from 'node:http2';
import { EventEmitter } from 'node:events';

/** gRPC status codes this client reports (the numbers of grpc's status enum). */
export const GrpcStatus = { OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, INTERNAL: 13, UNAVAILABLE: 14, UNAUTHENTICATED: 16 } as const;

export interface CallOptions {
  /** host:port ([v6]:port) */
  address: string;
  path: string;
  tls?: { caPem: Buffer; certPem?: Buffer; keyPem?: Buffer; serverName?: string };
  metadata: Record<string, string>;
  /** Largest message accepted from the server (bytes). */
  maxReceiveBytes: number;
}

export interface CallStatus { code: number; details: string }

const PREFIX = 5;
/** Frame buffers kept for reuse, and the smallest one made (a 1,000-point float64 batch is ~16 KB). */
const POOL_KEPT = 32, MIN_FRAME = 32 * 1024;

/**
 * Events: 'message' (Buffer, one server message without its prefix), 'drain',
 * 'status' (CallStatus, once: the call is over, by the server's status or a transport failure).
 */
export class GrpcCall extends EventEmitter {
  private readonly session: http2.ClientHttp2Session;
  private readonly stream: http2.ClientHttp2Stream;
  private status: CallStatus | null = null;
  /** Received bytes not yet delivered, their total, and the size of the frame they start (-1: not known yet). */
  private chunks: Buffer[] = [];
  private buffered = 0;
  private need = -1;
  private readonly pool: Buffer[] = [];
  private lastError = '';

  constructor(private readonly opts: CallOptions) {
    super();
    const secure = opts.tls !== undefined;
    const authority = `${secure ? 'https' : 'http'}://${opts.address}`;
    this.session = http2.connect(authority, secure ? {
      ca: opts.tls?.caPem, cert: opts.tls?.certPem, key: opts.tls?.keyPem, ALPNProtocols: ['h2'],
      ...(opts.tls?.serverName ? { servername: opts.tls.serverName } : {}),
    } : {});
    this.session.on('error', (e: Error) => { this.lastError = e.message; this.finish({ code: GrpcStatus.UNAVAILABLE, details: `connection failed: ${e.message}` }); });
    this.session.on('goaway', () => { this.lastError = 'the server sent GOAWAY'; });
    this.stream = this.session.request({
      ':method': 'POST', ':path': opts.path, 'content-type': 'application/grpc', te: 'trailers',
      'grpc-accept-encoding': 'identity', 'user-agent': 'historian-collector (node http2)', ...opts.metadata,
    });
    this.stream.on('response', (headers) => {
      const status = headers[':status'];
      if (status !== 200) { this.finish({ code: httpStatusCode(Number(status)), details: `HTTP status ${String(status)}` }); return; }
      if (headers['grpc-status'] !== undefined) this.finish(statusOf(headers)); // trailers-only
    });
    this.stream.on('trailers', (trailers) => this.finish(statusOf(trailers)));
    this.stream.on('data', (chunk: Buffer) => this.receive(chunk));
    this.stream.on('drain', () => this.emit('drain'));
    this.stream.on('error', (e: Error) => { this.lastError = e.message; });
    this.stream.on('close', () => {
      // a failed connection (a TLS alert, a reset) closes the stream first and reports
      // itself on the session just after: let that say UNAVAILABLE before a bare CANCEL does
      setImmediate(() => {
        const rst = this.stream.rstCode;
        if (rst === http2.constants.NGHTTP2_CANCEL && !this.session.destroyed && this.lastError === '') this.finish({ code: GrpcStatus.CANCELLED, details: 'the server cancelled the call' });
        else this.finish({ code: GrpcStatus.UNAVAILABLE, details: `the connection ended without a status${this.lastError ? `: ${this.lastError}` : ''}${rst ? ` (HTTP/2 code ${rst})` : ''}` });
        this.session.close();
      });
    });
  }

  /**
   * A buffer with room for a message of `bytes` after the 5-byte prefix: the caller writes
   * its message at offset 5 and hands the buffer to send(). From the pool when one fits.
   */
  frame(bytes: number): Buffer {
    const need = PREFIX + bytes;
    for (let i = this.pool.length - 1; i >= 0; i--) {
      if (this.pool[i].length >= need) { const b = this.pool[i]; this.pool[i] = this.pool[this.pool.length - 1]; this.pool.pop(); return b; }
    }
    return Buffer.allocUnsafeSlow(Math.max(need, MIN_FRAME));
  }

  /** Sends `bytes` of message written at offset 5 of a frame() buffer; the buffer returns to the pool once written. */
  send(frame: Buffer, bytes: number): boolean {
    frame[0] = 0; // not compressed
    frame.writeUInt32BE(bytes, 1);
    if (this.status !== null) { this.recycle(frame); return false; }
    return this.stream.write(frame.subarray(0, PREFIX + bytes), () => this.recycle(frame));
  }

  /** Sends a message given whole (the rare ones: open, watermark, heartbeat). */
  sendMessage(message: Buffer): boolean {
    const f = this.frame(message.length);
    message.copy(f, PREFIX);
    return this.send(f, message.length);
  }

  get needsDrain(): boolean { return this.stream.writableNeedDrain; }
  get ended(): boolean { return this.status !== null; }
  /** How the call ended (null while it runs). */
  get result(): CallStatus | null { return this.status; }

  /** Half-closes the call (no more messages) and closes the connection once it is done. */
  end(): void {
    if (!this.stream.writableEnded) this.stream.end();
    this.session.close();
  }

  private recycle(frame: Buffer): void {
    if (this.pool.length < POOL_KEPT && frame.length <= 64 * MIN_FRAME) this.pool.push(frame);
  }

  /**
   * Frames arrive in HTTP/2 DATA chunks (16 KB): a large message (a welcome of 100,000
   * streams is ~10 MB) is gathered as a list of chunks and joined once it is whole, not
   * re-joined at every chunk (that copied the pending bytes each time: quadratic).
   */
  private receive(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.status === null) {
      if (this.need < 0) {
        if (this.buffered < PREFIX) return;
        const head = this.chunks[0].length >= PREFIX ? this.chunks[0] : this.joined();
        if (head[0] !== 0) { this.fail(GrpcStatus.INTERNAL, 'the server sent a compressed message (none was offered)'); return; }
        const len = head.readUInt32BE(1);
        if (len > this.opts.maxReceiveBytes) { this.fail(GrpcStatus.RESOURCE_EXHAUSTED, `a server message of ${len} bytes exceeds ${this.opts.maxReceiveBytes}`); return; }
        this.need = PREFIX + len;
      }
      if (this.buffered < this.need) return;
      const buf = this.joined();
      const msg = buf.subarray(PREFIX, this.need);
      const rest = buf.length - this.need;
      // the rest is copied out, so a small remainder does not keep a large message alive
      this.chunks = rest > 0 ? [Buffer.from(buf.subarray(this.need))] : [];
      this.buffered = rest;
      this.need = -1;
      this.emit('message', msg);
    }
  }

  /** The received chunks as one buffer (joined in place). */
  private joined(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0];
  }

  private fail(code: number, details: string): void {
    this.finish({ code, details }, http2.constants.NGHTTP2_CANCEL);
  }

  /** The call is over: report it once, then let go of the stream and the connection. */
  private finish(s: CallStatus, rst: number = http2.constants.NGHTTP2_NO_ERROR): void {
    if (this.status !== null) return;
    this.status = s;
    this.emit('status', s);
    // a status from the server ends the call even while our side of the stream is open
    if (!this.stream.closed && !this.stream.destroyed) this.stream.close(rst);
    this.session.close();
  }
}

function statusOf(h: http2.IncomingHttpHeaders): CallStatus {
  const code = Number(h['grpc-status']);
  const raw = h['grpc-message'];
  let details = typeof raw === 'string' ? raw : '';
  try { details = decodeURIComponent(details); } catch { /* not percent-encoded: as sent */ }
  return { code: Number.isInteger(code) ? code : GrpcStatus.UNKNOWN, details };
}

/** gRPC's mapping of an HTTP status without grpc-status. */
function httpStatusCode(status: number): number {
  switch (status) {
    case 400: return GrpcStatus.INTERNAL;
    case 401: return GrpcStatus.UNAUTHENTICATED;
    case 403: return GrpcStatus.PERMISSION_DENIED;
    case 404: return 12; // UNIMPLEMENTED
    case 429: case 502: case 503: case 504: return GrpcStatus.UNAVAILABLE;
    default: return GrpcStatus.UNKNOWN;
  }
}
