// Per-series metadata the engine needs to validate writes and decode reads. The model
// (Postgres) is the source of truth for names, bindings and units; this record holds only
// what the storage layer itself must know, so a read worker never needs the model.
import { Packr } from 'msgpackr';
import type { ValueType } from './encoding/chunk-types.js';
import type { LifecyclePolicy } from './lifecycle-policy.js';
import type { ReadView, SeriesEnv } from './series-env.js';
import { seriesKey } from './keys.js';

/** bigint round-trips as int64; typed arrays keep their type (STACK-NOTES §9). */
export const recordPackr = new Packr({ useRecords: false, int64AsType: 'bigint', moreTypes: true });

export interface EnumSetRef {
  /** Enum set id in the model. */
  id: string;
  /** Ordinals a point may carry. */
  ordinals: number[];
}

export interface TimeRangeNs {
  startNs: bigint;
  endNs: bigint;
}

export interface DeclaredGap extends TimeRangeNs {
  reason: string;
}

export interface LossyRange extends TimeRangeNs {
  tag: string;
}

export interface SeriesMeta {
  id: string;
  type: ValueType;
  enumSet: EnumSetRef | null;
  writableClass: string;
  /** Time through which the series is complete (collector watermark or committed backfill end). */
  finalisedNs: bigint | null;
  declaredGaps: DeclaredGap[];
  lifecycle: { policy: LifecyclePolicy; version: bigint } | null;
  /** Ranges made lossy by swinging-door compression at seal time. */
  lossyRanges: LossyRange[];
  createdNs: bigint;
}

export function encodeMeta(meta: SeriesMeta): Buffer {
  return recordPackr.pack(meta);
}

export function decodeMeta(bytes: Uint8Array): SeriesMeta {
  return recordPackr.unpack(bytes) as SeriesMeta;
}

export function readMeta(view: ReadView, id: string): SeriesMeta | undefined {
  const bytes = view.env.meta.get(seriesKey(id), { transaction: view.txn });
  return bytes === undefined ? undefined : decodeMeta(bytes);
}

/** Writes inside the caller's write transaction (putSync joins the open txn). */
export function putMetaInTxn(env: SeriesEnv, meta: SeriesMeta): void {
  env.meta.putSync(seriesKey(meta.id), encodeMeta(meta));
}
