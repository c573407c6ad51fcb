// Backfills: a rule evaluated over a past range for some or all of its assets, first as a
// preview (what would be added, changed, unchanged, with a sample), then committed or
// cancelled. Each job is also an Operation (namespace calc-backfill, kind calc.backfill):
// running while previewing, awaiting-commit with its preview, running while writing,
// then completed with a receipt, cancelled or failed.
//
// The range is cut into windows of one day per asset, evaluated and diffed in the read
// pool's workers, two windows per worker in flight (both cores busy while the HTTP thread
// takes results in order; a live evaluation queues behind at most two backfill windows of
// ~40 ms per worker). A preview brings back counts and samples only. Commit writes their
// points through the storage write path (a write per window) in groups of about
// WRITE_GROUP_POINTS, one group while the workers diff the next; after each durable group
// its position (asset index, instant) is saved, so a restart
// resumes after the last saved group: a window written but not yet saved is evaluated and
// written again, which stores identical values (no-ops), so nothing is lost or doubled. A
// preview interrupted by a restart is marked failed (it is cheap to ask again). Before each
// group the commit yields to the live engine while it has due work (live ingest first); the
// time waited is `rate_limited_ms`.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../../service-context.js';
import { ServiceError, invalid } from '../../errors.js';
import { nowNs } from '../../clock.js';
import type { CalcEngine } from '../engine/calc-engine.js';
import { planRule, ENGINE_PRINCIPAL, type RulePlan } from '../engine/rule-plan.js';
import { recordLineage, newCursor, type LineageCursor } from '../engine/progress-store.js';
import { ruleAt } from '../rules/rule-store.js';
import type { WindowDiff } from '../../calc-kernel/window-diff.js';
import type { PointBatch } from '../../storage/series-store.js';
import { diffWindowInPool, type Target } from '../engine/pool-windows.js';
import { BindingSegments } from './binding-segments.js';
import { insertJob, jobById, jobsInState, moveJob, saveProgress, type BackfillJob, type BackfillPreview } from './backfill-store.js';
import { operationCancelled, operationResumed } from './backfill-operation.js';

/** One window: a day of one asset (86,400 points of a 1 s input). */
export const BACKFILL_WINDOW_NS = 86_400_000_000_000n;
/** Longest range of one backfill: 3,650 one-day windows per asset (a mistyped range must not run for days). */
const MAX_BACKFILL_NS = 3_650n * BACKFILL_WINDOW_NS;
/** Differences shown in a preview's sample. */
const SAMPLE_SIZE = 20;
/** Longest wait for the live engine before a group is written anyway (ms). */
const MAX_YIELD_MS = 1_000;
/**
 * Points of a group: written window by window, then the position, lineage and progress are
 * saved once (a few days of a 1 s output; per day they cost a model row each).
 */
const WRITE_GROUP_POINTS = 500_000;

/** Backfill windows in flight per read worker (the pool runs two tasks per worker back to back). */
const WINDOWS_PER_WORKER = 2;

/** One window of one asset; `target` reads the inputs bound over it (binding-segments.ts). */
interface Window { assetIndex: number; assetId: string; from: bigint; to: bigint; target?: Target }

export interface BackfillRequest {
  rule_id: string;
  assets: 'all' | string[];
  start_ns: bigint;
  end_ns: bigint;
  mode: 'fill-gaps' | 'recalculate';
  reason?: string;
}

export class BackfillRunner {
  /** Jobs being previewed or committed in this process, with their stop flags. */
  private readonly running = new Map<string, { stop: boolean; done: Promise<void> }>();
  private closed = false;

  constructor(private readonly service: ServiceContext, private readonly engine: CalcEngine) {}

  private get log() { return this.service.log.child({ area: 'calc-backfill' }); }

