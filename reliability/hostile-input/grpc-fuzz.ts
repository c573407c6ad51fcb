// The hostile-input fuzz over the collector gRPC stream (proto/collector.proto,
// docs/collector-protocol.md): sessions that send garbage, truncated and out-of-order
// messages, broken batches (column lengths, wrong and doubled value columns, unknown streams
// and lanes, sequence gaps, bad times, oversize counts), stale and fenced epochs, credit
// violations, bad credentials and oversize messages. Every call must end with a gRPC status
// (never a hang, never the worker gone), the service must take a normal session after, and
// nothing from a refused message may be stored: refused batches carry their points in a
// "poison" time window, and the stored series are read back whole at the end.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import fc from 'fast-check';
import { PROTO_PATH, PROTO_OPTIONS } from '../../src/ingest/collector-proto.js';
import { createServiceWithToken, type Client } from '../../test/helpers/auth.js';

export interface GrpcFuzzOptions {
  address: string;
  admin: Client;
  sessions: number;
  seed: number;
  /** Every stored point of a series (times only are needed). */
  readSeries: (seriesId: string) => bigint[];
  timeoutMs?: number;
}

export interface GrpcFinding { kind: string; scenario: string; detail: string }

export interface GrpcFigures {
  sessions: number;
  messagesSent: number;
  statuses: Record<string, number>;
  rejectedBatches: number;
  hangs: number;
  poisonStored: number;
  unexpectedStatus: number;
  healthyAfter: boolean;
  failures: number;
  seconds: number;
}

interface Wire { open?: unknown; batch?: unknown; watermark?: unknown; heartbeat?: unknown }
interface ServerMsg { welcome?: { granted_epoch: string; live_credit: string; max_batch_points: number; streams: Array<{ series_id: string; accepted: boolean }> }; rejected?: { seq: string; reason: string }; ack?: { acked_through: string }; over_credit?: unknown; fence?: unknown; points_refused?: unknown }

const def = protoLoader.loadSync(PROTO_PATH, PROTO_OPTIONS);
const method = def['historian.collector.v1.CollectorIngest'] as unknown as { Session: { path: string; requestSerialize: (m: Wire) => Buffer; responseDeserialize: (b: Buffer) => ServerMsg } };
const SESSION = method.Session;
const encode = (m: Wire): Buffer => SESSION.requestSerialize(m);

const NOW_NS = BigInt(Date.now()) * 1_000_000n;
/** Points of refused batches live here and only here; none may ever be stored. */
const POISON_START = NOW_NS - 3_600_000_000_000n;
const POISON_END = POISON_START + 1_000_000_000n;

/** One raw call: bytes out, decoded server messages in, and the status it ended with. */
class RawCall {
  readonly messages: ServerMsg[] = [];
  status: { code: number; details: string } | null = null;
  private readonly call: grpc.ClientDuplexStream<Buffer, Buffer>;
  private readonly waiters: Array<() => void> = [];
  sent = 0;

  constructor(client: grpc.Client, token: string | null) {
    const md = new grpc.Metadata();
    if (token) md.set('authorization', `Bearer ${token}`);
    this.call = client.makeBidiStreamRequest(SESSION.path, (b: Buffer) => b, (b: Buffer) => b, md);
    this.call.on('data', (b: Buffer) => {
      try { this.messages.push(SESSION.responseDeserialize(b)); } catch { this.messages.push({}); }
      this.wake();
    });
    this.call.on('status', (s: grpc.StatusObject) => { this.status = { code: s.code, details: s.details }; this.wake(); });
    this.call.on('error', () => undefined); // the status says it
  }

  private wake() { for (const w of this.waiters.splice(0)) w(); }

  write(bytes: Buffer): void { if (!this.status) { this.call.write(bytes); this.sent++; } }
  send(m: Wire): void { this.write(encode(m)); }

  /** Waits until `pred` holds or the call ended; false on timeout. */
  async until(pred: () => boolean, ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (!pred() && !this.status) {
      const left = end - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => { const tm = setTimeout(resolve, Math.min(left, 200)); this.waiters.push(() => { clearTimeout(tm); resolve(); }); });
    }
    return pred() || this.status !== null;
  }

  welcome() { return this.messages.find((m) => m.welcome)?.welcome; }

  /** Half-closes and waits for the status; null when none came (a hang). */
  async finish(ms: number): Promise<{ code: number; details: string } | null> {
    this.call.end();
    await this.until(() => this.status !== null, ms);
    if (!this.status) this.call.cancel();
    return this.status;
  }
}

