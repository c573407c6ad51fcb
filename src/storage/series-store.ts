// The series storage engine: the public API of src/storage.
//
//   const store = SeriesStore.open(`${dataDir}/series`);
//   await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
//   const r = await store.write([{ series: id, times, values, quality }], { principal });
//     // resolves once durable on disk; r.batches[i] = {accepted, unchanged, superseded, refused, refusals}
//   store.read((view) => readRaw(view, id, { startNs, endNs, limit }));   // any read below, on a snapshot
//
// Writes: many series per call, concurrent calls within `groupWindowMs` share ONE LMDB
// transaction, and every caller resolves after that transaction is flushed to disk
// (lmdb-js `flushed`, not merely committed). Per-point refusals never abort a write; a
// malformed batch (columns of different lengths) rejects the whole call before queueing;
// a batch that needs a damaged chunk is refused whole ('chunk-corrupt'), the rest stored.
//
// Reads are pure functions of a ReadView (read-raw.ts, rollups.ts, render.ts), so the
// worker pool runs them on its own `openSeriesEnv(dir, { readOnly: true })` handle:
//   readRaw, readRawAudit, readSnapshot, listChunks, readFinalised, readGaps,
//   readRollups, renderSeries, readLifecyclePolicy.
// One SeriesStore per process is the single writer (STACK-NOTES §3: parallel writers gain nothing).
import { nowNs } from '../clock.js';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceError, invalid } from '../errors.js';
import type { ValueType } from './encoding/chunk-types.js';
import { seriesKey } from './keys.js';
import { enforceLifecycleInTxn, type LifecycleReport } from './lifecycle.js';
import { parseLifecyclePolicy, type LifecyclePolicy } from './lifecycle-policy.js';
import { sealBudgetFor, type SealBudget } from './seal.js';
import { openSeriesEnv, withReadView, type ReadView, type SeriesEnv } from './series-env.js';
import { readMeta, type DeclaredGap, type EnumSetRef, type SeriesMeta } from './series-meta.js';
import { GroupRerun, TxnContext, applyBatches, installSeals, sealHeadNow, sendHeadToSeal, type BatchResult, type Writer } from './write-apply.js';
import { SealOffload } from './seal-offload.js';
import { checkBatchShape, type PointBatch } from './write-batch.js';
import { decodeHeadRecord, readHeadRecord } from './head-record.js';
import { HeadCache, DEFAULT_HEAD_CACHE_POINTS } from './head-cache.js';
import { measureDisk, type DiskUsage } from './disk-usage.js';
import type { LatestTable } from './latest-table.js';
import { fullGc } from '../threads/full-gc.js';

