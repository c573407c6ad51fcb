// The worker-wide ingest state: collectors, the commit pipeline, session opening with
// epoch checks and fencing, backfill pacing, the free-disk check, idle timeouts and the
// diagnostics. grpc-server.ts feeds it messages; the main thread answers its questions
// (credentials, the model) through the MainSide interface.
import { statfs } from 'node:fs/promises';
import { nowNs } from '../clock.js';
import { refusedTextProblem } from '../text-policy.js';
import { VALUE_TYPES } from '../series/records.js';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import { CollectorState } from './collector-state.js';
import { CommitPipeline } from './commit-pipeline.js';
import { CommitFeed } from './commit-feed.js';
import type { IngestStore } from './ingest-store.js';
import { IngestSession, type SessionStream } from './ingest-session.js';
import type { SessionLink } from './session-link.js';
import type {
  AuthenticateArg, AuthenticateResult, CollectorDetail, PackedCommits, CollectorDiagnostic, CollectorRow, IngestTuning,
  OpenSessionArg, OpenSessionResult, StreamRequest,
} from './thread-messages.js';
import type { AuthMode } from '../auth/access-types.js';
import { UUID_RE } from '../uuid.js';

export interface MainSide {
  authenticate(arg: AuthenticateArg): Promise<AuthenticateResult>;
  openSession(arg: OpenSessionArg): Promise<OpenSessionResult>;
  persist(rows: CollectorRow[]): void;
  fatal(message: string): void;
  log(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown>): void;
  /** The commit feed's groups (see commit-feed.ts); buffers in `transfer` are moved, not copied. */
  commits(group: PackedCommits, transfer: ArrayBuffer[]): void;
}

/** SessionOpen as proto-loader hands it over. */
export interface WireOpen {
  collector_id: string;
  session_epoch: string;
  streams: Array<{ name: string; value_type: string; series_id: string; enum_set?: string }>;
  agent: string;
}

const COLLECTOR_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$/;
const MAX_STREAMS = 100_000;
const MAX_STREAM_NAME = 256;
const MAX_ENUM_SET_REF = 200;
const WIRE_TYPE: Record<string, ValueType> = { FLOAT64: 'float64', INT64: 'int64', BOOLEAN: 'boolean', STRING: 'string', ENUM: 'enum' };
const PERSIST_MS = 2_000;
const DISK_CHECK_MS = 1_000;
const PACE_MS = 5;

export class OpenRefused extends Error {
  constructor(readonly status: 'unauthenticated' | 'permission-denied' | 'failed-precondition' | 'invalid-argument', message: string) {
    super(message);
  }
}

export class IngestCore {
  readonly collectors = new Map<string, CollectorState>();
  readonly pipeline: CommitPipeline;
  /** Durable points of the series the main thread watches. */
  readonly feed: CommitFeed;
  private full = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private pacing = new Set<IngestSession>();
  private paceTimer: NodeJS.Timeout | null = null;
  private paceStartedMs: number | null = null;

  constructor(
    readonly store: IngestStore,
    private readonly main: MainSide,
    readonly tuning: IngestTuning,
    private readonly authMode: AuthMode,
    private readonly dataDir: string,
    known: CollectorRow[],
  ) {
    for (const row of known) this.collectors.set(row.collector_id, new CollectorState(row.collector_id, row));
    const feed = this.feed = new CommitFeed((group, transfer) => main.commits(group, transfer));
    this.pipeline = new CommitPipeline(store, {
      principal: 'ingest',
      storageFull: () => this.full,
      fatal: (e) => main.fatal(`storage write failed; stopping rather than retrying: ${e instanceof Error ? e.message : String(e)}`),
      settled: () => undefined,
      durable: (batches, results) => feed.publish(batches, results),
    }, tuning);
    this.timers.push(setInterval(() => this.persist(), PERSIST_MS));
    this.timers.push(setInterval(() => { void this.checkDisk(); }, DISK_CHECK_MS));
    this.timers.push(setInterval(() => this.expireIdle(), Math.max(250, Math.min(5_000, tuning.idleTimeoutMs / 4))));
    for (const t of this.timers) t.unref();
  }

  async checkDisk(): Promise<void> {
    try {
      const s = await statfs(this.dataDir);
      const free = s.bavail * s.bsize;
      const full = free < this.tuning.minFreeBytes;
      if (full !== this.full) this.main.log(full ? 'warn' : 'info', full ? 'ingest refuses batches: free disk below threshold' : 'ingest accepts batches again', { free_bytes: free, min_free_bytes: this.tuning.minFreeBytes });
      this.full = full;
    } catch (e) {
      this.main.log('warn', 'free-disk check failed', { err: e instanceof Error ? e.message : String(e) });
    }
  }

