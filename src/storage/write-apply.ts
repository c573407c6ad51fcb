// Applying validated batches inside the one write transaction of a group commit.
// Per series: points later than the last sealed point go to the writer's open head (the
// fast path appends them and stores them as one new head segment); earlier points merge
// into the sealed chunk covering them, which is re-encoded, or, in a gap between sealed
// chunks (history before the first chunk, say), are sealed as new chunks without a merge.
// Identical points are no-ops; a different value or quality at an existing time supersedes
// it and the old one goes to the audit. Rollups follow in the same txn.
import { nowNs } from '../clock.js';
import { decodeColumns, floorChunk, headerOf, isChunkCorrupt, nextChunk, type StoredChunk } from './chunk-access.js';
import { auditKey, seriesKey, uuidOf } from './keys.js';
import type { HeadCache } from './head-cache.js';
import { CALIBRATE_MIN_POINTS, type OpenHead } from './open-head.js';
import {
  MAX_CHUNK_SPAN_NS, appendTimed, mergeTimed, sliceTimed, splitTimedBySpan, timeAt, toTimed, upperBound,
  type PointValue, type Supersession, type TimedPoints,
} from './point-runs.js';
import { appendRollups, repairRollups } from './rollups.js';
import { headIsFull, pointsWhenFull } from './chunk-fit.js';
import { PARTIAL_CHUNK_SHARE, installChunk, installSealed, partialTail, takeBackPartialTail, sealFromHead, sealRun, sealTally, type SealBudget } from './seal.js';
import type { FinishedSeal, SealOffload } from './seal-offload.js';
import { decodeMeta, putMetaInTxn, recordPackr, type SeriesMeta } from './series-meta.js';
import type { ReadView, SeriesEnv } from './series-env.js';
import { checkBatchShape, normaliseBatch, refuseAll, type PointBatch, type Refusal } from './write-batch.js';
import { UUID_RE } from '../uuid.js';
import { settleHeadRecord } from './head-record.js';
import { copyOfFast, fastGet, sameBytes } from './fast-get.js';
import { compactPacks, removeChunk, storeTails, type TailToPack } from './tail-packs.js';

const MAX_SPAN_BIG = BigInt(MAX_CHUNK_SPAN_NS);

/**
 * Series keys by id as written (either case), built once: seriesKey's regex test, hex
 * decode and copies cost ~3 us a series on every write of it. The keys are never changed
 * by their users. Past KEYS_MAX ids the map starts over (a miss only builds the key again).
 */
const keysById = new Map<string, Buffer>();
const KEYS_MAX = 262_144;

/** The key of a series id, or null when the id is not a UUID. */
function keyOfSeries(id: string): Buffer | null {
  let k = keysById.get(id);
  if (k === undefined) {
    if (!UUID_RE.test(id)) return null;
    if (keysById.size >= KEYS_MAX) keysById.clear();
    k = seriesKey(id);
    keysById.set(id, k);
  }
  return k;
}

/** Sealing allowance of a transaction before any append (points): about one chunk. */
const SEAL_ALLOWANCE_START = 4096;
/** Points of allowance each appended point adds: above 1, so deferred seals catch up. */
const SEAL_RATE = 1.5;

export interface BatchResult {
  series: string;
  /** Points stored: new, or replacing a different value at their time. */
  accepted: number;
  /** Identical to what was stored (same time, value bits and quality): no-ops. */
  unchanged: number;
  /** Stored values replaced by this batch (each is in the audit). */
  superseded: number;
  refused: number;
  refusals: Refusal[];
}

/** Who is writing, recorded with every superseded value. */
export interface Writer {
  principal: string;
}

