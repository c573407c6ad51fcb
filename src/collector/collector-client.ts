// A client of proto/collector.proto: opens a session, sends columnar batches within its
// credit (waiting, and counting the wait, when it has none), and resolves each batch when
// the server acknowledges it durable or rejects it. Used by the simulator, the tests and
// the benchmark. The call runs over Node's HTTP/2 client (grpc-call.ts); batches are
// encoded by hand into reusable frames (batch-message.ts), the few other messages and the
// server's messages by protobufjs through proto-loader's definitions.
import * as protoLoader from '@grpc/proto-loader';
import { EventEmitter, once } from 'node:events';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { BatchColumns } from '../ingest/batch-columns.js';
import { writeBatchMessage } from './batch-message.js';
import { GrpcCall, GrpcStatus, type CallStatus } from './grpc-call.js';
import { readLaneMessage, type LaneMessage } from './server-message-decode.js';
import { PROTO_OPTIONS, PROTO_PATH } from '../ingest/collector-proto.js';

const WIRE_TYPE: Record<ValueType, string> = { float64: 'FLOAT64', int64: 'INT64', boolean: 'BOOLEAN', string: 'STRING', enum: 'ENUM' };

export type Lane = 'LIVE' | 'BACKFILL';

/** A batch's columns; quality null means every point is good (192). */
export type OutgoingColumns = Omit<BatchColumns, 'quality'> & { quality: Uint32Array | null };

export interface StreamDeclaration {
  name: string;
  type: ValueType;
  seriesId?: string;
  /** ENUM streams: the registry enum set (name or UUID) of the staging series. */
  enumSet?: string;
}

export interface ConnectOptions {
  address: string;
  collectorId: string;
  epoch: bigint;
  streams: StreamDeclaration[];
  token?: string;
  tls?: { caPem: Buffer; certPem?: Buffer; keyPem?: Buffer; serverName?: string };
  agent?: string;
}

export interface StreamWelcome {
  stream: number;
  accepted: boolean;
  series_id: string;
  refusal: string;
  has_last_durable: boolean;
  last_durable_ns: string;
  has_watermark: boolean;
  watermark_ns: string;
}

export interface Welcome {
  granted_epoch: string;
  live_credit: string;
  backfill_credit: string;
  streams: StreamWelcome[];
  max_batch_points: number;
  heartbeat_interval_ms: number;
  session_id: string;
}

export type BatchOutcome =
  | { ok: true; seq: number; refused: number; refusals: Array<{ index: number; reason: string }>; ackMs: number }
  | { ok: false; seq: number; reason: string; detail: string; retryable: boolean; expectedSeq: number };

interface ServerMessage {
  body: string;
  [k: string]: unknown;
}

interface Pending {
  seq: number;
  sentMs: number;
  refused: number;
  refusals: Array<{ index: number; reason: string }>;
  resolve: (o: BatchOutcome) => void;
  reject: (e: Error) => void;
}

interface CreditWaiter {
  points: number;
  since: number;
  run: () => void;
  fail: (e: Error) => void;
}

interface SessionCodec { path: string; encode(m: unknown): Buffer; decode(b: Buffer): ServerMessage }
let codec: SessionCodec | null = null;
/** The Session method's path and protobufjs codecs, from the contract (loaded once). */
function sessionCodec(): SessionCodec {
  if (!codec) {
    const def = protoLoader.loadSync(PROTO_PATH, PROTO_OPTIONS);
    const session = (def['historian.collector.v1.CollectorIngest'] as Record<string, protoLoader.MethodDefinition<unknown, ServerMessage>>).Session;
    codec = { path: session.path, encode: (m) => session.requestSerialize(m), decode: (b) => session.responseDeserialize(b) };
  }
  return codec;
}

/** Messages of up to this many bytes are accepted from the server (a welcome of 100,000 streams is ~10 MB). */
const MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