  storageFull(): boolean {
    return this.full;
  }

  private collector(id: string): CollectorState {
    let c = this.collectors.get(id);
    if (!c) { c = new CollectorState(id, null); this.collectors.set(id, c); }
    return c;
  }

  /** Validates, authenticates and opens a session, fencing older epochs; throws OpenRefused. */
  async open(link: SessionLink, msg: WireOpen, creds: { bearer: string | null; sans: string[] | null }): Promise<IngestSession> {
    const id = msg.collector_id;
    if (typeof id !== 'string' || !COLLECTOR_ID_RE.test(id)) throw new OpenRefused('invalid-argument', 'open.collector_id: 1 to 200 characters of letters, digits and ._:@/- starting with a letter or digit');
    if (!/^[0-9]{1,20}$/.test(msg.session_epoch) || BigInt(msg.session_epoch) > 2n ** 63n - 1n) throw new OpenRefused('invalid-argument', 'open.session_epoch: must be an integer from 0 to 2^63-1');
    const epoch = BigInt(msg.session_epoch);
    const streams = this.parseStreams(msg.streams);

    let identity = 'anonymous';
    if (this.authMode !== 'disabled') {
      const auth = await this.main.authenticate({ collectorId: id, bearer: creds.bearer, sans: creds.sans, peer: link.peer });
      if (!auth.ok) {
        this.main.log('warn', 'collector authentication refused', { collector_id: id, peer: link.peer, status: auth.status, reason: auth.message, auth_mode: this.authMode });
        if (this.authMode === 'enforced') throw new OpenRefused(auth.status, auth.message);
      } else identity = auth.identity;
    }

    const c = this.collector(id);
    const turn = c.opening.then(() => this.openInTurn(c, link, epoch, identity, msg.agent ?? '', streams));
    c.opening = turn.catch(() => undefined);
    return turn;
  }

  private parseStreams(list: WireOpen['streams']): StreamRequest[] {
    if (!Array.isArray(list) || list.length === 0) throw new OpenRefused('invalid-argument', 'open.streams: declare at least one stream');
    if (list.length > MAX_STREAMS) throw new OpenRefused('invalid-argument', `open.streams: at most ${MAX_STREAMS} streams per session`);
    const seen = new Set<string>();
    return list.map((s, i) => {
      if (typeof s.name !== 'string' || s.name.length === 0 || s.name.length > MAX_STREAM_NAME) throw new OpenRefused('invalid-argument', `open.streams[${i}].name: 1 to ${MAX_STREAM_NAME} characters`);
      const badName = refusedTextProblem(s.name);
      if (badName !== null) throw new OpenRefused('invalid-argument', `open.streams[${i}].name: ${badName}`);
      if (seen.has(s.name)) throw new OpenRefused('invalid-argument', `open.streams[${i}].name: "${s.name}" is declared twice`);
      seen.add(s.name);
      const type = WIRE_TYPE[s.value_type];
      if (!type || !VALUE_TYPES.includes(type)) throw new OpenRefused('invalid-argument', `open.streams[${i}].value_type: one of FLOAT64, INT64, BOOLEAN, STRING, ENUM`);
      const sid = (s.series_id ?? '').toLowerCase(); // stored ids are lower-case
      if (sid !== '' && !UUID_RE.test(sid)) throw new OpenRefused('invalid-argument', `open.streams[${i}].series_id: a UUID or empty`);
      const enumSet = s.enum_set ?? '';
      if (enumSet !== '' && type !== 'enum') throw new OpenRefused('invalid-argument', `open.streams[${i}].enum_set: only ENUM streams name an enum set`);
      const badSet = refusedTextProblem(enumSet);
      if (badSet !== null) throw new OpenRefused('invalid-argument', `open.streams[${i}].enum_set: ${badSet}`);
      if (enumSet.length > MAX_ENUM_SET_REF) throw new OpenRefused('invalid-argument', `open.streams[${i}].enum_set: at most ${MAX_ENUM_SET_REF} characters`);
      return { name: s.name, type, seriesId: sid === '' ? null : sid, enumSet: enumSet === '' ? null : enumSet };
    });
  }

