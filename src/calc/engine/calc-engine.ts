// The calculation engine: runs every current rule on every asset it covers (a target).
//
// - Event and edge triggers: ingest's commit feed says which input series got durable
//   points and at which times; the targets reading them are marked dirty from the earliest
//   such time and evaluated after their debounce. A point at or before what a target has
//   evaluated (late or edited data) marks it dirty from there: the instants after it are
//   recomputed and outputs that change are superseded by the storage (which audits them).
// - Periodic triggers: a tick marks each target dirty up to now (less a settle time, so
//   points of the instant have arrived) when its next grid instant has passed.
// - `provisional: block` targets are also re-tried as their inputs' watermarks move.
//
// Evaluation runs in batches: every due target's window evaluated in the read pool's
// workers (pool-windows.ts: one task per worker, each over one read snapshot), all outputs in
// one storage write (one durable group commit), then progress and lineage in the model in
// one statement each. Progress is recorded only after the write is durable. Catch-up after a
// restart is sliced into MAX_WINDOW_NS pieces so no task holds a worker for long.
// A model commit re-plans the rules it can change beside the batches, then swaps the plans
// in at once (replanning.ts).
import type { ServiceContext } from '../../service-context.js';
import type { CommitSource, LiveGroup } from '../../reads/live/commit-source.js';
import type { PointBatch } from '../../storage/series-store.js';
import { INT64_MIN } from '../../storage/series-store.js';
import { onModelCommit, type ModelEvent } from '../../model/tx-log.js';
import { nowNs } from '../../clock.js';
import { ENGINE_PRINCIPAL, type RulePlan } from './rule-plan.js';
import { evaluateWindowsInPool, finalisedThrough, type Target, type WindowOutcome } from './pool-windows.js';
import { allProgress, recordFailure, ProgressRecorder, type WindowDone } from './progress-store.js';
import { TraceStore, traceContextFor } from './trace-ring.js';
import { LatencyRecorder } from './latency.js';
import type { BatchTimeline } from './batch-timeline.js';
import { DueWheel } from './due-wheel.js';
import { replanScope, assetsOfPlan, type ReplanScope } from './replan-scope.js';
import { makePlans, swapIn, type NewPlans } from './replanning.js';
import type { TargetState } from './target-state.js';

export type { TargetState } from './target-state.js';

/** Longest window one evaluation covers on this thread (1 h: 3,600 points of a 1 s input). */
export const MAX_WINDOW_NS = 3_600_000_000_000n;
/**
 * Batches in flight at once: the next batch is evaluated in the read pool while the previous
 * one's outputs are written (both wait off this thread: a worker, an fsync), so one batch's
 * write no longer holds back the evaluation of the points that arrived during it.
 */
const BATCHES_IN_FLIGHT = 2;
/** Targets evaluated per batch: bounds one batch's thread time and write size. */
const BATCH_TARGETS = 4_000;
/** Periodic instants are evaluated this long after they pass, so their inputs have arrived. */
export const PERIODIC_SETTLE_NS = 250_000_000n;
const TICK_MS = 100;
const BLOCK_RECHECK_MS = 1_000;
const RELOAD_DEBOUNCE_MS = 50;
const RETRY_MS = 1_000;
const MODEL_KINDS = new Set(['calc-rule', 'asset', 'attribute', 'binding', 'template']);
/** This engine's name among the commit feed's clients (each watches its own series). */
const WATCH_CLIENT = 'calculations';

