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
 * Stored forms, newest first (each starts with its marker byte; the oldest with a msgpack map byte):
 *
 * v3 (2026-11-21, marker 0x02): one msgpack array [uuid as 16 raw bytes, type code
 * (chunk-header TYPE_CODES), createdNs, writableClass (0 for 'collector', else the string),
 * enumSet, finalisedNs, declaredGaps, lifecycle, lossyRanges], cut after its last field that
 * is not the default (null, or [] for the two lists): ~31 bytes for a plain collector
 * series, ~57 B of leaf page with key and node instead of ~71.
 * v2 (marker 0x01): the array [uuid, type code, enumSet, writableClass, finalisedNs,
 * declaredGaps, lifecycle, lossyRanges, createdNs], ~45 bytes; still read.
 * v1: the msgpack map with field names and the UUID as text, ~160 bytes; still read (a map
 * byte, 0x80-0x8f or 0xde/0xdf, never 0x01 or 0x02).
 */
const META_V2 = 0x01;
const META_V3 = 0x02;
/** The writable class nearly every series has, stored as 0. */
const COLLECTOR = 'collector';
/** Fields of v3 that are always present. */
const V3_FIXED = 4;

export function encodeMeta(meta: SeriesMeta): Buffer {
  const optional: unknown[] = [meta.enumSet, meta.finalisedNs, meta.declaredGaps, meta.lifecycle, meta.lossyRanges];
  let keep = optional.length;
  while (keep > 0 && (optional[keep - 1] === null || (Array.isArray(optional[keep - 1]) && (optional[keep - 1] as unknown[]).length === 0))) keep--;
  const body = recordPackr.pack([
    seriesKey(meta.id), typeCode(meta.type), meta.createdNs, meta.writableClass === COLLECTOR ? 0 : meta.writableClass,
    ...optional.slice(0, keep),
  ]);
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = META_V3;
  body.copy(out, 1);
  return out;
}

function damaged(): never {
  throw new Error('series meta record is damaged');
}

function decodeV3(f: unknown): SeriesMeta {
  if (!Array.isArray(f) || f.length < V3_FIXED || f.length > V3_FIXED + 5 || !(f[0] instanceof Uint8Array) || f[0].length !== 16) damaged();
  const type = TYPE_CODES[f[1] as number];
  const wc = f[3] === 0 ? COLLECTOR : f[3];
  if (type === undefined || typeof f[2] !== 'bigint' || typeof wc !== 'string') damaged();
  const at = (i: number, dflt: unknown) => (V3_FIXED + i < f.length ? f[V3_FIXED + i] : dflt);
  return {
    id: uuidOf(f[0]), type, enumSet: at(0, null) as EnumSetRef | null, writableClass: wc,
    finalisedNs: at(1, null) as bigint | null, declaredGaps: at(2, []) as DeclaredGap[],
    lifecycle: at(3, null) as SeriesMeta['lifecycle'], lossyRanges: at(4, []) as LossyRange[], createdNs: f[2],
  };
}

export function decodeMeta(bytes: Uint8Array): SeriesMeta {
  if (bytes[0] === META_V3) return decodeV3(recordPackr.unpack(bytes.subarray(1)));
  if (bytes[0] !== META_V2) return recordPackr.unpack(bytes) as SeriesMeta;
  const f = recordPackr.unpack(bytes.subarray(1)) as unknown[];
  const type = TYPE_CODES[f[1] as number];
  if (!Array.isArray(f) || f.length !== 9 || !(f[0] instanceof Uint8Array) || type === undefined) damaged();
  return {
    id: uuidOf(f[0]), type, enumSet: f[2] as EnumSetRef | null, writableClass: f[3] as string,
    finalisedNs: f[4] as bigint | null, declaredGaps: f[5] as DeclaredGap[],
    lifecycle: f[6] as SeriesMeta['lifecycle'], lossyRanges: f[7] as LossyRange[], createdNs: f[8] as bigint,
  };
}

/**
 * The stored record, decoded. The object is shared by every reader of this thread while the
 * stored bytes stay the same, so callers must not change it (the writer keeps its own copies,
 * write-apply.ts): decoding it (msgpack, the UUID back to text) was a tenth of a worker's
 * whole-series raw read (profiled), where comparing ~31 bytes is next to nothing.
 */
export function readMeta(view: ReadView, id: string): SeriesMeta | undefined {
  const bytes = view.env.meta.get(seriesKey(id), { transaction: view.txn });
  if (bytes === undefined) return undefined;
  const known = decodedByReads.get(id);
  if (known !== undefined && known.bytes.equals(bytes)) return known.meta;
  const meta = decodeMeta(bytes);
  if (decodedByReads.size >= DECODED_KEPT) decodedByReads.clear();
  decodedByReads.set(id, { bytes, meta });
  return meta;
}
const decodedByReads = new Map<string, { bytes: Buffer; meta: SeriesMeta }>();
/** Records kept decoded per thread: every series of a large plant, a few MB at most. */
const DECODED_KEPT = 100_000;

/** Writes inside the caller's write transaction (putSync joins the open txn). */
export function putMetaInTxn(env: SeriesEnv, meta: SeriesMeta): void {
  env.meta.putSync(seriesKey(meta.id), encodeMeta(meta));
}