export class SessionEnded extends Error {
  constructor(readonly code: number, message: string) { super(message); this.name = 'SessionEnded'; }
}

export class CollectorClient extends EventEmitter {
  readonly credit: Record<Lane, number> = { LIVE: 0, BACKFILL: 0 };
  readonly nextSeq: Record<Lane, number> = { LIVE: 1, BACKFILL: 1 };
  readonly ackedThrough: Record<Lane, number> = { LIVE: 0, BACKFILL: 0 };
  /** Time spent waiting for credit, per lane (ms). */
  readonly creditWaitMs: Record<Lane, number> = { LIVE: 0, BACKFILL: 0 };
  readonly pending: Record<Lane, Map<number, Pending>> = { LIVE: new Map(), BACKFILL: new Map() };
  fencedBy: bigint | null = null;
  ended: SessionEnded | null = null;
  overCredit = 0;
  private creditQueue: Record<Lane, CreditWaiter[]> = { LIVE: [], BACKFILL: [] };

  private constructor(private readonly call: GrpcCall, readonly welcome: Welcome) {
    super();
  }

  static async connect(opts: ConnectOptions): Promise<CollectorClient> {
    const { path, encode, decode } = sessionCodec();
    // Own connection per session, so a backfill session's bytes never queue in front of a live session's.
    const call = new GrpcCall({
      address: opts.address, path, maxReceiveBytes: MAX_RECEIVE_BYTES,
      metadata: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
      ...(opts.tls ? { tls: opts.tls } : {}),
    });
    call.sendMessage(encode({ open: {
      collector_id: opts.collectorId,
      session_epoch: opts.epoch.toString(),
      streams: opts.streams.map((s) => ({ name: s.name, value_type: WIRE_TYPE[s.type], series_id: s.seriesId ?? '', enum_set: s.enumSet ?? '' })),
      agent: opts.agent ?? 'historian-collector',
    } }));
    let client: CollectorClient | null = null;
    let welcomed = false;
    // what arrives after the welcome and before the client exists (a credit grant in the same read)
    const early: ServerMessage[] = [];
    // acks and credit grants (most of what a session receives) are read by hand into one scratch
    const lane: LaneMessage = { body: 'ack', lane: 'LIVE', second: 0, third: 0 };
    const welcome = await new Promise<Welcome>((resolve, reject) => {
      const onMessage = (b: Buffer) => {
        if (client && readLaneMessage(b, lane) && lane.lane !== 'LANE_UNSPECIFIED') {
          if (lane.body === 'ack') client.acked(lane.lane, lane.second); else client.credited(lane.lane, lane.second);
          return;
        }
        const m = decode(b);
        if (client) { client.receive(m); return; }
        if (welcomed) { early.push(m); return; }
        if (m.body !== 'welcome') return;
        welcomed = true;
        call.off('status', onEarlyEnd);
        resolve(m.welcome as Welcome);
      };
      const onEarlyEnd = (s: CallStatus) => reject(new SessionEnded(s.code, s.details));
      call.on('message', onMessage);
      call.once('status', onEarlyEnd);
    });
    const c = new CollectorClient(call, welcome);
    c.credit.LIVE = Number(welcome.live_credit);
    c.credit.BACKFILL = Number(welcome.backfill_credit);
    client = c;
    for (const m of early) c.receive(m);
    const onStatus = (s: CallStatus) => c.fail(new SessionEnded(s.code, s.code === GrpcStatus.OK ? 'the server ended the session' : s.details));
    if (call.result !== null) onStatus(call.result);
    else call.on('status', onStatus);
    return c;
  }