export class CalcEngine {
  private plans = new Map<string, RulePlan>();
  private readonly states = new Map<string, TargetState>();
  /** Targets with a pending window; the wheel says which are due. */
  private readonly dirty = new Set<TargetState>();
  private bySeries = new Map<string, TargetState[]>();
  readonly traces = new TraceStore();
  readonly latency = new LatencyRecorder();
  /**
   * Where that latency goes (bench): from the input's ack until its target's batch starts
   * (commit feed, debounce, due wheel, batches ahead of it), the batch's evaluation in the
   * read pool, then its write until durable (with any earlier batch's write ahead of it).
   */
  readonly latencyParts = { queued: new LatencyRecorder(), evaluate: new LatencyRecorder(), write: new LatencyRecorder() };
  /** Each batch's due -> evaluated -> write -> durable times when set (bench). */
  timeline: BatchTimeline | null = null;
  private readonly unsubscribeFeed: () => void;
  private readonly unsubscribeModel: () => void;
  private readonly tick: NodeJS.Timeout;
  private readonly wheel = new DueWheel<TargetState>(() => this.kick());
  /** Targets the tick looks at: periodic ones, and `provisional: block` ones (rebuilt on reload). */
  private ticked: TargetState[] = [];
  private reloadTimer: NodeJS.Timeout | null = null;
  /** Model events not yet planned for (replan-scope.ts says which rules they change). */
  private pendingEvents: ModelEvent[] = [];
  /** The assets each plan runs on or reports, by rule (replan-scope.ts). */
  private assetsByRule = new Map<string, Set<string>>();
  /** Reloads, one at a time, beside the batches (replanning.ts says why). */
  private planning: Promise<void> = Promise.resolve();
  /** Batches run one pump at a time. */
  private chain: Promise<void> = Promise.resolve();
  /** Progress and lineage writes, in batch order, at most one recording a second (batches finishing meanwhile are recorded together). */
  readonly recorder: ProgressRecorder;
  private pumping = false;
  /** Wakes a pump waiting on its batches in flight when new targets become due. */
  private wakePump: (() => void) | null = null;
  /** Writes and their bookkeeping, in batch order. */
  private writing: Promise<void> = Promise.resolve();
  /**
   * Set when a batch's write failed; batches in flight behind it then count as failed too
   * (their windows are due again), so no target's progress passes a window that was not
   * written. Cleared when the pump has no batch in flight.
   */
  private writeFailed = false;
  private closed = false;
  private lastBlockCheck = 0;
  /** Evaluations written and batches run (diagnostics, bench). */
  evaluations = 0;
  batches = 0;
  /** Milliseconds spent evaluating batches, and waiting for their outputs to be durable (diagnostics, bench). */
  evaluateMs = 0;
  writeWaitMs = 0;

  constructor(private readonly service: ServiceContext, private readonly source: CommitSource | null) {
    this.recorder = new ProgressRecorder(service.db, (e) => this.log.warn({ err: e }, 'recording calculation progress failed'));
    this.unsubscribeFeed = source ? source.onCommits((g) => this.onCommits(g)) : () => undefined;
    this.unsubscribeModel = onModelCommit((tx) => {
      if (tx.principal === ENGINE_PRINCIPAL && tx.events.every((e) => e.entity_kind === 'binding' || e.entity_kind === 'series')) return;
      const relevant = tx.events.filter((e) => MODEL_KINDS.has(e.entity_kind));
      if (relevant.length > 0) { this.pendingEvents.push(...relevant); this.scheduleReload(); }
    });
    this.tick = setInterval(() => this.onTick(), TICK_MS);
    this.tick.unref();
  }

  private get log() { return this.service.log.child({ area: 'calc' }); }

  /** Plans the rules in scope (every current rule by default) and resumes each of their targets after its durable progress. */
  reload(scope: ReplanScope = 'all'): Promise<void> {
    const run = this.planning.then(() => this.reloadNow(scope));
    this.planning = run.catch((e: unknown) => this.log.error({ err: e }, 'calculation engine reload failed'));
    return run;
  }

