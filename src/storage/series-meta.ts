// Per-series metadata the engine needs to validate writes and decode reads. The model
// (Postgres) is the source of truth for names, bindings and units; this record holds only
// what the storage layer itself must know, so a read worker never needs the model.
import { Packr } from 'msgpackr';
import type { ValueType } from './encoding/chunk-types.js';
import type { LifecyclePolicy } from './lifecycle-policy.js';
import type { ReadView, SeriesEnv } from './series-env.js';
import { seriesKey, uuidOf } from './keys.js';
import { TYPE_CODES, typeCode } from './encoding/chunk-header.js';

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

/**
 * Stored form (2026-11-21): byte 0x01, then one msgpack array [uuid as 16 raw bytes, type
 * code (chunk-header TYPE_CODES), enumSet, writableClass, finalisedNs, declaredGaps,
 * lifecycle, lossyRanges, createdNs]: ~45 bytes for a plain series instead of ~160 for the
 * msgpack map with field names and the UUID as text, which is still read (it starts with a
 * msgpack map byte, 0x80-0x8f or 0xde/0xdf, never 0x01).
 */
const META_V2 = 0x01;

export function encodeMeta(meta: SeriesMeta): Buffer {
  const body = recordPackr.pack([
    seriesKey(meta.id), typeCode(meta.type), meta.enumSet, meta.writableClass, meta.finalisedNs,
    meta.declaredGaps, meta.lifecycle, meta.lossyRanges, meta.createdNs,
  ]);
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = META_V2;
  body.copy(out, 1);
  return out;
}

export function decodeMeta(bytes: Uint8Array): SeriesMeta {
  if (bytes[0] !== META_V2) return recordPackr.unpack(bytes) as SeriesMeta;
  const f = recordPackr.unpack(bytes.subarray(1)) as unknown[];
  const type = TYPE_CODES[f[1] as number];
  if (!Array.isArray(f) || f.length !== 9 || !(f[0] instanceof Uint8Array) || type === undefined) throw new Error('series meta record is damaged');
  return {
    id: uuidOf(f[0]), type, enumSet: f[2] as EnumSetRef | null, writableClass: f[3] as string,
    finalisedNs: f[4] as bigint | null, declaredGaps: f[5] as DeclaredGap[],
    lifecycle: f[6] as SeriesMeta['lifecycle'], lossyRanges: f[7] as LossyRange[], createdNs: f[8] as bigint,
  };
}

export function readMeta(view: ReadView, id: string): SeriesMeta | undefined {
  const bytes = view.env.meta.get(seriesKey(id), { transaction: view.txn });
  return bytes === undefined ? undefined : decodeMeta(bytes);
}

/** Writes inside the caller's write transaction (putSync joins the open txn). */
export function putMetaInTxn(env: SeriesEnv, meta: SeriesMeta): void {
  env.meta.putSync(seriesKey(meta.id), encodeMeta(meta));
}