export type { PointBatch, RefusalReason, Refusal } from './write-batch.js';
/** A durable write's batches and their results, index by index (SeriesStore.onWritten). */
export { LatestTable, NONE, POINT, UNKNOWN, type LatestRead } from './latest-table.js';
export type WriteListener = (batches: readonly PointBatch[], results: readonly BatchResult[]) => void;
export type { BatchResult, Writer } from './write-apply.js';
export type { SeriesMeta, DeclaredGap, LossyRange, EnumSetRef } from './series-meta.js';
export type { LifecyclePolicy } from './lifecycle-policy.js';
export { parseLifecyclePolicy, LIFECYCLE_SCHEMA } from './lifecycle-policy.js';
export { openSeriesEnv, withReadView, type ReadView, type SeriesEnv } from './series-env.js';
export { readRaw, readRawAudit, readSnapshot, readSnapshotAt, listChunks, readFinalised, readGaps, checkRange, requireMeta, MAX_RAW_LIMIT, type RawPage, type AuditEntry, type ChunkInfo, type GapReport, type SnapshotPoint } from './read-raw.js';
export { readRollups, ROLLUP_INTERVALS, type RollupColumns, type RollupInterval, type Continuity } from './rollups.js';
export type { LifecycleReport } from './lifecycle.js';
export type { DiskUsage } from './disk-usage.js';
export { renderSeries, renderPieces, RENDER_STATS, type RenderPiece, type RenderQuery, type RenderMode, type RenderStat, type SignificantPoints, type MinMaxBand } from './render.js';
export { columnOf } from './render-columns.js';
export { summarizePieces, uniformBoundaries, checkBoundaries, MAX_SUMMARY_INTERVALS, type SummaryPiece, type SummaryQuery, type SummaryColumns } from './summary.js';
export { readMeta } from './series-meta.js';
export { allChunks } from './chunk-access.js';
export { readOpenColumns } from './head-record.js';
export { readOpenTail, type OpenTail } from './head-tail.js';
export { INT64_MAX, INT64_MIN, seriesKey } from './keys.js';
export { allocColumns } from './point-runs.js';
export { listRange, listWholeRange, lowerBoundCols, scanChunks, scanRange, visitHead, pointBefore, pointAtOrAfter, type RunVisitor, type EdgePoint, type DecodedChunks } from './range-scan.js';
export { copyValue, valueAt, numericAt, timeAt, type PointValue } from './point-runs.js';
export { MAX_CHUNK_POINTS, decodeChunk } from './encoding/chunk.js';
export { ChunkWindow } from './encoding/chunk-window.js';
export { cachedHeadFigures } from './head-cache.js';
export { valueBytes } from './encoding/point-columns.js';

export interface WriteResult {
  batches: BatchResult[];
  accepted: number;
  refused: number;
}

export interface CreateSeriesSpec {
  id: string;
  type: ValueType;
  enumSet?: EnumSetRef;
  writableClass: string;
}

export interface SeriesStoreOptions {
  /** How long the first write of a group waits for others to share its commit (ms). */
  groupWindowMs?: number;
  /** Chunk budget; tests shrink chunkPoints to exercise chunk boundaries. */
  seal?: Partial<SealBudget>;
  /** Most open-head points the writer keeps in memory across commits (default 4,000,000). */
  headCachePoints?: number;
  /** Timing of every write transaction (absolute ms), for tracing where write latency goes. */
  onTransaction?: (t: TransactionTiming) => void;
  /**
   * Encode full heads' chunks on a seal thread instead of inside the write transaction
   * (seal-offload.ts). For a writer that appends at a high rate: the ingest worker.
   */
  sealThread?: boolean;
  /**
   * Seals the open heads this writer holds once no write has come for this long (ms; 0 or
   * absent: never). A bulk load then ends in sealed chunks within seconds, not at the next
   * idle-head job (heads idle 10 minutes), and its head segments' pages are free for reuse.
   */
  quietSealMs?: number;
  /** A quiet seal runs only after this many points were written since the last one (QUIET_SEAL_AFTER_POINTS). */
  quietSealAfterPoints?: number;
  /**
   * Asked when a quiet seal is due; false puts it off by another quiet period. The ingest
   * worker says false while it refuses batches for a full disk: a seal writes chunks, and a
   * write that meets ENOSPC stops the worker (found by reliability/disk-full).
   */
  quietSealAllowed?: () => boolean;
  /** Told after each quiet seal that sealed points, with how many (the ingest worker then collects the emptied heads' columns). */
  onQuietSeal?: (points: number) => void;
  /**
   * Runs a full collection of this thread after a transaction once this many bytes of head
   * columns were let go since the last one (0: never; default COLLECT_AFTER_BYTES with a
   * seal thread, else 0). See COLLECT_AFTER_BYTES.
   */
  collectAfterBytes?: number;
  /**
   * The latest point of each series in shared memory (latest-table.ts): updated by every
   * write before it resolves, forgotten by lifecycle enforcement. The main thread creates
   * it; the ingest worker's engine attaches to the same buffer.
   */
  latest?: LatestTable | null;
}

/**
 * A quiet seal follows a bulk of writes only: a site whose collectors pause between small
 * sends would otherwise seal, and at the next seal take back and re-encode, a short chunk
 * per tag and pause (seal.ts, partial tails). Its heads are left to the idle-head job.
 */