  private scheduleReload(): void {
    if (this.closed) return;
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      const run = this.planning.then(async () => {
        // Scoped against the plans as the reloads before this one left them.
        const events = this.pendingEvents;
        this.pendingEvents = [];
        const scope = replanScope(events, this.plans, this.assetsByRule);
        if (scope === 'all' || scope.size > 0) await this.reloadNow(scope);
      });
      this.planning = run.catch((e: unknown) => this.log.error({ err: e }, 'calculation engine reload failed'));
    }, RELOAD_DEBOUNCE_MS);
    this.reloadTimer.unref();
  }

  private async reloadNow(scope: ReplanScope): Promise<void> {
    if (this.closed) return;
    const next = await makePlans(this.service, scope, this.plans, this.states);
    if (this.closed) return;
    await this.recorder.settled(); // progress read below must include every batch recorded so far
    const progress = await allProgress(this.service.db);
    this.apply(next, progress);
    await this.source?.watch(WATCH_CLIENT, [...this.bySeries.keys()]);
    this.kick();
  }

  /** Swaps the plans in (synchronously: no batch sees half of them). */
  private apply(next: NewPlans, progress: ReadonlyMap<string, bigint>): void {
    const swap = swapIn(this.service, this.states, next, progress);
    for (const m of swap.marks) this.markDirty(m.state, m.from, m.to, 0);
    for (const s of swap.dropped) { this.dirty.delete(s); this.wheel.remove(s); }
    this.ticked = [...this.states.values()].filter((s) => s.target.rule.trigger.kind === 'periodic' || s.target.rule.provisional === 'block');
    for (const id of this.plans.keys()) if (!next.plans.has(id)) { this.traces.dropRule(id); this.assetsByRule.delete(id); }
    for (const id of next.replanned) { const p = next.plans.get(id); if (p) this.assetsByRule.set(id, assetsOfPlan(p)); }
    this.plans = next.plans;
    this.bySeries = swap.bySeries;
  }

  private markDirty(s: TargetState, from: bigint, to: bigint, delayMs: number): void {
    const nowMs = Date.now();
    if (s.dirtyFrom === null) {
      this.dirty.add(s);
      s.dirtyFrom = from;
      s.dirtyTo = to;
      s.dirtySinceMs = nowMs;
      s.dueMs = nowMs + delayMs;
    } else {
      if (from < s.dirtyFrom) s.dirtyFrom = from;
      if (to > s.dirtyTo) s.dirtyTo = to;
      // Debounce: each new commit pushes the evaluation back, bounded by one debounce past the first mark.
      s.dueMs = Math.min(Math.max(s.dueMs, nowMs + delayMs), s.dirtySinceMs + 2 * delayMs);
    }
    this.wheel.schedule(s, s.dueMs, nowMs);
  }

  private onCommits(g: LiveGroup): void {
    if (this.closed || this.bySeries.size === 0) return;
    for (const c of g.columns) {
      const list = this.bySeries.get(c.series);
      if (!list || c.times.length === 0) continue;
      let min = c.times[0], max = c.times[0];
      for (let i = 1; i < c.times.length; i++) { const t = c.times[i]; if (t < min) min = t; if (t > max) max = t; }
      for (const s of list) {
        const trig = s.target.rule.trigger;
        if (trig.kind === 'periodic') {
          // Periodic instants already evaluated that the new points change are recomputed; later ones wait for the tick.
          if (min <= s.through) this.markDirty(s, min, s.through + 1n, 0);
          continue;
        }
        const to = (max > s.through ? max : s.through) + 1n;
        this.markDirty(s, min, to, trig.kind === 'event' ? trig.debounceMs : 0);
        if (s.inputDurableMs === 0 || g.durableMs < s.inputDurableMs) s.inputDurableMs = g.durableMs;
      }
    }
    this.kick();
  }

  private onTick(): void {
    if (this.closed) return;
    const now = nowNs();
    const checkBlock = Date.now() - this.lastBlockCheck >= BLOCK_RECHECK_MS;
    if (checkBlock) this.lastBlockCheck = Date.now();
    let marked = false;
    for (const s of this.ticked) {
      const trig = s.target.rule.trigger;
      if (trig.kind === 'periodic') {
        const upTo = now - PERIODIC_SETTLE_NS;
        if (upTo > s.through && nextInstant(s.through, trig.intervalNs, trig.alignNs) <= upTo) { this.markDirty(s, s.through + 1n, upTo + 1n, 0); marked = true; }
      } else if (checkBlock && s.target.rule.provisional === 'block' && s.dirtyFrom === null && s.through < now) {
        const final = this.finalOf(s.target);
        if (final !== null && final > s.through) { this.markDirty(s, s.through + 1n, final + 1n, 0); marked = true; }
      }
    }
    if (marked) this.kick();
  }

  private finalOf(t: Target): bigint | null {
    return this.service.parts.storage.read((view) => finalisedThrough(view, t));
  }

  /** Starts the pump when something is due (the wheel's timer calls again when a debounce ends). */
  private kick(): void {
    if (this.closed || !this.wheel.hasReady()) return;
    if (this.pumping) { this.wakePump?.(); return; }
    this.pumping = true;
    const run = this.chain.then(() => this.pump());
    this.chain = run.catch((e: unknown) => this.log.error({ err: e }, 'calculation batch failed')).finally(() => { this.pumping = false; this.kick(); });
  }

  private async pump(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    try {
      for (;;) {
        if (this.closed) return;
        const due = this.wheel.take(BATCH_TARGETS).filter((s) => s.dirtyFrom !== null);
        if (due.length === 0) {
          if (inFlight.size === 0) return;
          // Nothing due: wait for a batch to finish or for new due targets, whichever comes first.
          await Promise.race([...inFlight, new Promise<void>((r) => { this.wakePump = r; })]);
          this.wakePump = null;
          continue;
        }
        const run: Promise<void> = this.runBatch(due).finally(() => { inFlight.delete(run); });
        inFlight.add(run);
        if (inFlight.size >= BATCHES_IN_FLIGHT) await Promise.race(inFlight);
      }
    } finally {
      await Promise.allSettled([...inFlight]);
      this.wakePump = null;
      this.writeFailed = false;
    }
  }

  private async runBatch(due: TargetState[]): Promise<void> {
    const work: Array<{ s: TargetState; from: bigint; to: bigint; ackMs: number }> = [];
    for (const s of due) {
      const from = s.dirtyFrom as bigint;
      const to = s.dirtyTo - from > MAX_WINDOW_NS ? from + MAX_WINDOW_NS : s.dirtyTo;
      // A window longer than one slice stays dirty and goes to the back of the line.
      if (to >= s.dirtyTo) { s.dirtyFrom = null; this.dirty.delete(s); } else { s.dirtyFrom = to; this.wheel.schedule(s, 0); }
      work.push({ s, from, to, ackMs: s.inputDurableMs });
      s.inputDurableMs = 0;
    }
    const te = performance.now();
    const takenMs = performance.timeOrigin + te;
    let outcomes: Array<WindowOutcome | Error>;
    try {
      outcomes = await evaluateWindowsInPool(this.service.parts.readPool,
        work.map(({ s, from, to }) => ({ target: s.target, from, to, kind: 'evaluate' as const, trace: true, triggerName: s.target.rule.trigger.kind })));
    } catch (e) {
      // The pool refused (queue full, shutting down): every window is due again after a pause.
      for (const w of work) this.markDirty(w.s, w.from, w.to, RETRY_MS);
      this.log.warn({ err: e }, 'evaluating calculation windows failed; retrying');
      return;
    }
    const batches: PointBatch[] = [];
    for (const o of outcomes) if (!(o instanceof Error) && o.batch) batches.push(o.batch);
    const evaluatedAt = performance.now();
    this.evaluateMs += evaluatedAt - te;
    const timing = { takenMs, evaluatedMs: performance.timeOrigin + evaluatedAt };
    // Writes and what follows them run in batch order: a later batch (a newer snapshot of the
    // inputs, e.g. after a late point) always lands after an earlier one.
    const turn = this.writing.then(() => this.writeAndRecord(work, outcomes, batches, timing));
    this.writing = turn.catch(() => undefined);
    await turn;
  }

  private async writeAndRecord(work: Array<{ s: TargetState; from: bigint; to: bigint; ackMs: number }>, outcomes: Array<WindowOutcome | Error>, batches: PointBatch[],
    timing: { takenMs: number; evaluatedMs: number }): Promise<void> {
    const storage = this.service.parts.storage;
    const tw = performance.now();
    try {
      if (this.writeFailed) throw new Error('an earlier batch\'s write failed');
      if (batches.length > 0) await storage.write(batches, { principal: ENGINE_PRINCIPAL });
      this.writeWaitMs += performance.now() - tw;
    } catch (e) {
      this.writeFailed = true;
      // Nothing of the batch counts as done: every window is due again after a pause.
      for (const w of work) this.markDirty(w.s, w.from, w.to, RETRY_MS);
      for (const w of work) await recordFailure(this.service.db, w.s.target.rule.ruleId, w.s.target.assetId, w.s.target.rule.version, `writing outputs failed: ${(e as Error).message}`).catch(() => undefined);
      this.log.warn({ err: e }, 'writing calculation outputs failed; retrying');
      return;
    }
    const durableMs = performance.timeOrigin + performance.now();
    this.timeline?.addBatch(work, batches, { ...timing, writeStartMs: performance.timeOrigin + tw, durableMs });
    const done: WindowDone[] = [];
    for (let i = 0; i < work.length; i++) {
      const w = work[i], o = outcomes[i];
      const t = w.s.target;
      if (o instanceof Error) {
        w.s.lastError = o.message;
        await recordFailure(this.service.db, t.rule.ruleId, t.assetId, t.rule.version, o.message).catch(() => undefined);
        continue;
      }
      if (w.ackMs > 0 && o.evaluated > 0) {
        this.latency.add(durableMs - w.ackMs);
        this.latencyParts.queued.add(timing.takenMs - w.ackMs);
        this.latencyParts.evaluate.add(timing.evaluatedMs - timing.takenMs);
        this.latencyParts.write.add(durableMs - timing.evaluatedMs);
      }
      // Held back (provisional: block): done only through the inputs' watermark, even if an earlier
      // window had gone further, so the held instants are evaluated as the watermark moves.
      const held = o.doneThroughNs < w.to - 1n;
      const through = held || o.doneThroughNs > w.s.through ? o.doneThroughNs : w.s.through;
      if (o.evaluated > 0 || through > INT64_MIN) {
        done.push({
          ruleId: t.rule.ruleId, assetId: t.assetId, ruleVersion: t.rule.version, outputSeries: t.outputSeries,
          startNs: w.from, endNs: o.doneThroughNs + 1n, throughNs: through, evaluations: o.evaluated, errors: o.bad,
          lastError: o.bad > 0 ? `${o.bad} instant(s) without a defined value (see trace)` : null, cursor: w.s.lineage,
        });
      }
      w.s.through = through;
      w.s.provisionalFromNs = o.provisionalFromNs;
      this.evaluations += o.evaluated;
      if (o.trace !== null && o.batch !== null) {
        let tr = w.s.trace;
        if (tr === undefined || tr.target !== t) {
          const context = traceContextFor(t);
          tr = { target: t, context, ring: this.traces.ringOf(t.rule.ruleId, context) };
          w.s.trace = tr;
        }
        tr.ring.pushWindow(tr.context, o, w.from, w.to);
      }
    }
    // Progress and lineage follow in their own ordered chain, so the next batch's evaluation
    // and write overlap this one's model statements (the outputs are already durable; progress
    // lagging them only means a restart re-evaluates a little, rewriting identical values).
    this.recorder.queue(done);
    this.batches++;
  }

  /** Whether live evaluations are due or running (backfills wait for them). */
  hasDueWork(): boolean {
    return this.pumping || this.wheel.hasReady();
  }

  /** Per-target state of one rule (status route). */
  statesOf(ruleId: string): TargetState[] {
    return [...this.states.values()].filter((s) => s.target.rule.ruleId === ruleId);
  }

  planOf(ruleId: string): RulePlan | undefined {
    return this.plans.get(ruleId);
  }

  /** Resolves when nothing is due or running (tests and benchmarks). */
  async idle(timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      await this.planning;
      await this.chain;
      await this.recorder.settled();
      const busy = this.pumping || this.reloadTimer !== null || this.dirty.size > 0;
      if (!busy) return;
      if (Date.now() > end) throw new Error('the calculation engine did not become idle in time');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.tick);
    this.wheel.close();
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    this.unsubscribeFeed();
    this.unsubscribeModel();
    await this.source?.watch(WATCH_CLIENT, []).catch(() => undefined);
    await this.planning.catch(() => undefined);
    await this.chain.catch(() => undefined);
    await this.recorder.settled();
  }
}

/** The first grid instant k·interval + align after `after`. */
export function nextInstant(after: bigint, intervalNs: bigint, alignNs: bigint): bigint {
  const r = (((after - alignNs) % intervalNs) + intervalNs) % intervalNs;
  return after - r + intervalNs;
}
