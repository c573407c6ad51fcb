// Applying validated batches inside the one write transaction of a group commit.
// Per series: points later than the last sealed point go to the head (the fast path is a
// plain append); earlier points merge into the sealed chunk covering them, which is
// re-encoded. Identical points are no-ops; a different value or quality at an existing
// time supersedes it and the old one goes to the audit. Rollups follow in the same txn.
import { decodeColumns, floorChunk, nextChunk } from './chunk-access.js';
import { chunkKey, auditKey, seriesKey, uuidOf } from './keys.js';
import { readHead, putHeadInTxn, type Head } from './head-record.js';
import {
  MAX_CHUNK_SPAN_NS, appendTimed, mergeTimed, sliceTimed, splitTimedBySpan, timeAt, toTimed, upperBound,
  type PointValue, type Supersession, type TimedPoints,
} from './point-runs.js';
import { appendRollups, repairRollups } from './rollups.js';
import { sealFullPrefixes, sealRun, type SealBudget } from './seal.js';
import { readMeta, putMetaInTxn, recordPackr, type SeriesMeta } from './series-meta.js';
import type { ReadView, SeriesEnv } from './series-env.js';
import { checkBatchShape, normaliseBatch, refuseAll, type PointBatch, type Refusal } from './write-batch.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
  private readonly dirtyMeta = new Set<string>();
  constructor(readonly env: SeriesEnv, readonly budget: SealBudget, private auditClock: { lastNs: bigint }) {}

  get view(): ReadView { return { env: this.env, txn: undefined }; }

  meta(id: string): SeriesMeta | null {
    const key = id.toLowerCase();
    if (!this.metas.has(key)) this.metas.set(key, readMeta(this.view, key) ?? null);
    return this.metas.get(key)!;
  }

  metaByKey(series: Buffer): SeriesMeta | null {
    return this.meta(uuidOf(series));
  }

  setMeta(meta: SeriesMeta): void {
    this.metas.set(meta.id, meta);
    this.dirtyMeta.add(meta.id);
  }

  touchMeta(id: string): void { this.dirtyMeta.add(id); }

  /** superseded_at_ns: wall-clock ns, strictly increasing within this store so audit keys never collide. */
  nextAuditNs(): bigint {
    const now = BigInt(Date.now()) * 1_000_000n;
    this.auditClock.lastNs = now > this.auditClock.lastNs ? now : this.auditClock.lastNs + 1n;
    return this.auditClock.lastNs;
  }

  audit(series: Buffer, s: Supersession, who: Writer): void {
    const value: { v: PointValue; q: number; who: string } = { v: s.oldValue, q: s.oldQuality, who: who.principal };
    this.env.audit.putSync(auditKey(series, s.ts, this.nextAuditNs()), recordPackr.pack(value));
  }

  finish(): void {
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

export function applyBatch(ctx: TxnContext, b: PointBatch, who: Writer, at: string): BatchResult {
  checkBatchShape(b, at);
  const n = b.times.length;
  const meta = typeof b.series === 'string' && UUID_RE.test(b.series) ? ctx.meta(b.series) : null;
  if (!meta) return { series: String(b.series), accepted: 0, unchanged: 0, superseded: 0, refused: n, refusals: refuseAll(n, 'unknown-series') };
  const series = seriesKey(b.series, `${at}.series`);
  const norm = normaliseBatch(b, meta);
  const ch: Changes = { accepted: 0, unchanged: norm.unchanged, superseded: norm.superseded.length, lo: null, hi: null };
  for (const s of norm.superseded) ctx.audit(series, s, who);
  const pts = norm.points;
  if (pts.count > 0) {
    const head = readHead(ctx.view, series);
    const prevLast = head.cols && head.cols.count > 0 ? timeAt(head.cols, head.cols.count - 1) : head.sealedEnd;
    const split = head.sealedEnd === null ? 0 : upperBound(pts, head.sealedEnd);
    const pureAppend = split === 0 && (prevLast === null || pts.ts[0] > prevLast);
    if (split > 0) mergeLate(ctx, series, meta, sliceTimed(pts, 0, split), who, ch);
    if (split < pts.count) mergeIntoHead(ctx, series, meta, head, split === 0 ? pts : sliceTimed(pts, split, pts.count), who, ch);
    if (pureAppend) appendRollups(ctx.view, series, meta.type, prevLast, pts);
    else if (ch.lo !== null && ch.hi !== null) repairRollups(ctx.view, series, meta.type, ch.lo, ch.hi);
  }
  return { series: meta.id, accepted: ch.accepted, unchanged: ch.unchanged, superseded: ch.superseded, refused: norm.refusals.length, refusals: norm.refusals };
}

function mergeIntoHead(ctx: TxnContext, series: Buffer, meta: SeriesMeta, head: Head, fresh: TimedPoints, who: Writer, ch: Changes): void {
  const cols = head.cols;
  let pieces;
  const lastFresh = fresh.ts[fresh.count - 1];
  if (!cols || cols.count === 0) {
    pieces = splitTimedBySpan(fresh);
    ch.accepted += fresh.count; widen(ch, fresh.ts[0], lastFresh);
  } else if (fresh.ts[0] > timeAt(cols, cols.count - 1) && lastFresh - cols.tsBase < BigInt(MAX_CHUNK_SPAN_NS)) {
    pieces = [appendTimed(cols, fresh)];
    ch.accepted += fresh.count; widen(ch, fresh.ts[0], lastFresh);
  } else {
    const m = mergeTimed(toTimed(cols), fresh);
    for (const s of m.superseded) ctx.audit(series, s, who);
    ch.accepted += m.changed; ch.unchanged += m.unchanged; ch.superseded += m.superseded.length;
    widen(ch, m.changedLo, m.changedHi);
    pieces = splitTimedBySpan(m.merged);
  }
  let sealedEnd = head.sealedEnd;
  // every piece but the last is closed by the span limit; the last keeps its tail open
  for (let p = 0; p < pieces.length - 1; p++) {
    const piece = pieces[p];
    if (sealRun(ctx.env, series, meta, piece, ctx.budget, true).dropped > 0) ctx.touchMeta(meta.id);
    sealedEnd = timeAt(piece, piece.count - 1);
  }
  const split = sealFullPrefixes(ctx.env, series, meta, pieces[pieces.length - 1], ctx.budget);
  if (split.dropped > 0) ctx.touchMeta(meta.id);
  if (split.sealedEnd !== null) sealedEnd = split.sealedEnd;
  putHeadInTxn(ctx.env, series, { sealedEnd, lastWriteMs: Date.now(), cols: split.rest }, split.restBytes);
}

/** Merges points at or before the last sealed point into the chunks that cover them. */
function mergeLate(ctx: TxnContext, series: Buffer, meta: SeriesMeta, late: TimedPoints, who: Writer, ch: Changes): void {
  const view = ctx.view;
  let idx = 0;
  while (idx < late.count) {
    const t0 = late.ts[idx];
    const target = floorChunk(view, series, t0) ?? nextChunk(view, series, t0, true);
    if (!target) throw new Error(`BUG: series has sealedEnd but no sealed chunk at or after ${t0}`);
    const after = nextChunk(view, series, target.start);
    let end = late.count;
    if (after) { end = idx; while (end < late.count && late.ts[end] < after.start) end++; }
    const existing = toTimed(decodeColumns(series, target.start, target.bytes));
    const m = mergeTimed(existing, sliceTimed(late, idx, end));
    for (const s of m.superseded) ctx.audit(series, s, who);
    ch.accepted += m.changed; ch.unchanged += m.unchanged; ch.superseded += m.superseded.length;
    widen(ch, m.changedLo, m.changedHi);
    if (m.changed > 0) {
      ctx.env.chunks.removeSync(chunkKey(series, target.start));
      for (const piece of splitTimedBySpan(m.merged)) sealRun(ctx.env, series, meta, piece, ctx.budget, false);
    }
    idx = end;
  }
}

/** Seals a whole head now (idle heads, shutdown, benchmarks). Inside the write txn. */
export function sealHeadNow(ctx: TxnContext, series: Buffer, meta: SeriesMeta): number {
  const head = readHead(ctx.view, series);
  if (!head.cols || head.cols.count === 0) return 0;
  if (sealRun(ctx.env, series, meta, head.cols, ctx.budget, true).dropped > 0) ctx.touchMeta(meta.id);
  const n = head.cols.count;
  putHeadInTxn(ctx.env, series, { sealedEnd: timeAt(head.cols, n - 1), lastWriteMs: head.lastWriteMs, cols: null });
  return n;
}