  private receive(m: ServerMessage): void {
    switch (m.body) {
      case 'ack': {
        const a = m.ack as { lane: Lane; acked_through: string };
        this.acked(a.lane, Number(a.acked_through));
        break;
      }
      case 'credit': {
        const g = m.credit as { lane: Lane; points: string };
        this.credited(g.lane, Number(g.points));
        break;
      }
      case 'rejected': {
        const r = m.rejected as { lane: Lane; seq: string; reason: string; detail: string; retryable: boolean; expected_seq: string };
        const p = this.pending[r.lane]?.get(Number(r.seq));
        this.emit('rejected', r);
        if (p) {
          this.pending[r.lane].delete(p.seq);
          p.resolve({ ok: false, seq: p.seq, reason: r.reason, detail: r.detail, retryable: r.retryable, expectedSeq: Number(r.expected_seq) });
        }
        break;
      }
      case 'points_refused': {
        const r = m.points_refused as { lane: Lane; seq: string; refused: number; refusals: Array<{ index: number; reason: string }> };
        const p = this.pending[r.lane]?.get(Number(r.seq));
        // a scan's refusals come one message per stream; the index is the point's in the batch
        if (p) { p.refused += r.refused; p.refusals.push(...r.refusals); }
        break;
      }
      case 'over_credit': this.overCredit++; this.emit('over_credit', m.over_credit); break;
      case 'fence': {
        const f = m.fence as { superseding_epoch: string };
        this.fencedBy = BigInt(f.superseding_epoch);
        this.emit('fence', f);
        break;
      }
      default: this.emit(m.body, m[m.body]);
    }
  }

  /** The server acknowledged (made durable) every batch of `lane` through seq `through`. */
  private acked(lane: Lane, through: number): void {
    const map = this.pending[lane];
    const now = performance.now();
    for (let s = this.ackedThrough[lane] + 1; s <= through; s++) {
      const p = map.get(s);
      if (!p) continue;
      map.delete(s);
      p.resolve({ ok: true, seq: s, refused: p.refused, refusals: p.refusals, ackMs: now - p.sentMs });
    }
    this.ackedThrough[lane] = Math.max(this.ackedThrough[lane], through);
    this.emit('ack', lane, through);
  }

  private credited(lane: Lane, points: number): void {
    this.credit[lane] += points;
    this.drainCredit(lane);
  }

  private fail(e: SessionEnded): void {
    if (this.ended) return;
    this.ended = e;
    for (const lane of ['LIVE', 'BACKFILL'] as const) {
      for (const p of this.pending[lane].values()) p.reject(e);
      this.pending[lane].clear();
    }
    for (const lane of ['LIVE', 'BACKFILL'] as const) {
      for (const w of this.creditQueue[lane]) w.fail(e);
      this.creditQueue[lane] = [];
    }
    this.emit('ended', e);
  }

  /**
   * Sends one batch within credit, in call order: when the lane lacks credit the batch waits
   * (and the wait is counted) until grants cover it. Resolves when the batch is acknowledged
   * (durable) or rejected.
   */
  send(lane: Lane, stream: number, type: ValueType, cols: OutgoingColumns, receiptNs = 0n): Promise<BatchOutcome> {
    return this.sendWithin(lane, () => this.sendNow(lane, stream, type, cols, receiptNs), cols.times.length);
  }

  /**
   * Sends a scan: the points of several streams of one value type in one batch, point i of
   * stream `streams[i]` (each stream's points in their order), within credit as send() does.
   * One message and one ack for a whole scan of a plant's tags, not one per stream.
   */
  sendScan(lane: Lane, streams: Uint32Array, type: ValueType, cols: OutgoingColumns, receiptNs = 0n): Promise<BatchOutcome> {
    return this.sendWithin(lane, () => this.sendBatch(lane, 0, streams, type, cols, receiptNs), cols.times.length);
  }

  private sendWithin(lane: Lane, go: () => Promise<BatchOutcome>, n: number): Promise<BatchOutcome> {
    if (this.creditQueue[lane].length === 0 && this.fits(lane, n)) return go();
    return new Promise<BatchOutcome>((resolve, reject) => {
      this.creditQueue[lane].push({ points: n, since: performance.now(), run: () => go().then(resolve, reject), fail: reject });
    });
  }