/** State shared by all batches of one transaction. */
export class TxnContext {
  private readonly metas = new Map<string, SeriesMeta | null>();
  /**
   * Points this transaction may still seal off the heads it appends to. It starts at one
   * chunk's worth and grows by SEAL_RATE per appended point, so a group's seal work follows
   * its inflow; see sealAppended.
   */
  sealAllowance = SEAL_ALLOWANCE_START;
  private readonly dirtyMeta = new Set<string>();
  /**
   * decoded: metas decoded in earlier transactions with the stored bytes they came from,
   * reused only while the stored bytes are the same (the other writer may change them).
   * A meta about to change is dropped from it first; the store clears it when a group aborts.
   */
  constructor(
    readonly env: SeriesEnv, readonly budget: SealBudget, private readonly heads: HeadCache,
    private readonly decoded: Map<string, { raw: Buffer; meta: SeriesMeta }>,
    /** The seal thread, when this writer has one (the ingest worker's store). */
    readonly offload: SealOffload | null = null,
  ) {}

  /** The writer's open head of a series (cached across transactions, validated by generation). */
  head(series: Buffer, meta: SeriesMeta): OpenHead {
    return this.heads.get(this.view, series, meta.id, meta.type);
  }

  /** Whether `head` is still the cached head of the series (a cheap check before head()). */
  holdsHead(meta: SeriesMeta, head: OpenHead): boolean {
    return this.heads.holds(meta.id, head);
  }

  /**
   * Stores what changed in the head, stamped with a new generation of this writer. An
   * emptied head leaves the cache: its record is deleted (putHeadRecord), so the cache
   * could never validate it again, and idle seals left 1,000 such heads holding ~216 MB
   * of columns and most of the cache's point bound.
   */
  persistHead(series: Buffer, meta: SeriesMeta, head: OpenHead, lastWriteMs: number = Date.now()): void {
    head.persist(this.env, series, this.heads.nextGeneration(), lastWriteMs);
    if (head.count === 0) this.heads.forget(meta.id, head);
  }

  get view(): ReadView { return { env: this.env, txn: undefined }; }

  /**
   * A series' meta in this transaction. `series`: its key when the caller has it. A meta
   * decoded in an earlier transaction is checked against the stored bytes through
   * getBinaryFast (a view into lmdb-js's reused buffer, compared before the next get): a
   * write of many series x 1 point (calculation outputs) paid ~8 us a series for the copy,
   * the key and the compare before (bench/calc-write.ts).
   */
  meta(id: string, series?: Buffer): SeriesMeta | null {
    const key = id.toLowerCase();
    let m = this.metas.get(key);
    if (m === undefined) {
      const fast = fastGet(this.env.meta, series ?? keyOfSeries(key) ?? seriesKey(key));
      const known = this.decoded.get(key);
      if (fast === undefined) m = null;
      else if (known && sameBytes(fast, known.raw)) m = known.meta;
      else { const raw = copyOfFast(fast); m = decodeMeta(raw); this.decoded.set(key, { raw, meta: m }); }
      this.metas.set(key, m);
    }
    return m;
  }

  metaByKey(series: Buffer): SeriesMeta | null {
    return this.meta(uuidOf(series));
  }

  setMeta(meta: SeriesMeta): void {
    this.decoded.delete(meta.id);
    this.metas.set(meta.id, meta);
    this.dirtyMeta.add(meta.id);
  }

  touchMeta(id: string): void { this.decoded.delete(id); this.dirtyMeta.add(id); }

  /** superseded_at_ns: the service clock, strictly increasing within the thread, so audit keys never collide. */
  nextAuditNs(): bigint {
    return nowNs();
  }

  audit(series: Buffer, s: Supersession, who: Writer): void {
    const value: { v: PointValue; q: number; who: string } = { v: s.oldValue, q: s.oldQuality, who: who.principal };
    this.env.audit.putSync(auditKey(series, s.ts, this.nextAuditNs()), recordPackr.pack(value));
  }

  /** Last chunks of heads sealed whole (sealHeadNow), kept back to be packed together. */
  readonly keptTails: TailToPack[] = [];

