// Template triggers: an episode opens on an asset when the template's `open_when` holds
// there for `min_duration_ms`, and closes when it stops holding. The trigger follows
// ingest's commit feed (live and late points alike): a commit of an input marks its
// targets dirty from the earliest point it brought, and each dirty target is evaluated
// again over [that point − look-back, now]. So a late point that makes the condition true
// in the past opens (and closes) the episode in the past.
//
// Each evaluation finds the condition's true runs (start: the first instant it holds;
// end: the first instant it no longer does; a run still true at the newest point lasts
// until now, the values holding as stepped) and reconciles them with the stored episodes:
//   - a run long enough with no episode of the template on the asset over it: created
//     (closed when the run has ended, its captures computed; open otherwise);
//   - an open episode the trigger opened whose run has ended: closed at the run's end;
//   - anything else is left as it is: an episode a person edited, voided or created by
//     hand over the run stays, so manual edits survive re-evaluation.
// A run still too short waits on a timer for the instant it becomes long enough, which is
// what opens a live episode within milliseconds of the duration elapsing (bench/episodes.ts).
//
// A trigger saved over existing data (a new template with a trigger, or a new version of
// one) also looks back: each of its targets is evaluated once over the last BACKFILL_NS, in
// the background like any dirty target, so the past episodes of the condition open (and
// close) as a late point would have opened them. Bounded: at most that span, one window
// per target, and never at start (the templates loaded at start are not new).
import type { ServiceContext } from '../service-context.js';
import type { CommitSource, LiveGroup } from '../reads/live/commit-source.js';
import { readInput, emptyColumns } from '../calc/engine/input-read.js';
import { RegistryView } from '../calc/rules/rule-scope.js';
import type { EvaluationGrid, PointColumns } from '../calc/expression/index.js';
import type { ReadView } from '../storage/series-store.js';
import { onModelCommit } from '../model/tx-log.js';
import { nowNs } from '../clock.js';
import { isServiceError } from '../errors.js';
import { triggeredTemplates } from './episode-templates.js';
import { closeEpisode, createEpisode, toEpisode, EPISODE_SELECT, type Capture, type Episode } from './episode-store.js';
import { targetsOf, type TriggerTarget } from './trigger-targets.js';

/** The shortest look-back of an evaluation before the earliest changed point. */
const MIN_LOOK_BACK_NS = 3_600_000_000_000n;
/** How far back a run still true at the window's start is followed to find its start. */
const MAX_LOOK_BACK_NS = 7n * 86_400_000_000_000n;
/** Longest window one evaluation covers (the compiled plans take offsets below 2^53 ns, about 104 days). */
const MAX_WINDOW_NS = 90n * 86_400_000_000_000n;
/** How far back a newly saved trigger looks for its past episodes (within one evaluation window). */
export const BACKFILL_NS = 30n * 86_400_000_000_000n;
/** Model changes after which the targets are rebuilt. */
const MODEL_KINDS = new Set(['episode-template', 'asset', 'attribute', 'binding', 'template']);
const TRIGGER_PRINCIPAL = 'episode-trigger';
/** The triggers' name among the commit feed's clients (each watches its own series). */
const WATCH_CLIENT = 'episode-triggers';
/** Latencies kept for the benchmark (ns from "long enough" to the episode committed). */
const LATENCIES_KEPT = 10_000;

interface Run { start: bigint; end: bigint | null }

export class EpisodeTriggers {
  private targets = new Map<string, TriggerTarget>();
  private bySeries = new Map<string, TriggerTarget[]>();
  private readonly dirty = new Map<string, bigint>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private running: Promise<void> | null = null;
  private reloadTimer: NodeJS.Timeout | null = null;
  private reloading: Promise<void> = Promise.resolve();
  private closed = false;
  /** The triggered template versions of the last reload (`id@version`); null before the first. */
  private seen: Set<string> | null = null;
  private readonly unsubscribe: Array<() => void> = [];
  /** ns from the instant a live run became long enough to its episode's commit. */
  readonly openLatencies: number[] = [];

  constructor(private readonly service: ServiceContext, private readonly source: CommitSource | null, private readonly capture: Capture) {
    if (source) this.unsubscribe.push(source.onCommits((g) => this.onCommits(g)));
    this.unsubscribe.push(onModelCommit((tx) => { if (tx.events.some((e) => MODEL_KINDS.has(e.entity_kind))) this.scheduleReload(); }));
  }

  /** Targets now watched (for tests and diagnostics). */
  get targetCount(): number { return this.targets.size; }

  private scheduleReload(): void {
    if (this.closed || this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => { this.reloadTimer = null; void this.reload(); }, 20);
  }

