// The collector simulator: streams its sources (the plant of plant-signals.ts, or the shared
// dataset) to the service, live (history up to now as fast as credit allows, then each point
// when its time comes) or a fixed span as fast as credit allows, keeps what the server has not
// acknowledged in a store-and-forward buffer on disk while disconnected, and replays that
// buffer on the backfill lane after reconnecting, beside the live lane.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CollectorClient, type ConnectOptions, type OutgoingColumns } from './collector-client.js';
import { ForwardBuffer } from './forward-buffer.js';
import { nowNs } from '../clock.js';
import type { SourceStream } from './dataset-source.js';
import { joinScan, type StreamPoints } from './scan-columns.js';
import type { ValueType } from '../storage/encoding/chunk-types.js';

export interface SimulatorOptions {
  address: string;
  collectorId: string;
  token?: string;
  tls?: ConnectOptions['tls'];
  streams: SourceStream[];
  mode: 'live' | 'fast';
  batchPoints: number;
  /** Holds the forward buffer and the last session epoch. */
  stateDir: string;
  /** Live mode: how often the points that came due are sent (ms). */
  liveTickMs?: number;
  log?: (line: string) => void;
}

export interface SimulatorStats {
  sent: number;
  acked: number;
  bufferedBytes: number;
  refused: number;
  rejected: number;
  connected: boolean;
  sessions: number;
  creditWaitMs: number;
}

export class Simulator {
  readonly stats: SimulatorStats = { sent: 0, acked: 0, bufferedBytes: 0, refused: 0, rejected: 0, connected: false, sessions: 0, creditWaitMs: 0 };
  private readonly buffer: ForwardBuffer;
  private client: CollectorClient | null = null;
  private stopped = false;
  private exhausted = false;
  private replaying = false;
  private closed = false;

  constructor(private readonly opts: SimulatorOptions) {
    mkdirSync(opts.stateDir, { recursive: true });
    this.buffer = new ForwardBuffer(join(opts.stateDir, 'buffer'), opts.streams.map((s) => s.type));
    this.stats.bufferedBytes = this.buffer.pendingBytes();
  }

  /** Each connection uses a higher epoch than the last one, so a half-open old session is fenced. */
  private nextEpoch(): bigint {
    const f = join(this.opts.stateDir, 'epoch');
    const e = (existsSync(f) ? BigInt(readFileSync(f, 'utf8').trim() || '0') : 0n) + 1n;
    writeFileSync(f, e.toString());
    return e;
  }

  /** Runs until the dataset is sent and acknowledged (fast mode) or stop() is called. */
  async run(): Promise<void> {
    const producer = this.opts.mode === 'live' ? this.produceLive() : this.produceFast();
    let backoff = 200;
    while (!this.stopped && !(this.exhausted && this.buffer.pendingBytes() === 0 && (this.client?.inFlight() ?? 0) === 0)) {
      if (!this.client || this.client.ended) {
        try {
          await this.connect();
          backoff = 200;
        } catch (e) {
          this.opts.log?.(`connect failed: ${e instanceof Error ? e.message : String(e)}; retrying in ${backoff} ms`);
          await sleep(backoff);
          backoff = Math.min(backoff * 2, 5_000);
          continue;
        }
      }
      if (!this.replaying && this.buffer.pendingBytes() > 0) void this.replay();
      await sleep(50);
    }
    this.stopped = true;
    await producer;
    // Stopped by the caller: give what is in flight a moment to be acknowledged (durable).
    const deadline = Date.now() + 5_000;
    while (this.client && !this.client.ended && this.client.inFlight() > 0 && Date.now() < deadline) await sleep(20);
    this.client?.close();
    await sleep(50); // batches the close cut short go to the forward buffer for the next run
    this.closed = true;
    this.buffer.close();
  }

  stop(): void {
    this.stopped = true;
  }

  private async connect(): Promise<void> {
    const c = await CollectorClient.connect({
      address: this.opts.address, collectorId: this.opts.collectorId, epoch: this.nextEpoch(),
      streams: this.opts.streams.map((s) => ({ name: s.name, type: s.type, ...(s.enumSet ? { enumSet: s.enumSet } : {}) })), token: this.opts.token, tls: this.opts.tls,
      agent: 'historian-simulator/0.1',
    });
    const refused = c.welcome.streams.filter((s) => !s.accepted);
    for (const reason of new Set(refused.map((s) => s.refusal))) {
      this.opts.log?.(`${refused.filter((s) => s.refusal === reason).length} stream(s) refused: ${reason}`);
    }
    // A fresh collector (empty buffer, nothing sent yet) resumes after the last durable point.
    if (this.stats.sessions === 0 && this.buffer.pendingBytes() === 0) {
      c.welcome.streams.forEach((w, i) => { if (w.has_last_durable) this.opts.streams[i].skipThrough(BigInt(w.last_durable_ns)); });
    }
    c.on('ended', () => { this.stats.connected = false; });
    c.on('rejected', () => { this.stats.rejected++; });
    this.client = c;
    this.stats.connected = true;
    this.stats.sessions++;
  }

  /** Sends a batch on the live lane, or buffers it on disk when there is no session. */
  private deliver(stream: number, cols: OutgoingColumns): Promise<void> | null {
    const c = this.client;
    const quality = cols.quality ?? new Uint32Array(cols.times.length).fill(192);
    if (!c || c.ended || !this.accepted(stream)) {
      if (c && !c.ended && !this.accepted(stream)) return null;
      this.keep(stream, { ...cols, quality });
      return null;
    }
    this.stats.sent += cols.times.length;
    return c.send('LIVE', stream, this.opts.streams[stream].type, cols, nowNs()).then(
      (o) => {
        if (o.ok) { this.stats.acked += cols.times.length - o.refused; this.stats.refused += o.refused; }
        else if (o.retryable) this.keep(stream, { ...cols, quality });
      },
      // The session ended before an answer: unknown outcome, so keep the batch for replay.
      () => this.keep(stream, { ...cols, quality }),
    );
  }

