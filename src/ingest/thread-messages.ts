// What the ingest worker and the main thread say to each other (PortRpc operations).
// Plain data only: everything here crosses a structured clone.
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { AuthMode } from '../auth/access-types.js';
import type { IngestTuning } from '../config/ingest-config.js';

export type { IngestTuning };

export interface IngestWorkerData {
  entry: string;
  host: string;
  port: number;
  seriesDir: string;
  dataDir: string;
  authMode: AuthMode;
  tls: { certPem: string; keyPem: string; clientCaPem: string | null } | null;
  tuning: IngestTuning;
  /** Collectors the model remembers (epochs and counters survive restarts). */
  known: CollectorRow[];
  /** The main thread's latest-point table (storage/latest-table.ts): the worker's writes update it. */
  latest: SharedArrayBuffer | null;
}


export interface StreamRequest {
  name: string;
  type: ValueType;
  seriesId: string | null;
  /** ENUM streams: name or UUID of a registry enum set (the staging series is created with it). */
  enumSet: string | null;
}

export interface StreamOutcome {
  accepted: boolean;
  seriesId: string | null;
  refusal: string | null;
  /**
   * True when this open created the series (empty, of the declared type): the worker then
   * knows its state without reading it (no last point, no watermark), which is most of a
   * 100,000-stream first open's worker time.
   */
  created?: boolean;
}

// worker -> main ------------------------------------------------------------------

export interface AuthenticateArg {
  collectorId: string;
  /** The `authorization` metadata value, if any. */
  bearer: string | null;
  /** Subject alternative names of a verified client certificate ("URI:...", "DNS:..."). */
  sans: string[] | null;
  peer: string;
}

export type AuthenticateResult =
  | { ok: true; identity: string }
  | { ok: false; status: 'unauthenticated' | 'permission-denied'; message: string };

export interface OpenSessionArg {
  collectorId: string;
  epoch: string;
  identity: string;
  streams: StreamRequest[];
}

export type OpenSessionResult =
  | { ok: true; streams: StreamOutcome[] }
  | { ok: false; reason: 'stale-epoch'; currentEpoch: string };

// main -> worker ------------------------------------------------------------------

/** The spec's Collector diagnostic, int64 fields as bigint (the JSON writer keeps them exact). */
export interface CollectorDiagnostic {
  collector_id: string;
  session_epoch: bigint;
  streams: string[];
  last_batch_arrival_ns: bigint;
  last_collector_receipt_ns: bigint;
  watermark_ns: bigint;
  acked_through: bigint;
  credit_live: bigint;
  credit_backfill: bigint;
  fenced_streams_total: bigint;
  last_fenced_ns: bigint | null;
}

export interface LaneDetail {
  expected_seq: bigint;
  acked_through: bigint;
  credit: bigint;
  batches_accepted: bigint;
  batches_rejected: bigint;
  points_written: bigint;
  points_refused: bigint;
  over_credit_total: bigint;
  credit_wait_ms: bigint;
}

export interface StreamDetail {
  name: string;
  series_id: string | null;
  value_type: ValueType;
  accepted: boolean;
  refusal: string | null;
  points_written: bigint;
  points_refused: bigint;
  batches_rejected: bigint;
  last_ts_ns: bigint | null;
  watermark_ns: bigint | null;
}

export interface CollectorDetail extends CollectorDiagnostic {
  connected: boolean;
  session_id: string | null;
  identity: string | null;
  agent: string;
  opened_ns: bigint | null;
  live: LaneDetail | null;
  backfill: LaneDetail | null;
  backfill_rate_limited_ms: bigint;
  rejections: Record<string, bigint>;
  stream_detail: StreamDetail[];
}

/** A row of the model's ingest_collector table. */
export interface CollectorRow {
  collector_id: string;
  session_epoch: bigint;
  streams: string[];
  last_batch_arrival_ns: bigint;
  last_collector_receipt_ns: bigint;
  watermark_ns: bigint;
  fenced_streams_total: bigint;
  last_fenced_ns: bigint | null;
}

// worker -> main, the commit feed (commit-feed.ts) ------------------------------

/** The durable points of one watched series in one group commit, in the order sent. */
export interface CommittedColumns {
  series: string;
  times: BigInt64Array;
  /** As the write path takes them: Float64Array, BigInt64Array, Uint8Array 0/1, Int32Array ordinals, or strings. */
  values: Float64Array | BigInt64Array | Uint8Array | Int32Array | unknown[];
  quality: Uint32Array;
}

/** One group commit's points of watched series (op `commits`). */
export interface CommittedGroup {
  /** Increments per group published by this worker. */
  seq: number;
  /** When the group became durable, absolute ms (performance.timeOrigin + now): latency measurements. */
  durableMs: number;
  columns: CommittedColumns[];
}

/** A CommittedGroup as the worker posts it: every column in one moved buffer (commit-feed.ts packs and unpacks it). */
export interface PackedCommits {
  seq: number;
  durableMs: number;
  series: string[];
  /** Per column: its point count, value kind and piece (an index into `bytes`). */
  shape: Int32Array;
  /** The columns' arrays, whole columns per piece (commit-feed.ts). */
  bytes: ArrayBuffer[];
  /** Values of the columns of kind 'other' (strings), in column order. */
  other: unknown[][];
}