const STREAMS = [{ name: 'f', value_type: 'FLOAT64' }, { name: 'i', value_type: 'INT64' }, { name: 'b', value_type: 'BOOLEAN' }, { name: 's', value_type: 'STRING' }];

function times(start: bigint, n: number): Buffer {
  const b = Buffer.alloc(n * 8);
  for (let i = 0; i < n; i++) b.writeBigInt64LE(start + BigInt(i) * 1_000n, i * 8);
  return b;
}

function column(type: string, n: number, value: (i: number) => number): Record<string, unknown> {
  switch (type) {
    case 'FLOAT64': { const b = Buffer.alloc(n * 8); for (let i = 0; i < n; i++) b.writeDoubleLE(value(i), i * 8); return { f64: b }; }
    case 'INT64': { const b = Buffer.alloc(n * 8); for (let i = 0; i < n; i++) b.writeBigInt64LE(BigInt(Math.trunc(value(i))), i * 8); return { i64: b }; }
    case 'BOOLEAN': { const b = Buffer.alloc(n); for (let i = 0; i < n; i++) b[i] = value(i) > 0 ? 1 : 0; return { bool: b }; }
    default: return { str: Array.from({ length: n }, (_, i) => `v${value(i)}`) };
  }
}

/** A well-formed batch of `n` points from `start`. */
function goodBatch(stream: number, lane: string, seq: number, start: bigint, n: number) {
  return { stream, lane, seq: String(seq), count: n, ts_ns: times(start, n), ...column(STREAMS[stream].value_type, n, (i) => i + 1), collector_receipt_ns: String(NOW_NS) };
}

/** Broken batches: each one the protocol says is rejected whole. Points (where there are any) lie in the poison window. */
const BROKEN: Array<{ name: string; make: (seq: number, maxPoints: number) => Record<string, unknown> }> = [
  { name: 'ts-length-mismatch', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq, POISON_START, 4), ts_ns: times(POISON_START, 3) }) },
  { name: 'value-length-mismatch', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq, POISON_START, 4), f64: Buffer.alloc(20) }) },
  { name: 'wrong-value-column', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq, POISON_START, 4), f64: Buffer.alloc(0), i64: Buffer.alloc(32) }) },
  { name: 'two-value-columns', make: (seq) => ({ ...goodBatch(1, 'LIVE', seq, POISON_START, 4), f64: Buffer.alloc(32) }) },
  { name: 'count-zero', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq, POISON_START, 0) }) },
  { name: 'count-over-max', make: (seq, max) => ({ ...goodBatch(0, 'LIVE', seq, POISON_START, 2), count: max + 1 }) },
  { name: 'unknown-stream', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq, POISON_START, 2), stream: 99 }) },
  { name: 'lane-unspecified', make: (seq) => ({ ...goodBatch(0, 'LANE_UNSPECIFIED', seq, POISON_START, 2) }) },
  { name: 'sequence-gap', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq + 7, POISON_START, 2) }) },
  { name: 'negative-times', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq, -5_000n, 2) }) },
  { name: 'far-future-times', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq, NOW_NS + 10n ** 17n, 2) }) },
  { name: 'quality-length-mismatch', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq, POISON_START, 4), quality: Buffer.alloc(6) }) },
  { name: 'string-count-mismatch', make: (seq) => ({ ...goodBatch(3, 'LIVE', seq, POISON_START, 4), str: ['a'] }) },
  { name: 'int64-times-unaligned', make: (seq) => ({ ...goodBatch(0, 'LIVE', seq, POISON_START, 2), ts_ns: Buffer.alloc(15) }) },
];

const SCENARIOS = ['garbage-first', 'truncated-open', 'batch-first', 'double-open', 'open-before-welcome', 'stale-epoch', 'fenced',
  'bad-open', 'no-credentials', 'wrong-collector', 'broken-batches', 'garbage-after-open', 'truncated-batch', 'non-finite-values',
  'credit-violation', 'out-of-order-control', 'oversize-message'] as const;
type Scenario = (typeof SCENARIOS)[number];