  private async openInTurn(c: CollectorState, link: SessionLink, epoch: bigint, identity: string, agent: string,
    streams: StreamRequest[]): Promise<IngestSession> {
    if (epoch < c.epoch) throw new OpenRefused('failed-precondition', `session_epoch ${epoch} is below the current epoch ${c.epoch} of collector ${c.collectorId}: it is fenced`);
    for (const s of c.sessions) {
      if (s.epoch === epoch && s.fencedBy === null) throw new OpenRefused('failed-precondition', `session_epoch ${epoch} is held by an open session of collector ${c.collectorId}; open with a higher epoch`);
    }
    const opened = await this.main.openSession({ collectorId: c.collectorId, epoch: epoch.toString(), identity, streams });
    if (!opened.ok) throw new OpenRefused('failed-precondition', `session_epoch ${epoch} is below the current epoch ${opened.currentEpoch} recorded for collector ${c.collectorId}`);

    c.epoch = epoch;
    const at = nowNs();
    for (const old of c.sessions) {
      if (old.epoch < epoch && old.fencedBy === null) {
        c.fencedStreamsTotal += BigInt(old.fence(epoch));
        c.lastFencedNs = at;
        this.main.log('info', 'collector session fenced', { collector_id: c.collectorId, old_epoch: old.epoch.toString(), new_epoch: epoch.toString() });
      }
    }
    // Everything the fenced sessions got into a group is durable before we say where to resume.
    await this.pipeline.idle();

    const sessionStreams: SessionStream[] = streams.map((s, i) => ({
      name: s.name, type: s.type, seriesId: opened.streams[i].seriesId, accepted: opened.streams[i].accepted,
      refusal: opened.streams[i].refusal, pointsWritten: 0, pointsRefused: 0, batchesRejected: 0, lastTsNs: null,
    }));
    this.store.refresh();
    // a series this open created is empty and of the declared type: nothing to read
    const created = opened.streams.map((o) => o.created === true);
    const states = this.store.streamStates(sessionStreams.map((s, i) => (s.accepted && !created[i] ? s.seriesId : null)));
    sessionStreams.forEach((s, i) => {
      if (s.accepted && s.seriesId && !created[i] && states[i]?.type !== s.type) {
        s.accepted = false;
        s.refusal = `series ${s.seriesId} is not a ${s.type} series in storage`;
      }
    });
    const session = new IngestSession(c, epoch, identity, agent, sessionStreams, link, {
      pipeline: this.pipeline,
      tuning: this.tuning,
      storageFull: () => this.full,
      mayGrantBackfill: () => this.pipeline.liveBacklog() < this.tuning.maxGroupPoints,
      pace: (s) => this.pace(s),
      ackLater: (s) => this.ackLater(s),
      liveShare: () => this.liveShare(),
    });
    c.sessions.add(session);
    c.latest = session;
    c.streamNames = streams.map((s) => s.name);
    c.dirty = true;
    link.send({ welcome: {
      granted_epoch: epoch.toString(),
      live_credit: String(this.tuning.liveCredit),
      backfill_credit: String(this.tuning.backfillCredit),
      streams: sessionStreams.map((s, i) => {
        const state = s.accepted ? states[i] : null;
        const last = state?.lastNs ?? null;
        const wm = state?.finalisedNs ?? null;
        if (wm !== null) c.watermarks.set(s.name, wm);
        return {
          stream: i, accepted: s.accepted, series_id: s.seriesId ?? '', refusal: s.refusal ?? '',
          has_last_durable: last !== null, last_durable_ns: (last ?? 0n).toString(),
          has_watermark: wm !== null, watermark_ns: (wm ?? 0n).toString(),
        };
      }),
      max_batch_points: this.tuning.maxBatchPoints,
      heartbeat_interval_ms: this.tuning.heartbeatIntervalMs,
      session_id: session.id,
    } });
    return session;
  }

  closed(session: IngestSession): void {
    session.closed = true;
    session.collector.sessions.delete(session);
    this.pacing.delete(session);
    session.collector.dirty = true;
  }

