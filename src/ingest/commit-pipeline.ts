// Group commit for collector batches. Batches wait in two queues (live, backfill); each
// group takes every waiting live batch first and backfill only with what is left of the
// group budget (a small share while live batches wait). The engine applies a group
// synchronously on this thread, so the work queued ahead of a live batch is what bounds
// its latency. Groups are therefore bounded in time, not only in points: the pipeline
// keeps an estimate of the engine's time per point for each lane (backfill that lands
// behind a series' head costs the engine far more per point than in-order live data) and
// sizes each group to about `groupTargetMs` of engine time (never less than one batch,
// never more than the point caps). One more group than `commitsInFlight` may be handed over when it
// carries live batches, so live never waits for a backfill group to become durable before
// its own group is formed. Up to `commitsInFlight` groups run at once otherwise (the
// engine applies the next while the previous one syncs); groups settle in the order they
// were formed, so per-lane acknowledgements stay cumulative.
//
// The fence check is made when a group is formed, synchronously with handing the group
// to the engine: that is the commit's linearisation point. A batch of a session fenced
// before that instant is rejected and never written; one formed into a group earlier is
// written before the fencing session is welcomed (the welcome waits for idle()).
import type { PointBatch } from '../storage/series-store.js';
import type { IngestStore, StoredBatchResult } from './ingest-store.js';
import { ServiceError } from '../errors.js';
import { absMs, groupTrace } from './group-trace.js';

export interface PendingBatch {
  lane: 'LIVE' | 'BACKFILL';
  points: number;
  /** One per series: a stream's batch is one; a scan (DataBatch.streams) is one per stream it carries. */
  batches: PointBatch[];
  /** True when the session that sent it has been fenced. */
  fenced(): boolean;
  /** Set only while tracing (group-trace.ts): the batch's id (collector/lane/seq) and arrival (absolute ms). */
  trace?: { id: string; arrivedMs: number };
  /** Called once: the stored result of each of `batches`, or a rejection reason (nothing written). */
  settle(outcome: { results: StoredBatchResult[] } | { rejected: 'fenced' | 'storage-full'; detail: string }): void;
}

export interface PipelineHooks {
  storageFull(): boolean;
  principal: string;
  /** An engine fault that is not a refusal: the process must stop, not retry. */
  fatal(e: unknown): void;
  /** After each group has settled (the caller flushes acks then). */
  settled(): void;
  /** A group is durable, in commit order, before its batches settle: the commit feed (commit-feed.ts). */
  durable?(batches: PointBatch[], results: StoredBatchResult[]): void;
}

export class CommitPipeline {
  private live: PendingBatch[] = [];
  private backfill: PendingBatch[] = [];
  private livePoints = 0;
  private backfillPoints = 0;
  private inFlight = 0;
  /** Groups in flight that carry backfill batches. */
  private backfillGroupsInFlight = 0;
  private scheduled = false;
  private lastSettle: Promise<void> = Promise.resolve();
  private idleWaiters: Array<() => void> = [];
  private dead = false;
  groups = 0;
  groupPoints = 0;
  /**
   * Estimated engine wall time per point (ms) for groups mostly of each lane. Backfill starts
   * pessimistic (50 µs, what data behind a series' head has cost here), so the first
   * backfill group is one batch, not seconds of engine time ahead of live data.
   */
  readonly costMs = { LIVE: 0.002, BACKFILL: 0.05 };
  private lastSettleMs = 0;
  private liveMeasured = false;

  /** Live points the engine takes per ms (the inverse of costMs.LIVE); null until a live group was measured. */
  liveRate(): number | null {
    return this.liveMeasured ? 1 / this.costMs.LIVE : null;
  }
  /** Estimated engine time (ms) of the groups in flight: what a new live group would wait behind. */
  private msAhead = 0;

  constructor(
    private readonly store: IngestStore,
    private readonly hooks: PipelineHooks,
    private readonly tuning: { maxGroupPoints: number; backfillGroupPoints: number; backfillShareWhileLive: number; commitsInFlight: number; groupTargetMs: number },
  ) {}

  enqueue(p: PendingBatch): void {
    if (p.lane === 'LIVE') { this.live.push(p); this.livePoints += p.points; } else { this.backfill.push(p); this.backfillPoints += p.points; }
    this.schedule();
  }

  /** Live points waiting for a group (backfill credit is withheld while this is high). */
  liveBacklog(): number {
    return this.livePoints;
  }

  queuedPoints(): number {
    return this.livePoints + this.backfillPoints;
  }