  /** Creates a job and starts its preview; answers at once with the job (state previewing). */
  async create(req: BackfillRequest, principal: string): Promise<BackfillJob> {
    if (req.end_ns <= req.start_ns) throw invalid('end_ns', 'must be after start_ns');
    if (req.end_ns - req.start_ns > MAX_BACKFILL_NS) throw invalid('end_ns', 'a backfill covers at most 10 years (3,650 days); split a longer one');
    const rule = await ruleAt(this.service.db, null, req.rule_id);
    if (!rule) throw new ServiceError('not-found', `calculation rule ${req.rule_id} not found`);
    if (rule.retired) throw invalid('rule_id', 'the rule is retired');
    const planned = this.engine.planOf(rule.rule_id);
    const plan = planned && planned.rule.version === rule.version ? planned : await planRule(this.service, rule);
    const known = new Set(plan.targets.map((t) => t.assetId));
    let assets: string[];
    if (req.assets === 'all') assets = [...known];
    else {
      assets = [...new Set(req.assets)];
      const missing = assets.find((a) => !known.has(a));
      if (missing) throw invalid('assets', `the rule does not run on asset ${missing}${plan.problems.has(missing) ? ` (${plan.problems.get(missing)})` : ''}`);
    }
    const perAsset = (req.end_ns - req.start_ns + BACKFILL_WINDOW_NS - 1n) / BACKFILL_WINDOW_NS;
    const jobId = randomUUID();
    const op = await this.service.operations.start({
      namespace: 'calc-backfill', localId: jobId, kind: 'calc.backfill', principal, reason: req.reason ?? '',
      detail: { adapter: 'calc-backfill', job_id: jobId, rule_id: rule.rule_id, mode: req.mode },
      total: perAsset * BigInt(assets.length), unit: 'windows', affected: [{ kind: 'calc-rule', id: rule.rule_id }], cancellable: true,
    });
    await insertJob(this.service.db, {
      job_id: jobId, rule_id: rule.rule_id, rule_version: rule.version, mode: req.mode, asset_ids: assets, start_ns: req.start_ns, end_ns: req.end_ns,
      state: 'previewing', windows_total: perAsset * BigInt(assets.length), operation_id: op.id, principal, created_ns: nowNs(),
    });
    this.track(jobId, (flag) => this.preview(jobId, plan, flag));
    return (await jobById(this.service.db, jobId)) as BackfillJob;
  }

  private track(jobId: string, work: (flag: { stop: boolean }) => Promise<void>): void {
    const entry = { stop: false, done: Promise.resolve() };
    entry.done = work(entry).catch(async (e: unknown) => {
      this.log.error({ err: e, job_id: jobId }, 'backfill failed');
      const job = await jobById(this.service.db, jobId).catch(() => null);
      if (job && await moveJob(this.service.db, jobId, ['previewing', 'committing'], 'failed', { error: (e as Error).message }).catch(() => false)) {
        await this.service.operations.fail(job.operation_id, { message: (e as Error).message }).catch(() => undefined);
      }
    }).finally(() => { this.running.delete(jobId); });
    this.running.set(jobId, entry);
  }

  /**
   * Diffs the windows in the read pool, as many at once as it has workers, and yields them in
   * order with their diffs (the next ones already running while the caller uses one).
   */
  private async *diffed(windows: Iterable<Window>, targets: Map<string, Target>, mode: BackfillJob['mode'], sampleRoom: number, keepBatch: boolean,
    flag: { stop: boolean }): AsyncGenerator<{ w: Window; t: Target; d: WindowDiff }> {
    const pool = this.service.parts.readPool;
    const queue: Array<{ w: Window; t: Target; d: Promise<WindowDiff> }> = [];
    const it = windows[Symbol.iterator]();
    const fill = () => {
      while (queue.length < WINDOWS_PER_WORKER * pool.threads) {
        const next = it.next();
        if (next.done) return;
        const w = next.value;
        const t = w.target ?? targets.get(w.assetId);
        if (!t) throw new ServiceError('conflict', `the rule no longer runs on asset ${w.assetId}`);
        const d = diffWindowInPool(pool, { target: t, from: w.from, to: w.to, kind: 'diff', mode, sampleRoom, keepBatch });
        d.catch(() => undefined); // awaited in order below; a later window's failure must not go unhandled meanwhile
        queue.push({ w, t, d });
      }
    };
    try {
      fill();
      while (queue.length > 0) {
        if (flag.stop || this.closed) return;
        const head = queue.shift()!;
        const d = await head.d;
        fill();
        yield { w: head.w, t: head.t, d };
      }
    } finally {
      // Stopped early: let the windows still running finish before the job moves on.
      await Promise.allSettled(queue.map((q) => q.d));
    }
  }

  /** Every (asset, window) of a job in order, from a saved position on. */
  private *windows(job: BackfillJob, targets: Map<string, Target>, seg: BindingSegments, fromAsset = 0, after: bigint | null = null): Generator<Window> {
    for (let a = fromAsset; a < job.asset_ids.length; a++) {
      let from = a === fromAsset && after !== null ? after : job.start_ns;
      const assetId = job.asset_ids[a];
      const base = targets.get(assetId);
      while (from < job.end_ns) {
        let to = from + BACKFILL_WINDOW_NS < job.end_ns ? from + BACKFILL_WINDOW_NS : job.end_ns;
        // Windows end where an input's binding changes, so each reads the series bound over it.
        const cut = seg.nextCut(assetId, from);
        if (cut !== null && cut < to) to = cut;
        yield { assetIndex: a, assetId, from, to, ...(base ? { target: seg.targetAt(base, from) } : {}) };
        from = to;
      }
    }
  }