  /** Applies a watermark after every batch received before it is durable. */
  async watermark(session: IngestSession, stream: number, throughNs: string): Promise<void> {
    const s = session.streams[stream];
    const through = BigInt(throughNs || '0');
    if (!s || !s.accepted || !s.seriesId || session.fencedBy !== null) {
      session.collector.countRejection(session.fencedBy !== null ? 'fenced' : 'unknown-stream');
      session.link.send({ rejected: { lane: 'LANE_UNSPECIFIED', seq: '0', stream, reason: session.fencedBy !== null ? 'fenced' : 'unknown-stream', detail: `watermark for stream ${stream} refused`, retryable: false, expected_seq: '0' } });
      return;
    }
    await this.pipeline.idle();
    await this.store.setFinalised(s.seriesId, through);
    const c = session.collector;
    const prev = c.watermarks.get(s.name);
    if (prev === undefined || through > prev) c.watermarks.set(s.name, through);
    c.dirty = true;
    session.link.send({ watermark_applied: { stream, through_ns: through.toString() } });
  }

  /** Sessions with settled batches not yet acknowledged; flushed in one microtask. */
  private readonly ackDue: IngestSession[] = [];

  private ackLater(s: IngestSession): void {
    if (this.ackDue.length === 0) queueMicrotask(() => this.flushAcks());
    this.ackDue.push(s);
  }

  private flushAcks(): void {
    this.share = null;
    // A session may be queued again while flushing (a grant never settles a batch, so this ends).
    for (let i = 0; i < this.ackDue.length; i++) this.ackDue[i].flushAcks();
    this.ackDue.length = 0;
  }

  /** liveShare() as computed for the acks being flushed now (null: compute again). */
  private share: number | null = null;

  /**
   * Live points each active live session may have outstanding: the engine's measured live
   * rate (points per ms) times the ack target, split between the sessions that sent a live
   * batch in the last second; the total is at least half a full group (maxGroupPoints). Sessions
   * never get less than two of their batches (liveGrant).
   */
  private liveShare(): number {
    if (this.share !== null) return this.share;
    const now = performance.now();
    let active = 0;
    for (const c of this.collectors.values()) {
      for (const s of c.sessions) if (!s.closed && s.fencedBy === null && now - s.live.lastBatchMs < 1000) active++;
    }
    const rate = this.pipeline.liveRate();
    // until a live group has been measured, the configured credit (nothing to size it by)
    // Never less in all than half a full group: smaller groups cost the engine more per point
    // (more commits), which lowers the measured rate, which would shrink credit further. Not a
    // whole group: with 4 sessions that floor (15k each) sat above the per-session cap (10k),
    // so 40k points were in flight whatever the rate, and acks slowed with every dip of it.
    this.share = rate === null ? this.tuning.liveCredit : Math.max(this.tuning.ackTargetMs * rate, this.tuning.maxGroupPoints / 2) / Math.max(1, active);
    queueMicrotask(() => { this.share = null; });
    return this.share;
  }

  private pace(s: IngestSession): void {
    this.pacing.add(s);
    if (this.paceStartedMs === null) this.paceStartedMs = performance.now();
    if (this.paceTimer) return;
    this.paceTimer = setTimeout(() => this.releasePaced(), PACE_MS);
  }

  private releasePaced(): void {
    this.paceTimer = null;
    if (this.pipeline.liveBacklog() >= this.tuning.maxGroupPoints && this.pacing.size > 0) {
      this.paceTimer = setTimeout(() => this.releasePaced(), PACE_MS);
      return;
    }
    const waited = this.paceStartedMs === null ? 0 : performance.now() - this.paceStartedMs;
    this.paceStartedMs = null;
    for (const s of this.pacing) {
      s.collector.backfillRateLimitedMs += waited;
      s.releaseBackfill();
    }
    this.pacing.clear();
  }

  private expireIdle(): void {
    const now = performance.now();
    for (const c of this.collectors.values()) {
      for (const s of c.sessions) {
        if (now - s.lastMessageMs > this.tuning.idleTimeoutMs) s.link.end('deadline-exceeded', `no message for ${this.tuning.idleTimeoutMs} ms (send heartbeats)`);
      }
    }
  }

  persist(): void {
    const rows: CollectorRow[] = [];
    for (const c of this.collectors.values()) if (c.dirty) { c.dirty = false; rows.push(c.row()); }
    if (rows.length) this.main.persist(rows);
  }

  diagnostics(): CollectorDiagnostic[] {
    return [...this.collectors.values()].sort((a, b) => (a.collectorId < b.collectorId ? -1 : 1)).map((c) => c.diagnostic());
  }

  detail(id: string): CollectorDetail | null {
    return this.collectors.get(id)?.detail() ?? null;
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    if (this.paceTimer) clearTimeout(this.paceTimer);
    await this.pipeline.idle();
    this.persist();
  }
}