  /**
   * Stores the kept-back tails (tail-packs.ts) and drops the head records they made
   * redundant. Whoever seals with sealHeadNow calls it before anything else reads those
   * series: until then their last chunk is not in the table.
   */
  storeTails(): void {
    if (this.keptTails.length === 0) return;
    storeTails(this.env, this.keptTails);
    for (const t of this.keptTails) settleHeadRecord(this.env, t.key.subarray(0, 16));
    this.keptTails.length = 0;
  }

  finish(): void {
    this.storeTails();
    compactPacks(this.env);
    for (const id of this.dirtyMeta) putMetaInTxn(this.env, this.metas.get(id)!);
  }
}

interface Changes {
  accepted: number;
  unchanged: number;
  superseded: number;
  lo: bigint | null;
  hi: bigint | null;
}

function widen(c: Changes, lo: bigint | null, hi: bigint | null): void {
  if (lo !== null && (c.lo === null || lo < c.lo)) c.lo = lo;
  if (hi !== null && (c.hi === null || hi > c.hi)) c.hi = hi;
}

/**
 * Thrown out of a group's transaction when a batch met a damaged chunk of its series: the
 * group is applied again from the start, which undoes whatever that batch had written, and
 * this time the batch is refused (applyBatches).
 */
export class GroupRerun extends Error {}

/**
 * The batches of one write call. A batch that needs a damaged chunk (late points merging
 * into it, a rollup repair reading it, a head found from it) is refused whole with
 * 'chunk-corrupt' instead of failing the call: the other series of the call, typically a
 * collector's whole stream, are still stored. `damaged` outlives the reruns of the group.
 */
export function applyBatches(ctx: TxnContext, batches: readonly PointBatch[], who: Writer, damaged: Set<number>): BatchResult[] {
  return batches.map((b, i) => {
    if (damaged.has(i)) return refusedAsDamaged(b);
    try {
      return applyBatch(ctx, b, who, `batches[${i}]`);
    } catch (e) {
      if (!isChunkCorrupt(e)) throw e;
      damaged.add(i);
      throw new GroupRerun(`batches[${i}]: ${e.message}`);
    }
  });
}

function refusedAsDamaged(b: PointBatch): BatchResult {
  const n = b.times.length;
  return { series: String(b.series).toLowerCase(), accepted: 0, unchanged: 0, superseded: 0, refused: n, refusals: refuseAll(n, 'chunk-corrupt') };
}

function applyBatch(ctx: TxnContext, b: PointBatch, who: Writer, at: string): BatchResult {
  checkBatchShape(b, at);
  const n = b.times.length;
  const series = typeof b.series === 'string' ? keyOfSeries(b.series) : null;
  const meta = series === null ? null : ctx.meta(b.series, series);
  if (!meta || series === null) return { series: String(b.series), accepted: 0, unchanged: 0, superseded: 0, refused: n, refusals: refuseAll(n, 'unknown-series') };
  const norm = normaliseBatch(b, meta);
  const pts = norm.points;
  // The head first, before this batch writes anything: a head found from a damaged last
  // chunk refuses the batch here, without rerunning the group (a live series would otherwise
  // cost a rerun of every group it is in).
  let head: OpenHead | null = null;
  if (pts.count > 0) {
    try {
      head = ctx.head(series, meta);
    } catch (e) {
      if (isChunkCorrupt(e)) return refusedAsDamaged(b);
      throw e;
    }
  }
  const ch: Changes = { accepted: 0, unchanged: norm.unchanged, superseded: norm.superseded.length, lo: null, hi: null };
  for (const s of norm.superseded) ctx.audit(series, s, who);
  if (head !== null) {
    const prevLast = head.lastTs() ?? head.sealedEnd;
    const split = head.sealedEnd === null ? 0 : upperBound(pts, head.sealedEnd);
    const pureAppend = split === 0 && (prevLast === null || pts.ts[0] > prevLast);
    if (split > 0) mergeLate(ctx, series, meta, sliceTimed(pts, 0, split), who, ch);
    if (split < pts.count) mergeIntoHead(ctx, series, meta, head, pts, split, who, ch);
    // the head is stored by now, so the reads of a rollup repair see this batch
    // the in-memory head spares the repair's range scans reloading it from LMDB
    if (pureAppend) appendRollups(ctx.view, series, meta.type, prevLast, pts, head.cols);
    else if (ch.lo !== null && ch.hi !== null) repairRollups(ctx.view, series, meta.type, ch.lo, ch.hi, head.cols);
  }
  return { series: meta.id, accepted: ch.accepted, unchanged: ch.unchanged, superseded: ch.superseded, refused: norm.refusals.length, refusals: norm.refusals };
}