  /** Resolves when nothing is queued or in flight (everything handed over so far has settled). */
  idle(): Promise<void> {
    if (this.inFlight === 0 && this.live.length === 0 && this.backfill.length === 0) return this.lastSettle;
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Groups that may be in flight now: one slot more while live batches wait (see the header). */
  private slots(): number {
    return this.tuning.commitsInFlight + (this.live.length > 0 ? 1 : 0);
  }

  private schedule(): void {
    if (this.scheduled || this.dead || this.inFlight >= this.slots()) return;
    // A group of backfill only waits while more than about a group's worth of engine time is
    // queued: slow backfill (one batch above the target) then runs one group at a time.
    if (this.live.length === 0 && this.inFlight > 0 && this.msAhead >= 1.5 * this.tuning.groupTargetMs) return;
    // ...and while another group carrying backfill is in flight: groups handed to the engine
    // queue there in order (and may share one transaction), so a live group handed next would
    // wait behind both; with one at a time it waits behind at most one backfill group.
    if (this.live.length === 0 && this.backfillGroupsInFlight > 0) return;
    this.scheduled = true;
    // One turn of the event loop lets every batch that arrived in the same read join the group.
    setImmediate(() => { this.scheduled = false; this.runGroup(); });
  }

  private take(queue: PendingBatch[], budget: number, into: PendingBatch[]): number {
    let n = 0, taken = 0;
    while (n < queue.length && (taken === 0 || taken + queue[n].points <= budget)) { taken += queue[n].points; into.push(queue[n]); n++; }
    queue.splice(0, n);
    return taken;
  }

  private runGroup(): void {
    if (this.live.length === 0 && this.backfill.length === 0) { this.checkIdle(); return; }
    const group: PendingBatch[] = [];
    const target = this.tuning.groupTargetMs;
    const max = Math.min(this.tuning.maxGroupPoints, Math.max(1, Math.floor(target / this.costMs.LIVE)));
    const liveSlot = this.inFlight >= this.tuning.commitsInFlight;
    const liveTaken = this.take(this.live, max, group);
    this.livePoints -= liveTaken;
    let backfillTaken = 0;
    if (liveSlot) {
      // the extra slot is for live only
    } else if (this.live.length > 0 || liveTaken > 0) {
      // A share of backfill rides along only if it fits in what is left of the time budget.
      const leftMs = Math.max(0, target - liveTaken * this.costMs.LIVE);
      const share = Math.min(this.tuning.backfillShareWhileLive, Math.floor(leftMs / this.costMs.BACKFILL));
      if (this.backfill.length > 0 && this.backfill[0].points <= share) backfillTaken = this.take(this.backfill, share, group);
    } else {
      backfillTaken = this.take(this.backfill, Math.min(this.tuning.backfillGroupPoints, Math.max(1, Math.floor(target / this.costMs.BACKFILL))), group);
    }
    this.backfillPoints -= backfillTaken;

    // The fence and space checks, at the instant the group is handed to the engine.
    const full = this.hooks.storageFull();
    const writing: PendingBatch[] = [];
    const refused: Array<[PendingBatch, 'fenced' | 'storage-full', string]> = [];
    for (const p of group) {
      if (p.fenced()) refused.push([p, 'fenced', 'a session with a higher epoch took over this collector']);
      else if (full) refused.push([p, 'storage-full', 'free disk space is below the ingest threshold; resend later']);
      else writing.push(p);
    }
    this.inFlight++;
    if (backfillTaken > 0) this.backfillGroupsInFlight++;
    this.groups++;
    this.groupPoints += liveTaken + backfillTaken;
    const written = writing.length === 0
      ? Promise.resolve<StoredBatchResult[] | ServiceError>([])
      : this.store.write(writing.length === 1 ? writing[0].batches : writing.flatMap((p) => p.batches), this.hooks.principal).catch((e: unknown) => {
        if (e instanceof ServiceError && e.code === 'storage-full') return e;
        throw e;
      });
    const previous = this.lastSettle;
    const handedMs = performance.now();
    const lane = backfillTaken > liveTaken ? 'BACKFILL' : 'LIVE';
    const points = writing.length === 0 ? 0 : liveTaken + backfillTaken;
    const estimateMs = liveTaken * this.costMs.LIVE + backfillTaken * this.costMs.BACKFILL;
    this.msAhead += estimateMs;
    this.lastSettle = (async () => {
      let outcome: StoredBatchResult[] | ServiceError;
      try {
        outcome = await written;
      } catch (e) {
        this.dead = true;
        this.hooks.fatal(e);
        return;
      }
      const durableMs = performance.now();
      await previous;
      if (groupTrace) {
        const o = performance.timeOrigin;
        groupTrace.record({ k: 'group', n: this.groups, lane, points, handed: o + handedMs, durable: o + durableMs, settled: absMs(), estimateMs, msAhead: this.msAhead,
          batches: group.map((p) => p.trace ? [p.trace.id, p.trace.arrivedMs] : null) });
      }
      this.measure(lane, points, handedMs);
      for (const [p, reason, detail] of refused) p.settle({ rejected: reason, detail });
      if (outcome instanceof ServiceError) {
        for (const p of writing) p.settle({ rejected: 'storage-full', detail: outcome.message });
      } else {
        if (this.hooks.durable && outcome.length > 0) {
          try { this.hooks.durable(writing.length === 1 ? writing[0].batches : writing.flatMap((p) => p.batches), outcome); } catch { /* the feed must never hold back an ack */ }
        }
        let at = 0;
        for (const p of writing) {
          const n = p.batches.length;
          p.settle({ results: n === 1 ? [outcome[at]] : outcome.slice(at, at + n) });
          at += n;
        }
      }
      this.hooks.settled();
    })();
    this.lastSettle.finally(() => {
      this.inFlight--;
      if (backfillTaken > 0) this.backfillGroupsInFlight--;
      this.msAhead = this.inFlight === 0 ? 0 : Math.max(0, this.msAhead - estimateMs);
      if (this.live.length || this.backfill.length) this.schedule();
      else this.checkIdle();
    });
    if (this.live.length || this.backfill.length) this.schedule();
  }

  /**
   * The time this group added to the pipeline: from when it was handed over, or from the
   * previous group's settling if that was later (the engine was busy with it until then).
   */
  private measure(lane: 'LIVE' | 'BACKFILL', points: number, handedMs: number): void {
    const now = performance.now();
    const start = Math.max(handedMs, this.lastSettleMs);
    this.lastSettleMs = now;
    if (points === 0) return;
    const perPoint = (now - start) / points;
    if (lane === 'LIVE') this.liveMeasured = true;
    // Up at once, down gently: one slow group shrinks the next one; cheap groups grow them step by step.
    this.costMs[lane] = perPoint > this.costMs[lane] ? perPoint : this.costMs[lane] * 0.7 + perPoint * 0.3;
  }

  private checkIdle(): void {
    if (this.inFlight > 0 || this.live.length || this.backfill.length) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
