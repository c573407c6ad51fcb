// A collector for the harnesses: sends its planned streams as fast as credit allows (live
// streams on the live lane, history streams on the backfill lane), keeps every batch whose
// outcome is unknown (the session ended first) or refused for a retryable cause in the
// project's store-and-forward buffer (src/collector/forward-buffer.ts), replays that buffer
// on the backfill lane after reconnecting, and writes down in the AckLedger exactly what
// the server acknowledged. While disconnected it goes on producing, slowly, into the buffer.
import { join } from 'node:path';
import { CollectorClient, type Lane } from '../../src/collector/collector-client.js';
import { ForwardBuffer } from '../../src/collector/forward-buffer.js';
import type { BatchColumns } from '../../src/ingest/batch-columns.js';
import { columnsOf, indexOf, type PlannedStream } from './point-plan.js';
import type { AckLedger } from './ack-ledger.js';
import { sleep } from './service-child.js';

export interface LoopCollectorOptions {
  collectorId: string;
  address: () => string;
  streams: PlannedStream[];
  stateDir: string;
  ledger: AckLedger;
  batchPoints: number;
  /** Points per stream and tick produced into the buffer while disconnected. */
  offlineBatchPoints?: number;
}

export interface LoopCollectorStats {
  sessions: number;
  connectFailures: number;
  batchesSent: number;
  pointsSent: number;
  replayedBatches: number;
  bufferedBatches: number;
  maxBufferedBytes: number;
  rejected: Record<string, number>;
  /** Points the engine refused inside acknowledged batches (the plan sends none it should refuse). */
  refusedPoints: number;
  /** A stream's series changed between sessions (must never happen). */
  seriesChanged: number;
}

export class LoopCollector {
  readonly stats: LoopCollectorStats = { sessions: 0, connectFailures: 0, batchesSent: 0, pointsSent: 0, replayedBatches: 0, bufferedBatches: 0, maxBufferedBytes: 0, rejected: {}, refusedPoints: 0, seriesChanged: 0 };
  /** Stream name -> series UUID, from the welcomes. */
  readonly seriesIds = new Map<string, string>();
  private readonly buffer: ForwardBuffer;
  private readonly nextK: number[];
  private client: CollectorClient | null = null;
  private epoch = 0n;
  private stopped = false;
  private replaying = false;
  private paused = false;
  private runDone: Promise<void> | null = null;

  constructor(private readonly opts: LoopCollectorOptions) {
    this.buffer = new ForwardBuffer(join(opts.stateDir, opts.collectorId.replace(/[^A-Za-z0-9._-]/g, '_')), opts.streams.map((s) => s.type));
    this.nextK = opts.streams.map(() => 0);
  }

  get collectorId(): string {
    return this.opts.collectorId;
  }

  start(): void {
    this.runDone = this.run();
  }

  /** Stops producing; gives what is in flight a moment to be acknowledged, then closes the session. */
  async stop(settleMs = 5_000): Promise<void> {
    this.stopped = true;
    await this.runDone;
    const deadline = Date.now() + settleMs;
    while (this.client && !this.client.ended && (this.client.inFlight() > 0 || this.client.waitingForCredit() > 0) && Date.now() < deadline) await sleep(20);
    this.client?.close();
    while (this.replaying) await sleep(10);
    await sleep(50);
    this.buffer.close();
  }

  /** Stop sending new points (the buffer is still replayed): the disk-full harness's quiet phase. */
  setPaused(paused: boolean): void {
    this.paused = paused;
  }

  pendingBufferBytes(): number {
    return this.buffer.pendingBytes();
  }

  connected(): boolean {
    return this.client !== null && !this.client.ended;
  }

  inFlight(): number {
    return this.client && !this.client.ended ? this.client.inFlight() + this.client.waitingForCredit() : 0;
  }

  private async run(): Promise<void> {
    let backoff = 100;
    let offlineTick = 0;
    while (!this.stopped) {
      if (!this.client || this.client.ended) {
        try {
          await this.connect();
          backoff = 100;
        } catch {
          this.stats.connectFailures++;
          // Offline: go on producing into the buffer, as a collector at a plant would.
          if (!this.paused && ++offlineTick % 2 === 0) this.produceOffline();
          await sleep(backoff);
          backoff = Math.min(backoff * 2, 1_000);
          continue;
        }
      }
      if (!this.replaying && this.buffer.pendingBytes() > 0) void this.replay();
      if (this.paused) { await sleep(50); continue; }
      await this.produceRound();
    }
  }