export const QUIET_SEAL_AFTER_POINTS = 100_000;

/**
 * Head columns let go (outgrown, sealed empty, evicted) before the writer's thread collects.
 * They are typed arrays of external memory, mostly promoted to V8's old generation, and V8
 * frees them only at a full collection, which it starts for external memory only ~64 MB past
 * the last one: during a bulk load the ingest thread held 60-80 MB of dead columns on top of
 * its ~140 MB of open heads, and a quiet seal kept every sealed head's columns until it ended
 * (issue 33, resident memory). 32 MB: ~15-20 collections a 9.42 M-point load, ~20 ms of CPU each
 * on the ingest thread's ~35 MB heap.
 */
export const COLLECT_AFTER_BYTES = 32 * 2 ** 20;

/** Points one quiet-seal transaction seals at most, so a write arriving meanwhile waits ~0.1 s, not the whole seal. */
const QUIET_SEAL_SLICE_POINTS = 500_000;

/** When a write transaction's phases ended: absolute ms (performance.timeOrigin + now). */
export interface TransactionTiming {
  /** Requests in the transaction. */
  requests: number;
  /** flush() started (the group window ended). */
  start: number;
  /** lmdb-js ran the callback (its write thread had the transaction open). */
  applyStart: number;
  applyEnd: number;
  /** The commit returned. */
  committed: number;
  /** lmdb-js `flushed` resolved: durable. */
  durable: number;
}

const VALUE_TYPES: readonly ValueType[] = ['float64', 'int64', 'boolean', 'string', 'enum'];

/** Throws a 400 naming the field (prefixed) when a creation spec is malformed. */
function checkSeriesSpec(spec: CreateSeriesSpec, at: string): void {
  seriesKey(spec?.id, `${at}id`);
  if (!VALUE_TYPES.includes(spec.type)) throw invalid(`${at}type`, `must be one of ${VALUE_TYPES.join(', ')}`);
  if (typeof spec.writableClass !== 'string' || spec.writableClass.length === 0) throw invalid(`${at}writableClass`, 'must be a non-empty string');
  if (spec.type === 'enum') {
    const e = spec.enumSet;
    if (!e || typeof e.id !== 'string' || !Array.isArray(e.ordinals) || !e.ordinals.every((o) => Number.isInteger(o) && o >= -0x80000000 && o <= 0x7fffffff)) {
      throw invalid(`${at}enumSet`, 'an enum series needs {id, ordinals: int32[]}');
    }
  } else if (spec.enumSet !== undefined) throw invalid(`${at}enumSet`, 'only enum series have an enum set');
}

