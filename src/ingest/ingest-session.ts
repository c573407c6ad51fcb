// One collector session: its streams, its two lanes, and what happens to each message it
// sends. A malformed batch is rejected on its own (BatchRejected) and the stream stays
// open; only a protocol violation that makes the session meaningless (no open first)
// ends the call.
import { randomUUID } from 'node:crypto';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import { nowNs } from '../clock.js';
import { decodeBatchColumns, scanStreams, type WireBatch } from './batch-columns.js';
import { splitScan, type ScanPart } from './scan-split.js';
import type { CommitPipeline } from './commit-pipeline.js';
import type { StoredBatchResult } from './ingest-store.js';
import type { PointBatch } from '../storage/series-store.js';
import { SessionLane, type LaneName, type Slot } from './session-lane.js';
import type { SessionLink } from './session-link.js';
import type { CollectorState } from './collector-state.js';
import { absMs, groupTrace } from './group-trace.js';
import type { IngestTuning } from './thread-messages.js';

export interface SessionStream {
  name: string;
  type: ValueType;
  seriesId: string | null;
  accepted: boolean;
  refusal: string | null;
  pointsWritten: number;
  pointsRefused: number;
  batchesRejected: number;
  lastTsNs: bigint | null;
}

/** Decisions the session leaves to the worker-wide core. */
export interface SessionEnv {
  pipeline: CommitPipeline;
  tuning: IngestTuning;
  storageFull(): boolean;
  /** Backfill credit is withheld while live points wait (pacing); returns true when granted now. */
  mayGrantBackfill(): boolean;
  pace(session: IngestSession): void;
  /** Queues session.flushAcks() to run once the code settling batches now has finished. */
  ackLater(session: IngestSession): void;
  /**
   * Live points one session may have outstanding (credit plus unacknowledged batches) so that
   * all live sessions together hold about the engine's rate times the ack latency target.
   */
  liveShare(): number;
}

const MAX_LISTED_REFUSALS = 100;

export class IngestSession {
  readonly id = randomUUID();
  readonly openedNs = nowNs();
  readonly live: SessionLane;
  readonly backfill: SessionLane;
  fencedBy: bigint | null = null;
  lastMessageMs = performance.now();
  private paused = false;
  private ackQueued = false;
  /** splitScan's per-stream scratch, made at the session's first scan. */
  private scanCounts: Int32Array | null = null;
  closed = false;

  constructor(
    readonly collector: CollectorState,
    readonly epoch: bigint,
    readonly identity: string,
    readonly agent: string,
    readonly streams: SessionStream[],
    readonly link: SessionLink,
    private readonly env: SessionEnv,
  ) {
    // the full credit at first: the engine's rate for this session's batches is not known yet
    this.live = new SessionLane('LIVE', env.tuning.liveCredit);
    this.backfill = new SessionLane('BACKFILL', env.tuning.backfillCredit);
  }

  lane(name: LaneName): SessionLane {
    return name === 'LIVE' ? this.live : this.backfill;
  }

  fence(byEpoch: bigint): number {
    this.fencedBy = byEpoch;
    const accepted = this.streams.filter((s) => s.accepted).length;
    this.link.send({ fence: {
      superseding_epoch: byEpoch.toString(),
      streams: this.streams.map((_, i) => i),
      reason: `session epoch ${byEpoch} of collector ${this.collector.collectorId} supersedes epoch ${this.epoch}`,
    } });
    return accepted;
  }