  /** A batch fits when the credit covers it, or when it is bigger than any grant and nothing is in flight on the lane. */
  private fits(lane: Lane, n: number): boolean {
    return this.credit[lane] >= n || (this.credit[lane] > 0 && this.pending[lane].size === 0);
  }

  private drainCredit(lane: Lane): void {
    const q = this.creditQueue[lane];
    while (q.length > 0 && !this.ended && this.fits(lane, q[0].points)) {
      const w = q.shift() as CreditWaiter;
      this.creditWaitMs[lane] += performance.now() - w.since;
      w.run();
    }
  }

  /** Batches waiting for credit. */
  waitingForCredit(): number {
    return this.creditQueue.LIVE.length + this.creditQueue.BACKFILL.length;
  }

  /** Sends without waiting for credit (the server pauses the session if it is overdrawn). */
  sendNow(lane: Lane, stream: number, type: ValueType, cols: OutgoingColumns, receiptNs = 0n): Promise<BatchOutcome> {
    return this.sendBatch(lane, stream, null, type, cols, receiptNs);
  }

  private sendBatch(lane: Lane, stream: number, streams: Uint32Array | null, type: ValueType, cols: OutgoingColumns, receiptNs: bigint): Promise<BatchOutcome> {
    if (this.ended) return Promise.reject(this.ended);
    const n = cols.times.length;
    const seq = this.nextSeq[lane]++;
    this.credit[lane] -= n;
    const { buf, bytes } = writeBatchMessage({ stream, lane, seq, type, times: cols.times, values: cols.values, quality: cols.quality, receiptNs, streams }, this.frame, 5);
    return this.track(lane, seq, () => this.call.send(buf, bytes));
  }

  /** A transport frame for a message of `bytes` (5 bytes of prefix before it). */
  private readonly frame = (bytes: number): Buffer => this.call.frame(bytes);

  /** Sends a hand-made batch message (tests of malformed input); seq is the caller's. */
  sendRaw(batch: Record<string, unknown> & { lane: Lane; seq: number }): Promise<BatchOutcome> {
    const msg = sessionCodec().encode({ batch: { ...batch, seq: String(batch.seq) } });
    return this.track(batch.lane, batch.seq, () => this.call.sendMessage(msg));
  }

  private track(lane: Lane, seq: number, write: () => void): Promise<BatchOutcome> {
    return new Promise<BatchOutcome>((resolve, reject) => {
      this.pending[lane].set(seq, { seq, sentMs: performance.now(), refused: 0, refusals: [], resolve, reject });
      write();
    });
  }

  /** Resolves when the call's send buffer has room again (HTTP/2 backpressure). */
  async drained(): Promise<void> {
    if (this.call.needsDrain && !this.call.ended) await once(this.call, 'drain');
  }

  watermark(stream: number, throughNs: bigint): Promise<void> {
    return new Promise((resolve, reject) => {
      const onApplied = (w: { stream: number; through_ns: string }) => {
        if (w.stream === stream && BigInt(w.through_ns) === throughNs) { this.off('watermark_applied', onApplied); resolve(); }
      };
      this.on('watermark_applied', onApplied);
      this.once('ended', reject);
      this.call.sendMessage(sessionCodec().encode({ watermark: { stream, through_ns: throughNs.toString() } }));
    });
  }

  heartbeat(): void {
    if (!this.ended) this.call.sendMessage(sessionCodec().encode({ heartbeat: { sent_ns: process.hrtime.bigint().toString() } }));
  }

  /** Number of batches sent and not yet settled. */
  inFlight(): number {
    return this.pending.LIVE.size + this.pending.BACKFILL.size;
  }

  close(): void {
    if (!this.ended) this.call.end();
    this.fail(new SessionEnded(GrpcStatus.CANCELLED, 'closed by the collector'));
  }
}