/**
 * Points [from, count) of pts (all later than sealedEnd) into the open head. The common
 * case appends after the head's last point: no BigInt per point, nothing re-encoded. Any
 * other case (points inside the head, or a span past MAX_CHUNK_SPAN_NS) merges in memory
 * and rewrites the head's segments.
 */
function mergeIntoHead(ctx: TxnContext, series: Buffer, meta: SeriesMeta, head: OpenHead, pts: TimedPoints, from: number, who: Writer, ch: Changes): void {
  const first = pts.ts[from], last = pts.ts[pts.count - 1];
  const prevLast = head.lastTs();
  const spanStart = prevLast === null ? first : head.firstTs();
  if ((prevLast === null || first > prevLast) && last - spanStart < MAX_SPAN_BIG) {
    head.append(pts, from, pts.count, pointsWhenFull(head.bytesPerPoint, ctx.budget));
    ch.accepted += pts.count - from; widen(ch, first, last);
  } else if (prevLast !== null && last < head.firstTs() && !meta.lifecycle?.policy.swinging_door) {
    // History between the sealed chunks and the open head (a backfill before live data): no
    // stored point can be at these times, so they are sealed as chunks of their own and the
    // head is left as it is (before, every such batch re-encoded and rewrote the whole head).
    // Not with swinging-door: these points would then skip the compression head points get.
    fillGap(ctx, series, meta, pts, from, floorChunk(ctx.view, series, first), ch);
    head.sealedEnd = last;
  } else {
    const fresh = from === 0 ? pts : sliceTimed(pts, from, pts.count);
    let merged = fresh;
    if (head.count > 0) {
      const m = mergeTimed(toTimed(head.cols), fresh);
      for (const s of m.superseded) ctx.audit(series, s, who);
      ch.accepted += m.changed; ch.unchanged += m.unchanged; ch.superseded += m.superseded.length;
      widen(ch, m.changedLo, m.changedHi);
      merged = m.merged;
    } else {
      ch.accepted += fresh.count; widen(ch, first, last);
    }
    const pieces = splitTimedBySpan(merged);
    // every piece but the last is closed by the span limit; the last stays open
    for (let p = 0; p < pieces.length - 1; p++) {
      const piece = pieces[p];
      if (sealRun(ctx.env, series, meta, piece, ctx.budget, true).dropped > 0) ctx.touchMeta(meta.id);
      head.sealedEnd = timeAt(piece, piece.count - 1);
    }
    head.replace(pieces[pieces.length - 1]);
  }
  sealAppended(ctx, series, meta, head, pts.count - from);
  ctx.persistHead(series, meta, head);
}

/**
 * Seals the full chunks of a head that was just appended to, within the transaction's
 * allowance. Why a budget: collectors that start together fill their streams' heads in
 * lockstep, and a group whose every batch completes a chunk encoded ~4x the points of the
 * groups around it, which set the ack p99. Over the allowance a full head stays open (its
 * points are durable in head segments) and seals when it is next appended to; a head at
 * the chunk point cap seals regardless, which bounds how far one can run ahead.
 */