  private async preview(jobId: string, plan: RulePlan, flag: { stop: boolean }): Promise<void> {
    const job = (await jobById(this.service.db, jobId)) as BackfillJob;
    const targets = new Map(plan.targets.map((t) => [t.assetId, t]));
    const p: BackfillPreview = { points_added: 0n, points_changed: 0n, points_unchanged: 0n, sample: [] };
    let done = 0n;
    const seg = await BindingSegments.of(this.service, plan, job.asset_ids, job.start_ns, job.end_ns);
    for await (const { w, d } of this.diffed(this.windows(job, targets, seg), targets, job.mode, SAMPLE_SIZE, false, flag)) {
      if (flag.stop || this.closed) return;
      p.points_added += BigInt(d.added);
      p.points_changed += BigInt(d.changed);
      p.points_unchanged += BigInt(d.unchanged);
      for (const s of d.sample) if (p.sample.length < SAMPLE_SIZE) p.sample.push({ asset_id: w.assetId, ts_ns: s.ts, old: s.old, new: s.new });
      done++;
      if (done % 16n === 0n) await this.service.operations.progress(job.operation_id, { completed: done, stage: 'preview' });
    }
    if (flag.stop || this.closed) return;
    if (await moveJob(this.service.db, jobId, ['previewing'], 'preview', { preview: p })) {
      await this.service.operations.progress(job.operation_id, { completed: 0n, stage: 'preview ready' });
      await this.service.operations.awaitCommit(job.operation_id);
    }
  }

  async get(jobId: string): Promise<BackfillJob> {
    const job = await jobById(this.service.db, jobId);
    if (!job) throw new ServiceError('not-found', `backfill ${jobId} not found`);
    return job;
  }

  /** Starts writing a previewed job; answers with the job (state committing). */
  async commit(jobId: string): Promise<BackfillJob> {
    const job = await this.get(jobId);
    if (job.state !== 'preview') throw new ServiceError('conflict', `backfill ${jobId} is ${job.state}, not preview`, { state: job.state });
    const rule = await ruleAt(this.service.db, null, job.rule_id);
    if (!rule || rule.retired) throw new ServiceError('conflict', `the rule of backfill ${jobId} is retired`, { state: job.state });
    if (rule.version !== job.rule_version) throw new ServiceError('conflict', `rule ${job.rule_id} changed since the preview (version ${job.rule_version}, now ${rule.version}); preview again`, { state: job.state });
    if (!(await moveJob(this.service.db, jobId, ['preview'], 'committing'))) throw new ServiceError('conflict', `backfill ${jobId} changed state meanwhile`);
    await operationResumed(this.service.db, job.operation_id, 'commit');
    const plan = await planRule(this.service, rule);
    this.track(jobId, (flag) => this.write(jobId, plan, flag));
    return this.get(jobId);
  }

