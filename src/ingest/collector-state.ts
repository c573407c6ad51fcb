// What the ingest worker remembers about each collector: the highest session epoch it
// granted, the live sessions, and the counters the Collector diagnostic reports. The
// durable part (epoch, counters, stream names, watermarks) is persisted in the model by
// the main thread, so a restart neither forgets an epoch (a stale collector stays fenced)
// nor resets the counters.
import type { CollectorDetail, CollectorDiagnostic, CollectorRow, LaneDetail } from './thread-messages.js';
import type { IngestSession } from './ingest-session.js';
import type { SessionLane } from './session-lane.js';

export class CollectorState {
  epoch: bigint;
  readonly sessions = new Set<IngestSession>();
  /** The latest session granted, kept after it ends so the diagnostics still describe it. */
  latest: IngestSession | null = null;
  streamNames: string[];
  lastBatchArrivalNs: bigint;
  lastCollectorReceiptNs: bigint;
  /** Declared watermark per stream name. */
  readonly watermarks = new Map<string, bigint>();
  fencedStreamsTotal: bigint;
  lastFencedNs: bigint | null;
  backfillRateLimitedMs = 0;
  readonly rejections = new Map<string, number>();
  /** Opens of this collector run one at a time (epoch checks and fencing stay ordered). */
  opening: Promise<unknown> = Promise.resolve();
  dirty = false;

  constructor(readonly collectorId: string, row: CollectorRow | null) {
    this.epoch = row?.session_epoch ?? -1n;
    this.streamNames = row?.streams ?? [];
    this.lastBatchArrivalNs = row?.last_batch_arrival_ns ?? 0n;
    this.lastCollectorReceiptNs = row?.last_collector_receipt_ns ?? 0n;
    this.fencedStreamsTotal = row?.fenced_streams_total ?? 0n;
    this.lastFencedNs = row?.last_fenced_ns ?? null;
    if (row && row.watermark_ns > 0n) this.watermarkFloor = row.watermark_ns;
  }

  /** Watermark remembered from the model before any stream of this process declared one. */
  private watermarkFloor = 0n;

  /** The session currently holding the collector: the live one with the highest epoch. */
  current(): IngestSession | null {
    let best: IngestSession | null = null;
    for (const s of this.sessions) if (!s.fencedBy && (!best || s.epoch > best.epoch)) best = s;
    return best;
  }

  countRejection(reason: string): void {
    this.rejections.set(reason, (this.rejections.get(reason) ?? 0) + 1);
  }

  /** Completeness of the collector as a whole: the lowest watermark over its streams that declared one (0 when none did). */
  watermarkNs(): bigint {
    let min: bigint | null = null;
    for (const name of this.streamNames) {
      const w = this.watermarks.get(name);
      if (w !== undefined && (min === null || w < min)) min = w;
    }
    return min ?? this.watermarkFloor;
  }

  diagnostic(): CollectorDiagnostic {
    const live = this.current();
    const s = live ?? this.latest;
    return {
      collector_id: this.collectorId,
      session_epoch: this.epoch < 0n ? 0n : this.epoch,
      streams: [...this.streamNames],
      last_batch_arrival_ns: this.lastBatchArrivalNs,
      last_collector_receipt_ns: this.lastCollectorReceiptNs,
      watermark_ns: this.watermarkNs(),
      acked_through: s ? BigInt(s.live.ackedThrough + s.backfill.ackedThrough) : 0n,
      credit_live: live ? BigInt(Math.max(0, live.live.credit)) : 0n,
      credit_backfill: live ? BigInt(Math.max(0, live.backfill.credit)) : 0n,
      fenced_streams_total: this.fencedStreamsTotal,
      last_fenced_ns: this.lastFencedNs,
    };
  }

  detail(): CollectorDetail {
    const live = this.current();
    const s = live ?? this.latest;
    const lane = (l: SessionLane): LaneDetail => ({
      expected_seq: BigInt(l.expectedSeq),
      acked_through: BigInt(l.ackedThrough),
      credit: BigInt(l.credit),
      batches_accepted: BigInt(l.batchesAccepted),
      batches_rejected: BigInt(l.batchesRejected),
      points_written: BigInt(l.pointsWritten),
      points_refused: BigInt(l.pointsRefused),
      over_credit_total: BigInt(l.overCreditTotal),
      credit_wait_ms: BigInt(Math.round(l.creditWaitMs())),
    });
    return {
      ...this.diagnostic(),
      connected: live !== null,
      session_id: s?.id ?? null,
      identity: s?.identity ?? null,
      agent: s?.agent ?? '',
      opened_ns: s?.openedNs ?? null,
      live: s ? lane(s.live) : null,
      backfill: s ? lane(s.backfill) : null,
      backfill_rate_limited_ms: BigInt(Math.round(this.backfillRateLimitedMs)),
      rejections: Object.fromEntries([...this.rejections].map(([k, v]) => [k, BigInt(v)])),
      stream_detail: s ? s.streams.map((st) => ({
        name: st.name,
        series_id: st.seriesId,
        value_type: st.type,
        accepted: st.accepted,
        refusal: st.refusal,
        points_written: BigInt(st.pointsWritten),
        points_refused: BigInt(st.pointsRefused),
        batches_rejected: BigInt(st.batchesRejected),
        last_ts_ns: st.lastTsNs,
        watermark_ns: this.watermarks.get(st.name) ?? null,
      })) : [],
    };
  }

  row(): CollectorRow {
    return {
      collector_id: this.collectorId,
      session_epoch: this.epoch < 0n ? 0n : this.epoch,
      streams: [...this.streamNames],
      last_batch_arrival_ns: this.lastBatchArrivalNs,
      last_collector_receipt_ns: this.lastCollectorReceiptNs,
      watermark_ns: this.watermarkNs(),
      fenced_streams_total: this.fencedStreamsTotal,
      last_fenced_ns: this.lastFencedNs,
    };
  }
}