interface Pending {
  run: (ctx: TxnContext) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class SeriesStore {
  private readonly writeListeners = new Set<WriteListener>();
  /** See SeriesStoreOptions.latest. */
  readonly latest: LatestTable | null;
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private running = false;
  /** Groups committed and waiting for their flush to disk. */
  private syncing = 0;
  /** Groups applied again because a write batch met a damaged chunk (each one batch refused). */
  groupReruns = 0;
  private readonly budget: SealBudget;
  private readonly groupWindowMs: number;
  private readonly heads: HeadCache;
  private readonly decodedMetas = new Map<string, { raw: Buffer; meta: SeriesMeta }>();
  private readonly onTransaction: ((t: TransactionTiming) => void) | null;
  private readonly offload: SealOffload | null;
  private readonly quietSealMs: number;
  private readonly quietSealAfterPoints: number;
  private readonly quietSealAllowed: () => boolean;
  private readonly onQuietSeal: ((points: number) => void) | null;
  private readonly collectAfterBytes: number;
  /** Points write() was given since the last quiet seal began. */
  private pointsSinceQuietSeal = 0;
  /** Date.now() of the last write() call or settle, and the timer that seals once writes stop. */
  private lastWriteCallMs = 0;
  /** write() calls whose transaction has not settled, and write() calls ever (a seal in progress sees a new one). */
  private writesInFlight = 0;
  private writeCalls = 0;
  private quietTimer: NodeJS.Timeout | null = null;
  private closing = false;
  /** Full collections run for released head columns (COLLECT_AFTER_BYTES; diagnostics, tests). */
  collections = 0;
  /** Quiet seals run and the points they sealed (diagnostics, tests). */
  quietSeals = { runs: 0, points: 0 };

  private constructor(readonly env: SeriesEnv, options: SeriesStoreOptions) {
    this.onTransaction = options.onTransaction ?? null;
    // chunks back from the seal thread wait for a write transaction; start one if none is coming
    this.offload = options.sealThread ? new SealOffload(() => { if (this.queue.length === 0) this.enqueue(() => null).catch(() => {}); }) : null;
    this.budget = { ...sealBudgetFor(env.pageSize), ...options.seal };
    this.groupWindowMs = options.groupWindowMs ?? 2;
    this.heads = new HeadCache(options.headCachePoints ?? DEFAULT_HEAD_CACHE_POINTS);
    this.quietSealMs = options.quietSealMs ?? 0;
    this.quietSealAfterPoints = options.quietSealAfterPoints ?? QUIET_SEAL_AFTER_POINTS;
    this.quietSealAllowed = options.quietSealAllowed ?? (() => true);
    this.onQuietSeal = options.onQuietSeal ?? null;
    this.collectAfterBytes = options.collectAfterBytes ?? (options.sealThread ? COLLECT_AFTER_BYTES : 0);
    this.latest = options.latest ?? null;
  }

  static open(dir: string, options: SeriesStoreOptions = {}): SeriesStore {
    return new SeriesStore(openSeriesEnv(dir), options);
  }

  /** Runs a read algorithm on a fresh snapshot. */
  read<T>(fn: (view: ReadView) => T): T {
    return withReadView(this.env, fn);
  }

  meta(id: string): SeriesMeta | undefined {
    return this.read((v) => readMeta(v, id));
  }

  /** Creates a series; repeating an identical creation is a no-op, a different one is a conflict. */
  createSeries(spec: CreateSeriesSpec): Promise<SeriesMeta> {
    try { checkSeriesSpec(spec, ''); } catch (e) { return Promise.reject(e); }
    return this.enqueue((ctx) => this.createInTxn(ctx, spec));
  }

  /**
   * Creates many series in one transaction and one flush to disk (ingest declares streams
   * by the thousand). Each is as createSeries; any bad spec or conflict fails the whole call
   * and nothing of it is written.
   */
  createSeriesMany(specs: readonly CreateSeriesSpec[]): Promise<SeriesMeta[]> {
    try {
      if (!Array.isArray(specs)) throw invalid('specs', 'must be an array');
      specs.forEach((spec, i) => checkSeriesSpec(spec, `specs[${i}].`));
    } catch (e) {
      return Promise.reject(e);
    }
    if (specs.length === 0) return Promise.resolve([]);
    return this.enqueue((ctx) => specs.map((spec) => this.createInTxn(ctx, spec)));
  }

  private createInTxn(ctx: TxnContext, spec: CreateSeriesSpec): SeriesMeta {
    const existing = ctx.meta(spec.id);
    if (existing) {
      if (existing.type !== spec.type) throw new ServiceError('conflict', `series ${spec.id} exists with type ${existing.type}`);
      return structuredClone(existing); // the decoded meta is shared with later transactions
    }
    const meta: SeriesMeta = {
      id: spec.id.toLowerCase(), type: spec.type, enumSet: spec.enumSet ? { id: spec.enumSet.id, ordinals: [...spec.enumSet.ordinals] } : null,
      writableClass: spec.writableClass, finalisedNs: null, declaredGaps: [], lifecycle: null, lossyRanges: [],
      createdNs: nowNs(),
    };
    this.putMeta(ctx, meta);
    return meta;
  }

  /** Writes batches of many series in one durable group commit; see the file header. */
  write(batches: readonly PointBatch[], who: Writer): Promise<WriteResult> {
    try {
      if (!Array.isArray(batches)) throw invalid('batches', 'must be an array');
      if (!who || typeof who.principal !== 'string') throw invalid('who.principal', 'must be a string');
      batches.forEach((b, i) => checkBatchShape(b, `batches[${i}]`));
    } catch (e) {
      return Promise.reject(e);
    }
    const damaged = new Set<number>();
    this.noteWrite(batches);
    let done = this.enqueue((ctx) => {
      const results = applyBatches(ctx, batches, who, damaged);
      let accepted = 0, refused = 0;
      for (const r of results) { accepted += r.accepted; refused += r.refused; }
      return { batches: results, accepted, refused };
    });
    if (this.quietSealMs > 0) done = done.finally(() => this.noteWriteSettled());
    const latest = this.latest;
    if (latest !== null) {
      done = done.then((r) => {
        // a fault here must not fail a durable write; what the table holds is then unsure
        try { latest.noteWritten(batches, r.batches, (id) => this.meta(id)?.type); } catch { latest.forgetAll(); }
        return r;
      });
    }
    if (this.writeListeners.size === 0) return done;
    return done.then((r) => {
      for (const l of this.writeListeners) { try { l(batches, r.batches); } catch { /* a listener must not fail the write */ } }
      return r;
    });
  }

  /**
   * Tells `listener` of every durable write through this instance (calculation outputs,
   * backfill commits: the main thread's writes; the ingest worker's engine has its own
   * commit feed), after the flush and before the writer resolves. Returns the unsubscribe.
   */
  onWritten(listener: WriteListener): () => void {
    this.writeListeners.add(listener);
    return () => { this.writeListeners.delete(listener); };
  }

  /** Seals heads whose last write is older than olderThanMs (0: every head). Returns points sealed. */
  sealHeads(olderThanMs = 0): Promise<{ series: number; points: number }> {
    const cutoff = Date.now() - olderThanMs;
    return this.enqueue((ctx) => {
      const ids: Buffer[] = [];
      for (const { key, value } of ctx.env.heads.getRange({})) {
        const open = value[0] === 2 ? decodeHeadRecord(value).openPoints : value.length > 18 ? 1 : 0;
        if (open > 0 && value.readDoubleLE(10) <= cutoff) ids.push(Buffer.from(key));
      }
      let series = 0, points = 0;
      for (const key of ids) {
        const meta = ctx.metaByKey(key);
        if (!meta) continue;
        const n = sealHeadNow(ctx, key, meta);
        if (n > 0) { series++; points += n; }
      }
      ctx.storeTails();
      return { series, points };
    });
  }

  /** A write came: (re)starts the wait for quiet. */
  private noteWrite(batches: readonly PointBatch[]): void {
    if (this.quietSealMs <= 0) return;
    this.writesInFlight++;
    this.writeCalls++;
    this.lastWriteCallMs = Date.now();
    for (const b of batches) this.pointsSinceQuietSeal += b.times.length;
    if (this.quietTimer === null && !this.closing) this.armQuietTimer(this.quietSealMs);
  }

  /**
   * A write settled: quiet counts from here too. A write that took longer than the quiet
   * delay (a loaded machine) would otherwise let the seal look for open heads before its
   * points were there, and nothing would seal them until the idle-head job.
   */
  private noteWriteSettled(): void {
    this.writesInFlight--;
    this.lastWriteCallMs = Date.now();
  }

  private armQuietTimer(ms: number): void {
    this.quietTimer = setTimeout(() => { this.quietTimer = null; void this.onQuietTimer(); }, ms);
    this.quietTimer.unref();
  }

  private async onQuietTimer(): Promise<void> {
    if (this.closing) return;
    const waited = Date.now() - this.lastWriteCallMs;
    if (this.writesInFlight > 0) { this.armQuietTimer(this.quietSealMs); return; }
    if (waited < this.quietSealMs) { this.armQuietTimer(this.quietSealMs - waited); return; }
    if (this.pointsSinceQuietSeal < this.quietSealAfterPoints) return;
    if (!this.quietSealAllowed()) { this.armQuietTimer(this.quietSealMs); return; }
    try {
      await this.sealQuiet();
    } catch {
      // a failed seal leaves the heads open and durable in their segments: the idle-head
      // job or the next quiet period seals them
    }
  }

  /**
   * Seals every head this writer wrote last that has open points, in transactions of about
   * QUIET_SEAL_SLICE_POINTS, and stops as soon as a write arrives (the next quiet period
   * seals the rest). Returns points sealed.
   */
  async sealQuiet(): Promise<number> {
    const startedAt = this.writeCalls;
    this.pointsSinceQuietSeal = 0;
    let keys = this.read((view) => this.heads.ownHeadsWithOpen(view));
    let sealed = 0;
    while (keys.length > 0 && !this.closing && this.writeCalls === startedAt) {
      const slice = keys;
      const r = await this.enqueue((ctx) => {
        let points = 0, i = 0;
        // with a seal thread the heads are encoded there (a slice's copies in flight at once);
        // the first head of a slice goes anyway (sealed here when the thread has no room)
        for (; i < slice.length && points < QUIET_SEAL_SLICE_POINTS && (i === 0 || this.offload === null || this.offload.room > 0); i++) {
          const meta = ctx.metaByKey(slice[i]);
          if (meta === null) continue;
          const sent = sendHeadToSeal(ctx, slice[i], meta);
          points += sent >= 0 ? sent : sealHeadNow(ctx, slice[i], meta);
        }
        ctx.storeTails();
        return { points, next: i };
      });
      // the thread's chunks are stored by the transactions its replies start
      while (this.offload !== null && this.offload.pending > 0 && !this.closing) await new Promise((res) => setTimeout(res, 1));
      sealed += r.points;
      keys = slice.slice(r.next);
    }
    // stopped by a write with heads left open (a pause inside a load): the rest of that load
    // may be fewer points than a bulk, and the heads left here must still be sealed when it ends
    if (keys.length > 0) this.pointsSinceQuietSeal = Math.max(this.pointsSinceQuietSeal, this.quietSealAfterPoints);
    this.quietSeals.runs++;
    this.quietSeals.points += sealed;
    if (sealed > 0 && this.onQuietSeal !== null) this.onQuietSeal(sealed);
    return sealed;
  }

  /** Sets the finalised watermark; it only moves forward (a smaller value is ignored). */
  setFinalised(id: string, ns: bigint): Promise<bigint> {
    if (typeof ns !== 'bigint') return Promise.reject(invalid('finalised_ns', 'must be an int64'));
    return this.mutateMeta(id, (m) => {
      if (m.finalisedNs === null || ns > m.finalisedNs) m.finalisedNs = ns;
      return m.finalisedNs;
    });
  }

  declareGap(id: string, gap: DeclaredGap): Promise<void> {
    if (typeof gap?.startNs !== 'bigint' || typeof gap.endNs !== 'bigint' || gap.endNs <= gap.startNs) return Promise.reject(invalid('gap', 'needs startNs < endNs (int64)'));
    return this.mutateMeta(id, (m) => { m.declaredGaps.push({ startNs: gap.startNs, endNs: gap.endNs, reason: String(gap.reason ?? '') }); });
  }

  setWritableClass(id: string, writableClass: string): Promise<void> {
    if (typeof writableClass !== 'string' || writableClass.length === 0) return Promise.reject(invalid('writable_class', 'must be a non-empty string'));
    return this.mutateMeta(id, (m) => { m.writableClass = writableClass; });
  }

  /** Stores a new policy version (previous + 1). With expectedVersion, refuses with conflict when it moved. */
  setLifecyclePolicy(id: string, policy: unknown, expectedVersion?: bigint | null): Promise<{ policy: LifecyclePolicy; version: bigint }> {
    let parsed: LifecyclePolicy;
    try { parsed = parseLifecyclePolicy(policy); } catch (e) { return Promise.reject(e); }
    return this.mutateMeta(id, (m) => {
      const current = m.lifecycle?.version ?? null;
      if (expectedVersion !== undefined && expectedVersion !== current) throw new ServiceError('conflict', `lifecycle policy of ${id} is at version ${current}, not ${expectedVersion}`);
      m.lifecycle = { policy: parsed, version: (current ?? 0n) + 1n };
      return m.lifecycle;
    });
  }

  /** Runs lifecycle enforcement for every series with a policy; returns what it did. */
  enforceLifecycle(atNs: bigint = nowNs()): Promise<LifecycleReport> {
    const done = this.enqueue((ctx) => enforceLifecycleInTxn(ctx.view, atNs));
    const latest = this.latest;
    // it may have removed a series' latest point: every slot is read from storage again
    return latest === null ? done : done.then((r) => { latest.forgetAll(); return r; });
  }

  /** Points currently open in the head of a series (for tests and diagnostics). */
  headPoints(id: string): number {
    return this.read((v) => readHeadRecord(v, seriesKey(id))?.openPoints ?? 0);
  }

  /** Open heads cached by this writer, how many were loaded from storage so far, and their capacity in points. */
  headCacheStats(): { heads: number; loads: number; points: number } {
    return { heads: this.heads.size, loads: this.heads.loads, points: this.heads.points };
  }

  /** The seal thread's tallies (null without one): see seal-offload.ts. */
  sealThreadStats(): { pending: number; installedChunks: number; staleReplies: number; failures: number } | null {
    const o = this.offload;
    return o === null ? null : { pending: o.pending, installedChunks: o.installedChunks, staleReplies: o.staleReplies, failures: o.failures };
  }

  /** Resolves once no chunk is on the seal thread or waiting to be stored (tests, benchmarks). */
  async settleSeals(): Promise<void> {
    while (this.offload !== null && (this.offload.pending > 0 || this.running || this.queue.length > 0 || this.syncing > 0)) await new Promise((r) => setTimeout(r, 1));
  }

  /** The env file's size, and how much of it the trees use (the rest is LMDB free pages). */
  diskUsage(): Promise<DiskUsage> {
    return measureDisk(this.env);
  }

  /**
   * Maintenance: writes a compacted copy of the env (live pages only, no free pages) as
   * `<dir>/data.mdb` (dir is created; it must not hold an env already). LMDB never shrinks
   * its file; swapping the copy in while the service is stopped returns the high-water
   * mark of head segments to the OS.
   */
  async compactCopy(dir: string): Promise<string> {
    await mkdir(dir, { recursive: true });
    await this.env.root.backup(dir, true);
    return join(dir, 'data.mdb');
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.quietTimer !== null) { clearTimeout(this.quietTimer); this.quietTimer = null; }
    while (this.queue.length > 0 || this.running || this.timer || this.syncing > 0) await new Promise((r) => setTimeout(r, 1));
    await this.offload?.close();
    await this.env.close();
  }