  private async write(jobId: string, plan: RulePlan, flag: { stop: boolean }): Promise<void> {
    const job = (await jobById(this.service.db, jobId)) as BackfillJob;
    const targets = new Map(plan.targets.map((t) => [t.assetId, t]));
    let windowsDone = job.windows_done, written = job.points_written, waited = job.rate_limited_ms;
    const cursors = new Map<string, LineageCursor>();
    let group: { batches: PointBatch[]; points: number; windows: number; last: Window | null; spans: Map<string, { t: Target; from: bigint; to: bigint }> } =
      { batches: [], points: 0, windows: 0, last: null, spans: new Map() };
    // Writes the group, then saves the position after its last window; false when the operation
    // was cancelled. The group is taken before the first await, so the loop fills the next.
    const flush = async (): Promise<boolean> => {
      const g = group;
      if (g.last === null) return true;
      group = { batches: [], points: 0, windows: 0, last: null, spans: new Map() };
      // Live evaluations first: wait while the engine has due work.
      const waitStart = Date.now();
      while (this.engine.hasDueWork() && Date.now() - waitStart < MAX_YIELD_MS) await new Promise((r) => setTimeout(r, 5));
      waited += BigInt(Date.now() - waitStart);
      // One storage write per window: the write path encodes a write's points in one
      // synchronous step on this thread, so a day (86,400 points) is the most it is handed at once.
      for (const b of g.batches) await this.service.parts.storage.write([b], { principal: ENGINE_PRINCIPAL });
      written += BigInt(g.points);
      windowsDone += BigInt(g.windows);
      const w = g.last;
      const next = w.to >= job.end_ns ? { assetsDone: w.assetIndex + 1, resumeAfterNs: null } : { assetsDone: w.assetIndex, resumeAfterNs: w.to };
      await saveProgress(this.service.db, jobId, { windowsDone, pointsWritten: written, rateLimitedMs: waited, ...next });
      const spans = [...g.spans.values()].map(({ t, from, to }) => {
        let cursor = cursors.get(t.assetId);
        if (!cursor) { cursor = newCursor(); cursors.set(t.assetId, cursor); }
        return { ruleId: t.rule.ruleId, assetId: t.assetId, ruleVersion: t.rule.version, outputSeries: t.outputSeries, startNs: from, endNs: to, cursor };
      });
      if (spans.length > 0) await recordLineage(this.service.db, spans);
      return this.service.operations.progress(job.operation_id, { completed: windowsDone, stage: 'commit' });
    };
    let pending: Promise<boolean> | null = null;
    const seg = await BindingSegments.of(this.service, plan, job.asset_ids, job.start_ns, job.end_ns);
    for await (const { w, t, d } of this.diffed(this.windows(job, targets, seg, job.assets_done, job.resume_after_ns), targets, job.mode, 0, true, flag)) {
      if (flag.stop || this.closed) { await pending; return; }
      if (d.batch) group.batches.push(d.batch);
      group.points += d.added + d.changed;
      group.windows++;
      group.last = w;
      if (d.added + d.changed > 0) {
        const span = group.spans.get(t.assetId);
        if (span) span.to = w.to; else group.spans.set(t.assetId, { t, from: w.from, to: w.to });
      }
      if (group.points >= WRITE_GROUP_POINTS) {
        // One group is written while the workers diff the next; groups land in order.
        if (pending && !(await pending)) { await this.finishCancel(jobId); return; }
        pending = flush();
        pending.catch(() => undefined); // awaited before the next group or at the end
      }
    }
    if (pending && !(await pending)) { await this.finishCancel(jobId); return; }
    if (flag.stop || this.closed) return;
    if (!(await flush())) { await this.finishCancel(jobId); return; }
    if (await moveJob(this.service.db, jobId, ['committing'], 'committed')) {
      await this.service.operations.complete(job.operation_id, {
        adapter: 'calc-backfill',
        value: { job_id: jobId, rule_id: job.rule_id, rule_version: job.rule_version, mode: job.mode, points_written: written, windows: windowsDone, rate_limited_ms: waited },
      });
    }
  }

  private async finishCancel(jobId: string): Promise<void> {
    const job = await this.get(jobId);
    if (await moveJob(this.service.db, jobId, ['previewing', 'preview', 'committing'], 'cancelled')) await operationCancelled(this.service.db, job.operation_id);
  }

  /** Cancels a job: a preview is dropped; a commit stops after its current window (what it wrote stays). */
  async cancel(jobId: string): Promise<BackfillJob> {
    const job = await this.get(jobId);
    if (!['previewing', 'preview', 'committing'].includes(job.state)) throw new ServiceError('conflict', `backfill ${jobId} is already ${job.state}`, { state: job.state });
    const r = this.running.get(jobId);
    if (r) { r.stop = true; await r.done; }
    await this.finishCancel(jobId);
    return this.get(jobId);
  }

  /** After a restart: commits resume after their last saved window; previews are marked failed. */
  async resumeInterrupted(): Promise<void> {
    for (const job of await jobsInState(this.service.db, 'previewing')) {
      if (await moveJob(this.service.db, job.job_id, ['previewing'], 'failed', { error: 'the service restarted during the preview; create the backfill again' })) {
        await this.service.operations.fail(job.operation_id, { message: 'interrupted by a restart during the preview' }).catch(() => undefined);
      }
    }
    for (const job of await jobsInState(this.service.db, 'committing')) {
      const rule = await ruleAt(this.service.db, null, job.rule_id);
      if (!rule || rule.retired || rule.version !== job.rule_version) {
        await moveJob(this.service.db, job.job_id, ['committing'], 'failed', { error: 'the rule changed or was retired while the commit was interrupted' });
        await this.service.operations.fail(job.operation_id, { message: 'rule changed during an interrupted commit' }).catch(() => undefined);
        continue;
      }
      this.log.info({ job_id: job.job_id, assets_done: job.assets_done, resume_after_ns: String(job.resume_after_ns) }, 'resuming an interrupted backfill commit');
      const plan = await planRule(this.service, rule);
      this.track(job.job_id, (flag) => this.write(job.job_id, plan, flag));
    }
  }

  /** Waits for a job's running work (tests). */
  async settled(jobId: string): Promise<void> {
    await this.running.get(jobId)?.done;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.running.values()].map((r) => { r.stop = true; return r.done; }));
  }
}