  private async connect(): Promise<void> {
    this.epoch++;
    const c = await CollectorClient.connect({
      address: this.opts.address(), collectorId: this.opts.collectorId, epoch: this.epoch,
      streams: this.opts.streams.map((s) => ({ name: s.name, type: s.type })), agent: 'historian-reliability/0.1',
    });
    c.welcome.streams.forEach((w, i) => {
      const name = this.opts.streams[i].name;
      if (!w.accepted) throw new Error(`stream ${this.opts.collectorId}/${name} refused: ${w.refusal}`);
      const before = this.seriesIds.get(name);
      if (before !== undefined && before !== w.series_id) this.stats.seriesChanged++;
      this.seriesIds.set(name, w.series_id);
    });
    // Fenced batches of the old session may still be rejected after it ended: nothing to do,
    // they were buffered when the old session's promises failed.
    c.on('error', () => undefined);
    this.client = c;
    this.stats.sessions++;
  }

  private key(i: number): string {
    return `${this.opts.collectorId}/${this.opts.streams[i].name}`;
  }

  /** One batch per stream, each on its stream's lane, within credit. */
  private async produceRound(): Promise<void> {
    for (let i = 0; i < this.opts.streams.length && !this.stopped && !this.paused; i++) {
      const c = this.client;
      if (!c || c.ended) return;
      const s = this.opts.streams[i];
      const k0 = this.nextK[i], n = this.opts.batchPoints;
      this.nextK[i] += n;
      this.opts.ledger.sent(this.key(i), k0, n);
      const cols = columnsOf(s, k0, n);
      this.stats.batchesSent++;
      this.stats.pointsSent += n;
      void c.send(s.lane, i, s.type, cols).then(
        (o) => {
          if (o.ok) this.acknowledged(i, k0, n, o.refusals);
          else this.refused(i, o.reason, o.retryable, cols);
        },
        () => this.keep(i, cols), // the session ended before an answer: unknown, so replay it
      );
      while (!this.stopped && !c.ended && c.waitingForCredit() > 4) await sleep(1);
      if (c.ended) return;
    }
    // Let the event loop breathe between rounds (acks and credit come in on it).
    await new Promise((r) => setImmediate(r));
  }

  private produceOffline(): void {
    const n = this.opts.offlineBatchPoints ?? 100;
    for (let i = 0; i < this.opts.streams.length; i++) {
      const k0 = this.nextK[i];
      this.nextK[i] += n;
      this.opts.ledger.sent(this.key(i), k0, n);
      this.keep(i, columnsOf(this.opts.streams[i], k0, n));
    }
  }

  private acknowledged(i: number, k0: number, n: number, refusals: Array<{ index: number }>): void {
    if (refusals.length === 0) { this.opts.ledger.ack(this.key(i), k0, n); return; }
    this.stats.refusedPoints += refusals.length;
    const out = new Set(refusals.map((r) => r.index));
    for (let j = 0; j < n; j++) if (!out.has(j)) this.opts.ledger.ack(this.key(i), k0 + j, 1);
  }

  private refused(i: number, reason: string, retryable: boolean, cols: BatchColumns): void {
    this.stats.rejected[reason] = (this.stats.rejected[reason] ?? 0) + 1;
    // Fenced batches were never written; storage-full ones are to be resent: both go to the buffer.
    if (retryable || reason === 'fenced') this.keep(i, cols);
  }

  private keep(i: number, cols: BatchColumns): void {
    if (this.buffer === undefined) return;
    try {
      this.buffer.append(i, cols);
    } catch {
      return; // closed at stop: the batch stays unacknowledged, which the checker allows
    }
    this.stats.bufferedBatches++;
    this.stats.maxBufferedBytes = Math.max(this.stats.maxBufferedBytes, this.buffer.pendingBytes());
  }

  /** Replays the buffer on the backfill lane; its position advances only over acknowledged records. */
  private async replay(): Promise<void> {
    this.replaying = true;
    try {
      let from: number | undefined;
      while (!this.stopped && this.client && !this.client.ended) {
        const records = this.buffer.read(32, from);
        if (records.length === 0) break;
        from = records[records.length - 1].end;
        const c = this.client;
        const outcomes = await Promise.allSettled(records.map((r) => {
          const s = this.opts.streams[r.stream];
          this.stats.replayedBatches++;
          return c.send('BACKFILL' as Lane, r.stream, s.type, r.cols).then((o) => {
            if (o.ok) this.acknowledged(r.stream, indexOf(s, r.cols.times[0]), r.cols.times.length, o.refusals);
            else this.stats.rejected[o.reason] = (this.stats.rejected[o.reason] ?? 0) + 1;
            return o;
          });
        }));
        let through = -1;
        for (let k = 0; k < outcomes.length; k++) {
          const o = outcomes[k];
          if (o.status === 'rejected' || (!o.value.ok && (o.value.retryable || o.value.reason === 'fenced'))) break;
          through = records[k].end;
        }
        if (through >= 0) this.buffer.acknowledge(through);
        if (through !== from) { await sleep(200); break; }
      }
    } finally {
      this.replaying = false;
    }
  }
}