  /** Puts a batch in the forward buffer (replayed on the backfill lane), unless the simulator has shut down. */
  private keep(stream: number, cols: OutgoingColumns & { quality: Uint32Array }): void {
    if (this.closed) return;
    this.buffer.append(stream, cols);
    this.stats.bufferedBytes = this.buffer.pendingBytes();
  }

  private accepted(stream: number): boolean {
    return this.client?.welcome.streams[stream]?.accepted ?? false;
  }

  private async produceFast(): Promise<void> {
    const live = this.opts.streams.map(() => true);
    let remaining = live.length;
    while (!this.stopped && remaining > 0) {
      for (let i = 0; i < this.opts.streams.length && !this.stopped; i++) {
        if (!live[i]) continue;
        while (!this.client || this.client.ended) { if (this.stopped) return; await sleep(50); }
        const cols = this.opts.streams[i].next(this.opts.batchPoints);
        if (!cols) { live[i] = false; remaining--; continue; }
        void this.deliver(i, cols);
        await this.creditRoom();
      }
    }
    this.exhausted = true;
  }

  /**
   * Live mode: every tick, each stream's points up to now. The first tick after the first
   * session sends the history (a start before now) as fast as credit allows; later ticks
   * send the last second's points, every stream's together in scans (one batch per value
   * type, of up to batchPoints points), as a collector sends the tags it read at once.
   */
  private async produceLive(): Promise<void> {
    const tick = this.opts.liveTickMs ?? 1_000;
    // Nothing before the first session: it may move the streams past what the server already holds.
    while (this.stats.sessions === 0) { if (this.stopped) return; await sleep(50); }
    while (!this.stopped) {
      const now = BigInt(Date.now()) * 1_000_000n;
      const scans = new Map<ValueType, StreamPoints[]>();
      for (let i = 0; i < this.opts.streams.length && !this.stopped; i++) {
        for (;;) {
          const cols = this.opts.streams[i].next(this.opts.batchPoints, now);
          if (!cols) break;
          // A short batch is the stream caught up with now: it joins the tick's scan of its type.
          if (cols.times.length < this.opts.batchPoints && this.accepted(i)) {
            const type = this.opts.streams[i].type;
            let list = scans.get(type);
            if (!list) { list = []; scans.set(type, list); }
            list.push({ stream: i, cols });
            break;
          }
          void this.deliver(i, cols);
          await this.creditRoom();
        }
      }
      for (const [type, parts] of scans) {
        for (let from = 0; from < parts.length && !this.stopped;) {
          let to = from, points = 0;
          while (to < parts.length && (to === from || points + parts[to].cols.times.length <= this.opts.batchPoints)) points += parts[to++].cols.times.length;
          void this.deliverScan(type, parts.slice(from, to));
          await this.creditRoom();
          from = to;
        }
      }
      await sleep(tick);
    }
  }

  /** Sends streams' points as one scan on the live lane; what is not acknowledged goes to the forward buffer stream by stream. */
  private deliverScan(type: ValueType, parts: StreamPoints[]): Promise<void> | null {
    const c = this.client;
    if (parts.length === 1 || !c || c.ended) { for (const p of parts) void this.deliver(p.stream, p.cols); return null; }
    const keepAll = () => { for (const p of parts) this.keep(p.stream, { ...p.cols, quality: p.cols.quality ?? new Uint32Array(p.cols.times.length).fill(192) }); };
    const scan = joinScan(type, parts);
    const n = scan.streams.length;
    this.stats.sent += n;
    return c.sendScan('LIVE', scan.streams, type, scan.cols, nowNs()).then(
      (o) => {
        if (o.ok) { this.stats.acked += n - o.refused; this.stats.refused += o.refused; }
        else if (o.retryable) keepAll();
      },
      // The session ended before an answer: unknown outcome, so keep the points for replay.
      keepAll,
    );
  }

  /** Keeps the credit queue short: the wait belongs to the server's pacing, not our memory. */
  private async creditRoom(): Promise<void> {
    while (!this.stopped && this.client && !this.client.ended && this.client.waitingForCredit() > 8) await sleep(1);
  }

  /** Replays the forward buffer on the backfill lane; its position advances with the acks. */
  private async replay(): Promise<void> {
    this.replaying = true;
    try {
      let from: number | undefined;
      while (!this.stopped && this.client && !this.client.ended) {
        const records = this.buffer.read(32, from);
        if (records.length === 0) break;
        from = records[records.length - 1].end;
        const c = this.client;
        const outcomes = await Promise.all(records.map((r) => {
          this.stats.sent += r.cols.times.length;
          return c.send('BACKFILL', r.stream, this.opts.streams[r.stream].type, r.cols);
        }));
        let through = -1;
        for (let k = 0; k < outcomes.length; k++) {
          const o = outcomes[k];
          if (!o.ok && o.retryable) break;
          if (o.ok) { this.stats.acked += records[k].cols.times.length - o.refused; this.stats.refused += o.refused; }
          through = records[k].end;
        }
        if (through >= 0) this.buffer.acknowledge(through);
        this.stats.bufferedBytes = this.buffer.pendingBytes();
        if (through !== from) break;
      }
    } catch {
      // The session ended mid-replay: the position only moved for acknowledged records.
    } finally {
      this.replaying = false;
    }
  }

  creditWaitMs(): number {
    return this.client ? this.client.creditWaitMs.LIVE + this.client.creditWaitMs.BACKFILL : 0;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