  onBatch(b: WireBatch): void {
    const arrival = nowNs();
    const arrivedMs = groupTrace ? absMs() : 0;
    this.collector.lastBatchArrivalNs = arrival;
    this.collector.dirty = true;
    const receipt = BigInt(b.collector_receipt_ns || '0');
    if (receipt > this.collector.lastCollectorReceiptNs) this.collector.lastCollectorReceiptNs = receipt;

    if (b.lane !== 'LIVE' && b.lane !== 'BACKFILL') {
      this.reject('LIVE', null, b, 'bad-lane', `lane must be LIVE or BACKFILL, got ${b.lane}`, false);
      return;
    }
    const lane = this.lane(b.lane);
    const seq = Number(b.seq);
    if (seq !== lane.expectedSeq) {
      // Not consumed: the collector must resend from expected_seq.
      this.reject(b.lane, null, b, 'sequence-gap', `expected seq ${lane.expectedSeq} on lane ${b.lane}, got ${b.seq}`, false, lane.expectedSeq);
      return;
    }
    const points = Number.isInteger(b.count) && b.count > 0 ? b.count : 0;
    const before = lane.take(points);
    const slot = lane.open(points);
    if (before < points) {
      lane.overCreditTotal++;
      this.link.send({ over_credit: { lane: b.lane, seq: b.seq, sent_points: String(points), available: String(Math.max(0, before)) } });
      if (!this.paused) { this.paused = true; this.link.pause(); }
    }
    if (this.fencedBy !== null) {
      this.reject(b.lane, slot, b, 'fenced', `fenced by session epoch ${this.fencedBy}`, false);
      return;
    }
    const scan = b.streams.byteLength > 0;
    const stream = this.streams[b.stream];
    if (!scan && (!stream || !stream.accepted)) {
      this.reject(b.lane, slot, b, 'unknown-stream', this.streamRefusal(b.stream), false);
      return;
    }
    if (this.env.storageFull()) {
      this.reject(b.lane, slot, b, 'storage-full', 'free disk space is below the ingest threshold; resend later', true);
      return;
    }
    if (scan) { this.onScan(b, lane, slot, arrival, arrivedMs); return; }
    const decoded = decodeBatchColumns(b, stream.type, this.env.tuning.maxBatchPoints, arrival + this.env.tuning.maxFutureNs);
    if (!decoded.ok) {
      stream.batchesRejected++;
      this.reject(b.lane, slot, b, decoded.reason, decoded.detail, false);
      return;
    }
    const { cols, maxTs } = decoded;
    const batch: PointBatch = { series: stream.seriesId as string, times: cols.times, values: cols.values, quality: cols.quality };
    this.enqueue(lane, slot, b, points, [batch], arrivedMs, (results) => this.written(lane, slot, b, maxTs, results[0]));
  }

  /** Hands the batch's write-path batches to the group commit; a refusal there (fenced, storage full) rejects the batch. */
  private enqueue(lane: SessionLane, slot: Slot, b: WireBatch, points: number, batches: PointBatch[], arrivedMs: number, written: (results: StoredBatchResult[]) => void): void {
    this.env.pipeline.enqueue({
      lane: lane.name,
      points,
      batches,
      trace: groupTrace ? { id: `${this.collector.collectorId}/${lane.name}/${b.seq}`, arrivedMs } : undefined,
      fenced: () => this.fencedBy !== null,
      settle: (outcome) => {
        if ('rejected' in outcome) {
          this.reject(lane.name, slot, b, outcome.rejected, outcome.detail, outcome.rejected === 'storage-full');
          return;
        }
        written(outcome.results);
      },
    });
  }

  private streamRefusal(index: number): string {
    const stream = this.streams[index];
    return stream ? `stream ${index} (${stream.name}) was refused at open: ${stream.refusal}` : `stream index ${index} was not declared (${this.streams.length} streams)`;
  }

  /**
   * A scan: the points of several streams of one value type in one batch (one seq, one ack).
   * Any point of a stream not declared, refused at open or of another type rejects the
   * whole batch, as a malformed column does; otherwise it is written as one batch per stream
   * in the same group commit.
   */
  private onScan(b: WireBatch, lane: SessionLane, slot: Slot, arrival: bigint, arrivedMs: number): void {
    const idx = scanStreams(b);
    if (!(idx instanceof Uint32Array)) { this.reject(lane.name, slot, b, idx.reason, idx.detail, false); return; }
    const first = this.streams[idx[0]];
    const type = first?.type;
    for (let i = 0; i < idx.length; i++) {
      const st = this.streams[idx[i]];
      if (!st || !st.accepted) { this.reject(lane.name, slot, b, 'unknown-stream', `point ${i}: ${this.streamRefusal(idx[i])}`, false); return; }
      if (st.type !== type) {
        this.reject(lane.name, slot, b, 'wrong-type', `point ${i}: stream ${idx[i]} (${st.name}) is ${st.type}, but a scan carries one value type and its first point's stream ${idx[0]} (${first.name}) is ${type}`, false);
        return;
      }
    }
    const decoded = decodeBatchColumns(b, type, this.env.tuning.maxBatchPoints, arrival + this.env.tuning.maxFutureNs);
    if (!decoded.ok) { this.reject(lane.name, slot, b, decoded.reason, decoded.detail, false); return; }
    this.scanCounts ??= new Int32Array(this.streams.length);
    const parts = splitScan(idx, decoded.cols, (s) => this.streams[s].seriesId as string, this.scanCounts);
    this.enqueue(lane, slot, b, idx.length, parts.map((p) => p.batch), arrivedMs, (results) => this.scanWritten(lane, slot, parts, results));
  }

  private scanWritten(lane: SessionLane, slot: Slot, parts: ScanPart[], results: StoredBatchResult[]): void {
    lane.batchesAccepted++;
    for (let j = 0; j < parts.length; j++) {
      const p = parts[j];
      const times = p.batch.times as BigInt64Array;
      let maxTs = times[0];
      for (let k = 1; k < times.length; k++) if (times[k] > maxTs) maxTs = times[k];
      this.stored(lane, slot, p.stream, maxTs, results[j], p.at, p.first);
    }
    this.settle(lane, slot);
  }