  /** Rebuilds the targets of every triggered template and the watched series; resolves once ingest reports them. */
  reload(): Promise<void> {
    this.reloading = this.reloading.then(async () => {
      if (this.closed) return;
      try {
        const reg = await RegistryView.load(this.service.db);
        const targets = new Map<string, TriggerTarget>();
        for (const t of await triggeredTemplates(this.service.db)) for (const x of await targetsOf(this.service, t, reg)) targets.set(x.key, x);
        const bySeries = new Map<string, TriggerTarget[]>();
        for (const x of targets.values()) {
          for (const s of x.seriesByRef.values()) if (s !== null) { const l = bySeries.get(s) ?? []; l.push(x); bySeries.set(s, l); }
        }
        for (const [key, timer] of this.timers) if (!targets.has(key)) { clearTimeout(timer); this.timers.delete(key); }
        this.targets = targets;
        this.bySeries = bySeries;
        const versions = new Set([...targets.values()].map((x) => `${x.template.id}@${x.template.version}`));
        if (this.seen !== null) {
          // new triggers backfill: their targets evaluated once over the recent past
          const from = nowNs() - BACKFILL_NS;
          for (const x of targets.values()) if (!this.seen.has(`${x.template.id}@${x.template.version}`)) this.mark(x.key, from);
        }
        this.seen = versions;
        await this.source?.watch(WATCH_CLIENT, [...bySeries.keys()]);
      } catch (e) {
        this.service.log.warn({ err: e }, 'episode triggers: reload failed');
      }
    });
    return this.reloading;
  }

  private onCommits(g: LiveGroup): void {
    for (const c of g.columns) {
      const targets = this.bySeries.get(c.series);
      if (!targets || c.times.length === 0) continue;
      let min = c.times[0];
      for (let i = 1; i < c.times.length; i++) if (c.times[i] < min) min = c.times[i];
      for (const t of targets) this.mark(t.key, min);
    }
  }

  private mark(key: string, fromNs: bigint): void {
    const cur = this.dirty.get(key);
    if (cur === undefined || fromNs < cur) this.dirty.set(key, fromNs);
    this.kick();
  }