function sealAppended(ctx: TxnContext, series: Buffer, meta: SeriesMeta, head: OpenHead, appended: number): void {
  ctx.sealAllowance += SEAL_RATE * appended;
  // swinging-door series seal through sealRun's compression, in this thread; so does a
  // full head after a partial chunk, which sealFromHead takes back and re-encodes with it
  if (ctx.offload !== null && !meta.lifecycle?.policy.swinging_door && !fullAfterPartial(ctx, series, head) && ctx.offload.request(series, head, ctx.budget)) return;
  if (ctx.sealAllowance <= 0 && head.count < ctx.budget.chunkPoints) return;
  const r = sealFromHead(ctx.env, series, meta, head, ctx.budget, false);
  ctx.sealAllowance -= r.points;
  if (r.dropped > 0) ctx.touchMeta(meta.id);
}

/** A head the seal thread would take now, continuing a partial chunk (an LMDB lookup once per full head). */
function fullAfterPartial(ctx: TxnContext, series: Buffer, head: OpenHead): boolean {
  if (head.sealPending) return false;
  if (Number.isNaN(head.bytesPerPoint) && head.count >= CALIBRATE_MIN_POINTS) calibrateFromTail(ctx, series, head);
  return headIsFull(head.count, head.bytesPerPoint, ctx.budget) && partialTail(ctx.env, series, head, ctx.budget) !== null;
}

/**
 * A head not measured yet (new to the cache, as after every idle or quiet seal) whose
 * series ends in a partial chunk takes that chunk's bytes per point. Without it the head
 * went to the seal thread to be measured, the thread sealed full chunks after the partial
 * one, and the short chunk stayed for good between them (found with the quiet seal: a load
 * resumed after a pause left one per series).
 */
function calibrateFromTail(ctx: TxnContext, series: Buffer, head: OpenHead): void {
  const tail = partialTail(ctx.env, series, head, ctx.budget);
  if (tail !== null) head.calibrate(tail.bytes.byteLength, headerOf(series, tail.start, tail.bytes).count, true);
}

/**
 * Points at or before the last sealed point. Those landing inside a sealed chunk (at or
 * before its last point) merge into it and it is re-encoded. Those in a gap, where no sealed
 * point lies (before the first chunk, or between one chunk's last point and the next chunk),
 * cannot meet a stored point: they are sealed as chunks of their own without reading any,
 * O(points) like an append, and only a partly filled chunk just before them is re-encoded with
 * them (so history written in time order, batch after batch, still fills its chunks).
 */
function mergeLate(ctx: TxnContext, series: Buffer, meta: SeriesMeta, late: TimedPoints, who: Writer, ch: Changes): void {
  const view = ctx.view;
  let idx = 0;
  while (idx < late.count) {
    const t0 = late.ts[idx];
    const floor = floorChunk(view, series, t0);
    if (floor === null || t0 > headerOf(series, floor.start, floor.bytes).lastTs) {
      idx = fillGap(ctx, series, meta, late, idx, floor, ch);
      continue;
    }
    const after = nextChunk(view, series, floor.start);
    const end = after ? upperBound(late, after.start - 1n, idx) : late.count;
    const existing = toTimed(decodeColumns(series, floor.start, floor.bytes));
    const m = mergeTimed(existing, sliceTimed(late, idx, end));
    for (const s of m.superseded) ctx.audit(series, s, who);
    ch.accepted += m.changed; ch.unchanged += m.unchanged; ch.superseded += m.superseded.length;
    widen(ch, m.changedLo, m.changedHi);
    if (m.changed > 0) {
      removeChunk(ctx.env, floor.key);
      for (const piece of splitTimedBySpan(m.merged)) sealRun(ctx.env, series, meta, piece, ctx.budget, false);
    }
    idx = end;
  }
}

/**
 * Seals points [from, end) that lie after `floor`'s last point (or before the first chunk)
 * and before the next chunk (or, with none, before the open head): every one is new.
 * Returns end.
 */