export async function runGrpcFuzz(o: GrpcFuzzOptions): Promise<{ figures: GrpcFigures; findings: GrpcFinding[] }> {
  const started = Date.now();
  const timeoutMs = o.timeoutMs ?? 10_000;
  const client = new grpc.Client(o.address, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': 64 * 1024 * 1024 });
  const collectors: Array<{ id: string; token: string; epoch: bigint }> = [];
  for (let i = 0; i < 3; i++) {
    const id = `fuzz-line-${o.seed % 100000}-${i}`;
    const { token } = await createServiceWithToken(o.admin, id, 'collector');
    collectors.push({ id, token, epoch: 1n });
  }
  const other = await createServiceWithToken(o.admin, `fuzz-other-${o.seed % 100000}`, 'collector');
  const figures: GrpcFigures = { sessions: 0, messagesSent: 0, statuses: {}, rejectedBatches: 0, hangs: 0, poisonStored: 0, unexpectedStatus: 0, healthyAfter: false, failures: 0, seconds: 0 };
  const findings: GrpcFinding[] = [];
  const series = new Set<string>();
  const plan = fc.sample(fc.tuple(fc.constantFrom(...SCENARIOS), fc.nat(2), fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 300 })), { seed: o.seed, numRuns: o.sessions });

  const open = (c: { id: string; epoch: bigint }, extra: Record<string, unknown> = {}) => ({ open: { collector_id: c.id, session_epoch: String(c.epoch), streams: STREAMS, agent: 'hostile-input fuzz', ...extra } });
  const opened = async (call: RawCall) => (await call.until(() => call.welcome() !== undefined, timeoutMs)) && call.welcome() !== undefined;
  const note = (w: NonNullable<ReturnType<RawCall['welcome']>> | undefined) => { for (const s of w?.streams ?? []) if (s.accepted && s.series_id) series.add(s.series_id); };
  let validStart = NOW_NS - 7_200_000_000_000n; // valid points: an hour below the poison window, moving up

  for (const [scenario, which, n, garbage] of plan) {
    const c = collectors[which];
    c.epoch += 1n;
    const call = new RawCall(client, scenario === 'no-credentials' ? null : scenario === 'wrong-collector' ? other.token : c.token);
    figures.sessions++;
    // Statuses the scenario may end with besides OK (INTERNAL: grpc-js could not decode the message).
    let allowed: grpc.status[] = [];
    switch (scenario as Scenario) {
      case 'garbage-first': call.write(Buffer.from(garbage)); allowed = [grpc.status.INTERNAL, grpc.status.FAILED_PRECONDITION, grpc.status.INVALID_ARGUMENT]; break;
      case 'truncated-open': { const b = encode(open(c)); call.write(b.subarray(0, Math.max(1, n % b.length))); allowed = [grpc.status.INTERNAL, grpc.status.INVALID_ARGUMENT, grpc.status.FAILED_PRECONDITION, grpc.status.PERMISSION_DENIED]; break; }
      case 'batch-first': call.send({ batch: goodBatch(0, 'LIVE', 1, POISON_START, 2) }); allowed = [grpc.status.FAILED_PRECONDITION]; break;
      case 'double-open': call.send(open(c)); if (await opened(call)) { note(call.welcome()); call.send(open(c)); } allowed = [grpc.status.FAILED_PRECONDITION]; break;
      case 'open-before-welcome': call.send(open(c)); call.send(open(c)); call.send({ batch: goodBatch(0, 'LIVE', 1, POISON_START, 2) }); allowed = [grpc.status.FAILED_PRECONDITION]; break;
      case 'stale-epoch': {
        c.epoch += 1n;
        const stale = { ...c, epoch: c.epoch - 2n };
        const first = new RawCall(client, c.token);
        first.send(open(c));
        if (await opened(first)) note(first.welcome());
        await first.finish(timeoutMs);
        call.send(open(stale));
        call.send({ batch: goodBatch(0, 'LIVE', 1, POISON_START, 2) });
        allowed = [grpc.status.FAILED_PRECONDITION];
        break;
      }
      case 'fenced': {
        call.send(open(c));
        if (await opened(call)) {
          note(call.welcome());
          const newer = new RawCall(client, c.token);
          c.epoch += 1n;
          newer.send(open(c));
          await opened(newer);
          await call.until(() => call.messages.some((m) => m.fence), 3_000);
          call.send({ batch: goodBatch(0, 'LIVE', 1, POISON_START, 3) });
          await call.until(() => call.messages.some((m) => m.rejected), 3_000);
          await newer.finish(timeoutMs);
        }
        break;
      }
      case 'bad-open': {
        const variants: Array<Record<string, unknown>> = [
          { streams: [{ name: 'x', value_type: 'FLOAT64', enum_set: 'no-such-set' }] },
          { streams: [{ name: 'x', value_type: 'VALUE_TYPE_UNSPECIFIED' }] },
          { streams: [{ name: 'x', value_type: 'FLOAT64' }, { name: 'x', value_type: 'FLOAT64' }] },
          { streams: [{ name: 'x', value_type: 'FLOAT64', series_id: 'not-a-uuid' }] },
          { streams: [{ name: '', value_type: 'FLOAT64' }] },
          { streams: [{ name: 'n\u0000ul', value_type: 'FLOAT64' }] },
          { collector_id: '' },
          { session_epoch: '18446744073709551615' },
          { streams: [{ name: 'x'.repeat(100_000), value_type: 'FLOAT64' }] },
        ];
        call.send(open(c, variants[n % variants.length]));
        if (await opened(call)) { note(call.welcome()); call.send({ batch: goodBatch(0, 'LIVE', 1, POISON_START, 2) }); }
        allowed = [grpc.status.INVALID_ARGUMENT, grpc.status.FAILED_PRECONDITION, grpc.status.PERMISSION_DENIED];
        break;
      }
      case 'no-credentials': call.send(open(c)); call.send({ batch: goodBatch(0, 'LIVE', 1, POISON_START, 2) }); allowed = [grpc.status.UNAUTHENTICATED, grpc.status.FAILED_PRECONDITION]; break;
      case 'wrong-collector': call.send(open(c)); call.send({ batch: goodBatch(0, 'LIVE', 1, POISON_START, 2) }); allowed = [grpc.status.PERMISSION_DENIED, grpc.status.FAILED_PRECONDITION]; break;
      case 'broken-batches': {
        call.send(open(c));
        if (!(await opened(call))) break;
        const w = call.welcome();
        note(w);
        let seq = 1;
        const picks = [n % BROKEN.length, (n >> 4) % BROKEN.length, (n >> 8) % BROKEN.length];
        for (const k of picks) { call.send({ batch: BROKEN[k].make(seq, w?.max_batch_points ?? 10_000) }); await call.until(() => call.messages.some((m) => m.rejected && m.rejected.seq === String(seq)), 2_000); seq++; }
        // the session still takes a good batch after its refusals
        const expectedSeq = call.messages.filter((m) => m.rejected).reduce((s, m) => Math.max(s, Number((m.rejected as { expected_seq?: string }).expected_seq ?? 0)), 0);
        call.send({ batch: goodBatch(0, 'LIVE', expectedSeq || seq, validStart, 3) });
        validStart += 1_000_000n;
        await call.until(() => call.messages.some((m) => m.ack), 3_000);
        break;
      }
      case 'garbage-after-open': call.send(open(c)); if (await opened(call)) { note(call.welcome()); call.write(Buffer.from(garbage)); } allowed = [grpc.status.INTERNAL, grpc.status.INVALID_ARGUMENT, grpc.status.FAILED_PRECONDITION]; break;
      case 'truncated-batch': {
        call.send(open(c));
        if (!(await opened(call))) break;
        note(call.welcome());
        const b = encode({ batch: goodBatch(0, 'LIVE', 1, POISON_START, 50) });
        call.write(b.subarray(0, Math.max(1, n % b.length)));
        allowed = [grpc.status.INTERNAL, grpc.status.INVALID_ARGUMENT, grpc.status.FAILED_PRECONDITION];
        break;
      }
      case 'non-finite-values': {
        call.send(open(c));
        if (!(await opened(call))) break;
        note(call.welcome());
        const bad = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
        // only the non-finite points are refused; they sit in the poison window, the finite ones just above it
        const ts = Buffer.concat([times(POISON_START, 3), times(validStart, 3)]);
        call.send({ batch: { ...goodBatch(0, 'LIVE', 1, POISON_START, 6), ts_ns: ts, ...column('FLOAT64', 6, (i) => (i < 3 ? bad[i] : i)) } });
        validStart += 1_000_000n;
        await call.until(() => call.messages.some((m) => m.ack), 3_000);
        break;
      }
      case 'credit-violation': {
        call.send(open(c));
        if (!(await opened(call))) break;
        const w = call.welcome();
        note(w);
        const max = Math.min(w?.max_batch_points ?? 1000, 5_000);
        const credit = Number(w?.live_credit ?? 0);
        // far past the credit without waiting for grants: the server says over_credit and stops reading
        for (let seq = 1, sentPts = 0; sentPts <= credit + max && seq < 200; seq++, sentPts += max) {
          call.send({ batch: goodBatch(0, 'LIVE', seq, validStart, max) });
          validStart += BigInt(max) * 1_000n + 1_000n;
        }
        await call.until(() => call.messages.some((m) => m.over_credit), 3_000);
        break;
      }
      case 'out-of-order-control': {
        call.send(open(c));
        if (!(await opened(call))) break;
        note(call.welcome());
        call.send({ watermark: { stream: 99, through_ns: '5' } });
        call.send({ watermark: { stream: 0, through_ns: '-9223372036854775808' } });
        call.send({ heartbeat: { sent_ns: '-1' } });
        call.send({});
        allowed = [grpc.status.INVALID_ARGUMENT];
        break;
      }
      case 'oversize-message': {
        call.send(open(c));
        if (!(await opened(call))) break;
        note(call.welcome());
        call.write(encode({ batch: { ...goodBatch(3, 'LIVE', 1, POISON_START, 1), str: ['x'.repeat(40 * 1024 * 1024)] } }));
        allowed = [grpc.status.RESOURCE_EXHAUSTED, grpc.status.INTERNAL];
        break;
      }
    }
    figures.rejectedBatches += call.messages.filter((m) => m.rejected).length;
    const status = await call.finish(timeoutMs);
    figures.messagesSent += call.sent;
    if (!status) {
      figures.hangs++;
      findings.push({ kind: 'hang', scenario, detail: `no status ${timeoutMs} ms after the collector half-closed; ${call.messages.length} messages received` });
      continue;
    }
    const name = grpc.status[status.code] ?? String(status.code);
    figures.statuses[name] = (figures.statuses[name] ?? 0) + 1;
    if (status.code !== grpc.status.OK && status.code !== grpc.status.CANCELLED && !allowed.includes(status.code)) {
      figures.unexpectedStatus++;
      findings.push({ kind: 'unexpected-status', scenario, detail: `${name}: ${status.details}` });
    }
  }

  // A normal session still works: open, one batch, its ack.
  const c = collectors[0];
  c.epoch += 1n;
  const check = new RawCall(client, c.token);
  check.send(open(c));
  if (await opened(check)) {
    note(check.welcome());
    check.send({ batch: goodBatch(0, 'LIVE', 1, validStart, 5) });
    figures.healthyAfter = await check.until(() => check.messages.some((m) => m.ack), timeoutMs) && check.messages.some((m) => m.ack);
  }
  await check.finish(timeoutMs);
  client.close();

  for (const id of series) {
    const stored = o.readSeries(id);
    const poison = stored.filter((ts) => (ts >= POISON_START && ts < POISON_END) || ts < 0n || ts > NOW_NS + 86_400_000_000_000n);
    if (poison.length) {
      figures.poisonStored += poison.length;
      findings.push({ kind: 'refused-point-stored', scenario: 'any', detail: `series ${id}: ${poison.length} points from refused messages stored (first at ${poison[0]})` });
    }
  }
  if (!figures.healthyAfter) findings.push({ kind: 'unhealthy', scenario: 'after', detail: 'a normal session was not acknowledged after the run' });
  figures.failures = figures.hangs + figures.poisonStored + figures.unexpectedStatus + (figures.healthyAfter ? 0 : 1);
  figures.seconds = (Date.now() - started) / 1000;
  return { figures, findings };
}

export function grpcFiguresTable(f: GrpcFigures): string {
  return [
    `sessions                       ${f.sessions}`,
    `messages sent                  ${f.messagesSent}`,
    `batches rejected by the server ${f.rejectedBatches}`,
    `hangs                          ${f.hangs}`,
    `unexpected statuses            ${f.unexpectedStatus}`,
    `refused points stored          ${f.poisonStored}`,
    `normal session after           ${f.healthyAfter ? 'acknowledged' : 'FAILED'}`,
    `seconds                        ${f.seconds.toFixed(1)}`,
    `statuses: ${Object.entries(f.statuses).map(([k, v]) => `${k}=${v}`).join(' ')}`,
  ].join('\n');
}