  private kick(): void {
    if (this.running || this.closed) return;
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.dirty.size > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.dirty.size > 0 && !this.closed) {
      const [key, changed] = this.dirty.entries().next().value as [string, bigint];
      this.dirty.delete(key);
      const target = this.targets.get(key);
      if (!target) continue;
      try {
        await this.evaluate(target, changed);
      } catch (e) {
        this.service.log.warn({ err: e, template_id: target.template.id, asset_id: target.assetId }, 'episode trigger evaluation failed');
      }
    }
  }

  /** Evaluates one target from `changed` back by the look-back, and reconciles its runs with the episodes. */
  private async evaluate(t: TriggerTarget, changed: bigint): Promise<void> {
    const now = nowNs();
    let back = t.minDurationNs * 2n > MIN_LOOK_BACK_NS ? t.minDurationNs * 2n : MIN_LOOK_BACK_NS;
    let found: { runs: Run[]; startsTrue: boolean };
    let capped = false;
    for (;;) {
      const from = changed - back;
      // late data far in the past: the window ends before now, and a run still true at its end is left for later commits
      capped = now + 1n - from > MAX_WINDOW_NS;
      const to = capped ? from + MAX_WINDOW_NS : now + 1n;
      found = this.service.parts.storage.read((view) => runsOf(view, t, from, to));
      if (!found.startsTrue || back >= MAX_LOOK_BACK_NS) break;
      back *= 2n;
    }
    for (const [i, run] of found.runs.entries()) {
      if (capped && run.end === null) continue;
      const startKnown = !(i === 0 && found.startsTrue);
      const long = (run.end ?? now) - run.start >= t.minDurationNs;
      if (!long) {
        if (run.end === null && startKnown) this.wake(t.key, run.start, run.start + t.minDurationNs - now);
        continue;
      }
      const existing = await this.episodesOver(t, run);
      if (existing.length === 0) {
        if (startKnown) await this.open(t, run, now);
        continue;
      }
      for (const e of existing) {
        if (e.state === 'open' && e.origin === 'trigger' && run.end !== null && e.start_ns === run.start) {
          await this.guard(t, () => closeEpisode(this.service.db, this.who(t), e.id, { end_ns: run.end as bigint }, this.capture));
        }
      }
    }
  }

  private who(t: TriggerTarget) {
    return { principal: TRIGGER_PRINCIPAL, reason: `trigger of episode template ${t.template.name}: ${t.template.trigger?.open_when ?? ''}` };
  }

  private async open(t: TriggerTarget, run: Run, evaluatedAt: bigint): Promise<void> {
    const e = await this.guard(t, () => createEpisode(this.service.db, this.who(t), {
      template_id: t.template.id, assets: [{ role: t.role, asset_id: t.assetId }], start_ns: run.start, end_ns: run.end, origin: 'trigger',
    }, this.capture));
    const due = run.start + t.minDurationNs;
    if (e && run.end === null && evaluatedAt - due < 60_000_000_000n) {
      if (this.openLatencies.length >= LATENCIES_KEPT) this.openLatencies.shift();
      this.openLatencies.push(Number(nowNs() - due));
    }
  }

  /** Runs a change; a rule of the template refusing it (overlap, a required role) is logged, not retried. */
  private async guard<T>(t: TriggerTarget, fn: () => Promise<T>): Promise<T | null> {
    try {
      return await fn();
    } catch (e) {
      if (!isServiceError(e) || e.status >= 500) throw e;
      this.service.log.info({ template_id: t.template.id, asset_id: t.assetId, code: e.code, message: e.message }, 'episode trigger: the template refused the change');
      return null;
    }
  }

  /** Episodes of the template on the asset over the run, void ones included (a voided episode is not opened again). */
  private async episodesOver(t: TriggerTarget, run: Run): Promise<Episode[]> {
    const { rows } = await this.service.db.query<Parameters<typeof toEpisode>[0]>(
      `${EPISODE_SELECT} WHERE e.tx_to IS NULL AND e.episode_id IN (
          SELECT a.episode_id FROM episode_asset a WHERE a.asset_id = $1 AND a.template_id = $2
             AND a.start_ns < COALESCE($4::bigint, 9223372036854775807) AND (a.end_ns IS NULL OR a.end_ns > $3))`,
      [t.assetId, t.template.id, run.start, run.end]);
    return rows.map(toEpisode);
  }

  private wake(key: string, runStart: bigint, inNs: bigint): void {
    const old = this.timers.get(key);
    if (old) clearTimeout(old);
    const ms = Math.max(0, Math.ceil(Number(inNs) / 1e6)) + 1;
    const timer = setTimeout(() => { this.timers.delete(key); this.mark(key, runStart); }, ms);
    timer.unref();
    this.timers.set(key, timer);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const u of this.unsubscribe) u();
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.source?.watch(WATCH_CLIENT, []).catch(() => undefined);
    await this.running;
    await this.reloading;
  }
}

/**
 * The condition's true runs over [from, to): evaluated at `from` and at every input point
 * after it (the inputs step between points, so the truth can change only there).
 * startsTrue: it already held at `from` (the first run started earlier).
 */
export function runsOf(view: ReadView, t: TriggerTarget, from: bigint, to: bigint): { runs: Run[]; startsTrue: boolean } {
  const c = t.checked;
  const cols: PointColumns[] = c.inputs.map((i) => {
    const s = t.seriesByRef.get(i.key) ?? null;
    const type = i.valueType === 'bool' ? 'boolean' : i.valueType === 'enum' ? 'enum' : i.valueType === 'int64' ? 'int64' : i.valueType === 'string' ? 'string' : 'float64';
    return s === null ? emptyColumns(type, from) : readInput(view, s, from - c.lookbackNs, to, Math.max(1, c.lookbackPoints));
  });
  const grid = gridOf(cols, from, to);
  const r = t.plan.evaluate(cols, grid);
  const runs: Run[] = [];
  let open: bigint | null = null;
  let startsTrue = false;
  for (let i = 0; i < grid.count; i++) {
    const at = from + BigInt(grid.tsOffset[i]);
    const truth = r.quality[i] > 0 && r.values[i] !== 0;
    if (i === 0) startsTrue = truth;
    if (truth && open === null) open = at;
    else if (!truth && open !== null) { runs.push({ start: open, end: at }); open = null; }
  }
  if (open !== null) runs.push({ start: open, end: null });
  return { runs, startsTrue };
}

/** `from` and every input point in (from, to), ascending, as offsets from `from`. */
function gridOf(cols: PointColumns[], from: bigint, to: bigint): EvaluationGrid {
  const span = Number(to - from);
  const all: number[] = [0];
  for (const c of cols) {
    const shift = Number(c.tsBase - from);
    for (let k = 0; k < c.count; k++) {
      const off = c.tsOffset[k] + shift;
      if (off > 0 && off < span) all.push(off);
    }
  }
  const sorted = Float64Array.from(all).sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i];
  return { tsBase: from, tsOffset: sorted.subarray(0, n), count: n };
}