  private written(lane: SessionLane, slot: Slot, b: WireBatch, maxTs: bigint, r: StoredBatchResult): void {
    lane.batchesAccepted++;
    this.stored(lane, slot, b.stream, maxTs, r, null, 0);
    this.settle(lane, slot);
  }

  /**
   * One stream's share of a written batch: its counters, its newest time, and its refused
   * points told by their index in the batch (`at[i]`, or `first + i` without `at`). A scan
   * sends one points_refused per stream with refusals.
   */
  private stored(lane: SessionLane, slot: Slot, index: number, maxTs: bigint, r: StoredBatchResult, at: Int32Array | null, first: number): void {
    const stream = this.streams[index];
    const stored = r.accepted + r.unchanged;
    lane.pointsWritten += stored;
    stream.pointsWritten += stored;
    if (stream.lastTsNs === null || maxTs > stream.lastTsNs) stream.lastTsNs = maxTs;
    if (r.refused === 0) return;
    lane.pointsRefused += r.refused;
    stream.pointsRefused += r.refused;
    this.link.send({ points_refused: {
      lane: lane.name, seq: String(slot.seq), stream: index, refused: r.refused,
      refusals: r.refusals.slice(0, MAX_LISTED_REFUSALS).map((x) => ({ index: at === null ? first + x.index : at[x.index], reason: x.reason })),
    } });
  }

  private reject(laneName: LaneName, slot: Slot | null, b: WireBatch, reason: string, detail: string, retryable: boolean, expected?: number): void {
    this.collector.countRejection(reason);
    const lane = this.lane(laneName);
    lane.batchesRejected++;
    this.link.send({ rejected: {
      lane: laneName, seq: String(b.seq ?? '0'), stream: b.stream ?? 0, reason, detail, retryable,
      expected_seq: String(expected ?? 0),
    } });
    if (slot) this.settle(lane, slot);
  }

  /**
   * Settles a slot. The ack and the credit it unlocks are not sent at once: every batch a
   * group settles for this session is answered by one cumulative ack and one credit grant
   * per lane (flushAcks, called once the settling code has run), not two messages a batch.
   */
  private settle(lane: SessionLane, slot: Slot): void {
    const ack = lane.settle(slot);
    if (!ack) return;
    lane.unsentAckPoints += ack.points;
    if (!this.ackQueued) { this.ackQueued = true; this.env.ackLater(this); }
  }

  /** Sends the cumulative ack and the credit of each lane that settled batches since the last flush. */
  flushAcks(): void {
    this.ackQueued = false;
    for (const lane of [this.live, this.backfill]) {
      const points = lane.unsentAckPoints;
      if (points === 0) continue;
      lane.unsentAckPoints = 0;
      this.link.send({ ack: { lane: lane.name, acked_through: String(lane.ackedThrough), points: String(points) } });
      if (lane.name === 'BACKFILL' && !this.env.mayGrantBackfill()) {
        lane.withheld += points;
        this.env.pace(this);
        continue;
      }
      this.grant(lane, lane.name === 'LIVE' ? this.liveGrant() : points);
    }
  }

  /**
   * Live credit to return: what tops the session's outstanding points (credit held plus
   * batches not yet acknowledged) up to its share of the latency budget, never below two of
   * its largest batches (so it always has one in flight and one on the way) nor above
   * SERVICE_INGEST_LIVE_CREDIT. Ack latency is points in flight over throughput (Little's
   * law): a fixed credit per session makes it grow with every session that connects.
   */
  private liveGrant(): number {
    const lane = this.live;
    const target = Math.max(1, Math.min(this.env.tuning.liveCredit, Math.max(Math.floor(this.env.liveShare()), 2 * lane.largestBatch)));
    return target - (lane.credit + lane.unsettledPoints);
  }

  /** Returns credit to the collector and resumes reading once no lane is overdrawn. */
  grant(lane: SessionLane, points: number): void {
    if (points <= 0 || this.closed) return;
    lane.give(points);
    this.link.send({ credit: { lane: lane.name, points: String(points), available: String(Math.max(0, lane.credit)) } });
    if (this.paused && this.live.credit >= 0 && this.backfill.credit >= 0) { this.paused = false; this.link.resume(); }
  }

  /** Releases withheld backfill credit (the pacing timer calls this when live has drained). */
  releaseBackfill(): boolean {
    const n = this.backfill.withheld;
    if (n === 0) return false;
    this.backfill.withheld = 0;
    this.grant(this.backfill, n);
    return true;
  }
}