function fillGap(ctx: TxnContext, series: Buffer, meta: SeriesMeta, late: TimedPoints, from: number, floor: StoredChunk | null, ch: Changes): number {
  const next = nextChunk(ctx.view, series, late.ts[from]);
  const end = next ? upperBound(late, next.start - 1n, from) : late.count;
  const last = late.ts[end - 1];
  ch.accepted += end - from; widen(ch, late.ts[from], last);
  const gap = sliceTimed(late, from, end);
  if (floor !== null && last - floor.start < MAX_SPAN_BIG) {
    const h = headerOf(series, floor.start, floor.bytes);
    if (h.count < ctx.budget.chunkPoints && floor.bytes.byteLength < PARTIAL_CHUNK_SHARE * ctx.budget.chunkBytes) {
      // the chunk's points all precede the gap: appending keeps time order
      removeChunk(ctx.env, floor.key);
      sealRun(ctx.env, series, meta, appendTimed(decodeColumns(series, floor.start, floor.bytes), gap), ctx.budget, false);
      return end;
    }
  }
  for (const piece of splitTimedBySpan(gap)) sealRun(ctx.env, series, meta, piece, ctx.budget, false);
  return end;
}

/**
 * Stores the chunks the seal thread encoded, for heads whose front is still the one it was
 * given (same cached head object, same frontVersion); others are dropped and their heads
 * sealed again later. Inside the write txn, before the transaction's batches.
 */
export function installSeals(ctx: TxnContext, finished: readonly FinishedSeal[]): void {
  for (const f of finished) {
    sealTally.encodes += f.reply.encodes;
    const meta = ctx.metaByKey(f.series);
    if (meta === null || meta.lifecycle?.policy.swinging_door) continue;
    // an evicted head is not loaded back only to find it is not the one copied
    const head = ctx.holdsHead(meta, f.head) ? ctx.head(f.series, meta) : null;
    if (head !== f.head || head.frontVersion !== f.version) { if (ctx.offload !== null) ctx.offload.staleReplies++; continue; }
    if (f.reply.lastPoints > 0) head.calibrate(f.reply.lastBytes, f.reply.lastPoints, f.reply.lastFromChunk);
    if (f.reply.chunks.length === 0) continue;
    for (const c of f.reply.chunks) installSealed(ctx.env, f.series, head, c.bytes, c.n, ctx.budget, f.all ? ctx.keptTails : null);
    if (ctx.offload !== null) ctx.offload.installedChunks += f.reply.chunks.length;
    ctx.persistHead(f.series, meta, head, head.lastWriteMs);
  }
  ctx.storeTails();
}

/**
 * A quiet seal's way of sealing a head: its partial last chunk taken back, the whole head
 * goes to the seal thread, and installSeals stores the chunks in a later transaction (the
 * points stay durable in the head's segments meanwhile). Inside the write txn. Returns the
 * points sent, or -1 when the thread cannot take it: seal it with sealHeadNow.
 */
export function sendHeadToSeal(ctx: TxnContext, series: Buffer, meta: SeriesMeta): number {
  if (ctx.offload === null || ctx.offload.room === 0 || meta.lifecycle?.policy.swinging_door) return -1;
  const head = ctx.head(series, meta);
  if (head.count === 0) return 0;
  if (head.sealPending || head.sealHere) return -1;
  // the chunk's points are in the head alone now: persisted before the transaction commits
  if (takeBackPartialTail(ctx.env, series, meta, head, ctx.budget)) ctx.persistHead(series, meta, head, head.lastWriteMs);
  const n = head.count;
  return ctx.offload.requestAll(series, head, ctx.budget) ? n : -1;
}

/**
 * Seals a whole head now (idle heads, shutdown, benchmarks). Inside the write txn. Its last
 * chunk is kept back for a pack: call ctx.storeTails() before reading the series again.
 */
export function sealHeadNow(ctx: TxnContext, series: Buffer, meta: SeriesMeta): number {
  const head = ctx.head(series, meta);
  if (head.count === 0) return 0;
  const lastWriteMs = head.lastWriteMs;
  const r = sealFromHead(ctx.env, series, meta, head, ctx.budget, true, ctx.keptTails);
  if (r.dropped > 0) ctx.touchMeta(meta.id);
  ctx.persistHead(series, meta, head, lastWriteMs);
  return r.points;
}