  private putMeta(ctx: TxnContext, meta: SeriesMeta): void {
    ctx.setMeta(meta);
  }

  private mutateMeta<T>(id: string, fn: (m: SeriesMeta) => T): Promise<T> {
    try { seriesKey(id, 'series'); } catch (e) { return Promise.reject(e); }
    return this.enqueue((ctx) => {
      const m = ctx.meta(id);
      if (!m) throw new ServiceError('not-found', `series ${id} not found`, { series: id });
      const r = fn(m);
      ctx.touchMeta(m.id);
      return r;
    });
  }

  private enqueue<T>(run: (ctx: TxnContext) => T): Promise<T> {
    if (this.env.readOnly) return Promise.reject(new ServiceError('internal', 'the series store was opened read-only'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.timer || this.running || this.queue.length === 0) return;
    const run = () => { this.timer = null; void this.flush(); };
    // no window (the ingest worker's pipeline gathers its groups): the next group starts at
    // the loop's next turn, not after a timer's 1 ms floor, which every transaction waited
    this.timer = this.groupWindowMs > 0 ? setTimeout(run, this.groupWindowMs) : setImmediate(run);
  }

  /**
   * One group = one transaction. A ServiceError from one request (e.g. conflict) fails only
   * that request: its writes are undone by running every request up to it again without
   * it. A GroupRerun (a write batch met a damaged chunk) runs the same group again: the
   * request refuses that batch the next time, and each rerun excludes one more batch, so
   * the reruns end. Any other error aborts the group and rejects all of it (nothing was
   * made durable).
   * The group runs as an lmdb-js child transaction because only those are aborted when
   * their callback throws: a plain `transaction()` callback that throws still has its
   * writes committed with the rest of lmdb-js's batch (read in lmdb/write.js, and caught
   * by test/storage/head-segments.test.ts).
   */
  private async flush(): Promise<void> {
    this.running = true;
    let group = this.queue;
    this.queue = [];
    let done: { group: Pending[]; values: unknown[] } | null = null;
    const timing = this.onTransaction ? { requests: 0, start: performance.now(), applyStart: 0, applyEnd: 0, committed: 0, durable: 0 } : null;
    try {
      for (;;) {
        const outcomes: { ok: boolean; value: unknown }[] = [];
        let failedAt = -1;
        let rerun = false;
        try {
          await this.env.root.childTransaction(() => {
            if (timing) timing.applyStart = performance.now();
            const ctx = new TxnContext(this.env, this.budget, this.heads, this.decodedMetas, this.offload);
            if (this.offload !== null) installSeals(ctx, this.offload.take());
            for (let i = 0; i < group.length; i++) {
              try {
                outcomes.push({ ok: true, value: group[i].run(ctx) });
              } catch (e) {
                if (e instanceof GroupRerun) rerun = true;
                if (!(e instanceof ServiceError)) throw e;
                failedAt = i;
                outcomes.push({ ok: false, value: e });
                throw e;
              }
            }
            ctx.finish();
            if (timing) timing.applyEnd = performance.now();
          });
        } catch (e) {
          // a meta object may have been changed in memory by the undone transaction
          this.decodedMetas.clear();
          // a batch met a damaged chunk: the same group again, that batch now refused
          if (rerun) { this.groupReruns++; continue; }
          if (failedAt < 0) { for (const p of group) p.reject(e); return; }
          group[failedAt].reject(outcomes[failedAt].value);
          group = group.filter((_, i) => i !== failedAt);
          if (group.length === 0) return;
          continue;
        }
        done = { group, values: outcomes.map((o) => o.value) };
        break;
      }
    } finally {
      this.heads.trim();
      this.running = false;
      if (done === null) this.schedule();
      if (this.collectAfterBytes > 0 && this.heads.releasedBytes >= this.collectAfterBytes) {
        this.heads.releasedBytes = 0;
        this.collections++;
        fullGc();
      }
    }
    // Committed, not yet durable. The next group may apply its transaction while this one
    // is synced (lmdb-js overlappingSync); these callers resolve only once it is on disk.
    this.syncing++;
    const durable = this.env.root.flushed;
    this.schedule();
    if (timing) timing.committed = performance.now();
    try {
      await durable;
    } catch (e) {
      for (const p of done.group) p.reject(e);
      return;
    } finally {
      this.syncing--;
    }
    if (timing && this.onTransaction) {
      const o = performance.timeOrigin;
      this.onTransaction({ requests: done.group.length, start: o + timing.start, applyStart: o + timing.applyStart, applyEnd: o + timing.applyEnd, committed: o + timing.committed, durable: o + performance.now() });
    }
    for (let i = 0; i < done.group.length; i++) done.group[i].resolve(done.values[i]);
  }
}

