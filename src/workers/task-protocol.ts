// What crosses the thread boundary between the HTTP thread and the read workers. Task
// arguments are small plain objects (times as decimal strings: bigint survives structured
// clone, but strings keep the protocol obvious in logs). A result is the finished
// response body in a SharedArrayBuffer slab the worker reuses (body-slabs.ts), so nothing
// large is cloned: posting a SharedArrayBuffer shares its memory. The receiver must
// release the slab once the bytes are no longer read (ReadBody.release), or the worker
// cannot reuse it. Errors travel as WireError and are rebuilt into ServiceError by code.
import type { WireError } from '../errors.js';
import type { Continuity, RollupInterval } from '../storage/series-store.js';
import type { SlabHandOff } from './body-slabs.js';
import type { ResolvedTaskBase } from './resolved-points.js';

export type BodyFormat = 'json' | 'msgpack';
/** Raw page layouts: a map per point (JSON and msgpack), or typed columns (msgpack only). */
export type RawLayout = 'rows' | 'columns';

export interface RawTask {
  series: string;
  startNs: string;
  endNs: string;
  limit: number;
  /** Exclusive lower bound from the cursor (the last time already returned), or null. */
  afterNs: string | null;
  format: BodyFormat;
  /** 'columns' only with format 'msgpack'; absent means rows. */
  layout?: RawLayout;
}

export interface RenderTask {
  series: string;
  startNs: string;
  endNs: string;
  width: number;
  mode: 'significant-points' | 'minmax-band';
  stat: 'count' | 'min' | 'max' | 'first' | 'last' | 'twa' | 'percent_good' | null;
  continuity: Continuity;
  format: BodyFormat;
}

export interface RollupsTask {
  series: string;
  startNs: string;
  endNs: string;
  interval: RollupInterval;
  continuity: Continuity;
  limit: number;
}

export interface GapsTask {
  series: string;
  startNs: string;
  endNs: string;
}

export interface AuditTask {
  series: string;
  startNs: string;
  endNs: string;
  limit: number;
}

export interface DecodeTask {
  series: string;
  /** Repeat the full decode this many times (benchmark of decode throughput per worker). */
  repeat: number;
}

/** POST /v1/read/snapshot: the latest point of each attribute's segment at the instant. */
export interface ReadSnapshotTask extends ResolvedTaskBase {
  /** With resolve.as_of_ns: the latest point at or before this instant (decimal ns); null: the latest stored. */
  upToNs?: string | null;
  /** The service's latest-point table (storage/latest-table.ts): the task fills the slots it finds unknown. */
  latest?: SharedArrayBuffer | null;
}

/** POST /v1/read/raw: the segments' exact points; includePrior adds each attribute's last point before the window. */
export interface ReadRawTask extends ResolvedTaskBase {
  includePrior: boolean;
  /** 'columns': each segment's points as typed columns (the series raw route's layout); absent means rows. */
  layout?: RawLayout;
}

/** POST /v1/read/at and /v1/read/sampled: values at instants (given, or a regular grid), interpolated by continuity. */
export interface ReadAtTask extends ResolvedTaskBase {
  /** Ascending, unique (decimal ns); null with a grid. */
  instants: string[] | null;
  grid: { startNs: string; intervalNs: string; count: number } | null;
}

/** POST /v1/read/episode-overlay, layout columns: a run of episodes on their u grids (tasks/read-overlay-task.ts); the items only. */
export interface ReadOverlayTask extends ResolvedTaskBase {
  /** Instants per episode. */
  points: number;
  episodes: Array<{
    episode: { id: string; name: string; template: string; start_ns: string; end_ns: string | null };
    /** The grid's last instant (decimal ns): the end, or now for an open episode. */
    gridEndNs: string;
    /** Indices into `attributes`: the attributes of the episode's assets. */
    attributes: number[];
  }>;
}

/** POST /v1/read/as-of: the segments' points as they were known at knownAtNs. */
export interface ReadAsOfTask extends ResolvedTaskBase {
  knownAtNs: string;
}

/** POST /v1/read/raw-audit: the edit history of the segments' points (maxPoints bounds the entries). */
export type ReadAuditTask = ResolvedTaskBase;

/** The statistics POST /v1/read/summary answers per interval. */
export const SUMMARY_STATS = ['count', 'min', 'max', 'first', 'last', 'mean', 'twa', 'total', 'range', 'stddev', 'percent_good', 'duration_good_ns', 'duration_bad_ns', 'duration_uncertain_ns'] as const;
export type SummaryStat = (typeof SUMMARY_STATS)[number];

/** POST /v1/read/summary: per-interval statistics of each attribute's segments. */
export interface ReadSummaryTask extends ResolvedTaskBase {
  /** Interval boundaries (decimal ns, ascending): interval k is [b[k], b[k+1]). */
  boundaries: string[];
  stats: SummaryStat[];
  /** Per attribute: the stored unit to the canonical rate (per second) of its quantity kind, and the unit the total is in; null: no total. */
  totals: Array<{ factor: number; offset: number; unitId: string } | null>;
  /** Write the items only (no enclosing array): the HTTP thread joins the tasks' bodies. */
  fragment: boolean;
}

/** POST /v1/read/render: the series render of each attribute's segments, stitched. */
export interface ReadRenderTask extends ResolvedTaskBase {
  width: number;
  mode: 'significant-points' | 'minmax-band';
  stat: 'count' | 'min' | 'max' | 'first' | 'last' | 'twa' | 'percent_good' | null;
  fragment: boolean;
}

export interface TaskArgs {
  raw: RawTask;
  render: RenderTask;
  rollups: RollupsTask;
  gaps: GapsTask;
  audit: AuditTask;
  decode: DecodeTask;
  readSnapshot: ReadSnapshotTask;
  readRaw: ReadRawTask;
  readAt: ReadAtTask;
  readOverlay: ReadOverlayTask;
  readAsOf: ReadAsOfTask;
  readAudit: ReadAuditTask;
  readSummary: ReadSummaryTask;
  readRender: ReadRenderTask;
}
export type TaskName = keyof TaskArgs;

export type TaskOutcome =
  | ({ ok: true; offset: number; length: number; contentType: string; points: number } & SlabHandOff)
  | { ok: false; error: WireError };

export const JSON_TYPE = 'application/json';
export const MSGPACK_TYPE = 'application/x-msgpack';
