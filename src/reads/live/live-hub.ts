// The live-update hub: one per service. It receives the commit feed of the series some
// subscription watches (from ingest, commit-source.ts), numbers each group, keeps a
// bounded ring of recent groups for resumption, and hands each group's columns to the
// subscriptions resolved to those series. It tells ingest which series to report (the
// union of every subscription's, plus those of subscriptions closed within the resume
// window), and re-resolves every subscription after a model commit (a rebind, an
// attribute entering or leaving the scope, a grant change).
//
// Event ids are `<boot>-<seq>`: boot is random per process start, seq the hub's group
// number. A subscription may resume after id X when (a) X is of this boot, (b) no group
// after X has left the ring, and (c) each series it resolves to was watched since before
// the group after X (otherwise commits of that series were never reported): then the
// ring's groups after X are replayed. Otherwise it gets a `reset` and fresh initial values.
import { randomBytes } from 'node:crypto';
import type { ServiceContext } from '../../service-context.js';
import { onModelCommit } from '../../model/tx-log.js';
import type { CommitSource, LiveColumns, LiveGroup } from './commit-source.js';
import { PointsArena } from './live-bytes.js';
import type { LiveSubscription } from './live-subscription.js';
import type { BatchResult, PointBatch } from '../../storage/series-store.js';

declare module '../../service-context.js' {
  interface ServiceParts {
    live: LiveHub;
  }
}

/** How long a closed subscription's series stay reported, and how old a resumable group may be. */
export const RESUME_WINDOW_MS = 60_000;
/** Points the resume ring holds at most (about 30-40 MB of columns); older groups leave first. */
export const RING_MAX_POINTS = 1_000_000;
/** A model commit re-resolves subscriptions after this quiet time, so a burst of commits costs one pass. */
const RERESOLVE_DEBOUNCE_MS = 20;
const SWEEP_MS = 5_000;
/** A group older than this on arrival is dispatched with the others queued behind it (see onGroup). */
const BEHIND_MS = 2;

interface RingEntry {
  seq: number;
  receivedMs: number;
  bySeries: Map<string, LiveColumns[]>;
  points: number;
}

export interface LiveHubStats {
  subscriptions: number;
  watchedSeries: number;
  groups: number;
  ringGroups: number;
  ringPoints: number;
}

export class LiveHub {
  readonly boot = randomBytes(4).toString('hex');
  /** The points bytes of the dispatch (or replay) under way: subscriptions take ranges of it. */
  readonly arena = new PointsArena();
  private seq = 0;
  private readonly ring: RingEntry[] = [];
  private ringPoints = 0;
  /** Highest seq that left the ring (resuming after anything lower is impossible). */
  private evictedThrough = 0;
  private readonly subs = new Set<LiveSubscription>();
  private readonly bySeries = new Map<string, Set<LiveSubscription>>();
  /** Series -> number of live subscriptions retaining it. */
  private readonly retained = new Map<string, number>();
  /** Series no subscription retains, still reported until this time (ms) for resumption. */
  private readonly lingering = new Map<string, number>();
  /** Series -> first group seq known to carry its commits (from the watch acknowledgement). */
  private readonly watchedFrom = new Map<string, number>();
  private syncing: Promise<void> | null = null;
  private syncAgain = false;
  private readonly unsubscribeFeed: () => void;
  private readonly unsubscribeStore: () => void;
  private readonly unsubscribeModel: () => void;
  /** Groups received and not yet handed to subscriptions (see dispatch()). */
  private pending: Array<{ seq: number; bySeries: Map<string, LiveColumns[]> }> = [];
  private dispatchQueued = false;
  private readonly sweep: NodeJS.Timeout;
  private reresolve: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(readonly service: ServiceContext, private readonly source: CommitSource) {
    this.unsubscribeFeed = source.onCommits((g) => this.onGroup(g));
    const store = service.parts.storage;
    this.unsubscribeStore = store ? store.onWritten((batches, results) => this.onStoreWrite(batches, results)) : () => undefined;
    this.unsubscribeModel = onModelCommit(() => this.onModelCommit());
    this.sweep = setInterval(() => this.sweepLingering(), SWEEP_MS);
    this.sweep.unref();
  }

  /** The id of the newest group received (what an event sent now is after). */
  position(): string {
    return `${this.boot}-${this.seq}`;
  }

  stats(): LiveHubStats {
    return { subscriptions: this.subs.size, watchedSeries: this.watchedFrom.size, groups: this.seq, ringGroups: this.ring.length, ringPoints: this.ringPoints };
  }

  /** Makes sure ingest reports the series; resolves once it does. */
  async retain(series: Iterable<string>): Promise<void> {
    let changed = false;
    for (const s of series) {
      this.retained.set(s, (this.retained.get(s) ?? 0) + 1);
      if (this.lingering.delete(s)) continue;
      if (!this.watchedFrom.has(s)) changed = true;
    }
    if (changed) await this.syncWatch();
  }

  /** The subscription no longer needs the series: they linger for the resume window. */
  release(series: Iterable<string>): void {
    const until = Date.now() + RESUME_WINDOW_MS;
    for (const s of series) {
      const n = (this.retained.get(s) ?? 0) - 1;
      if (n > 0) { this.retained.set(s, n); continue; }
      this.retained.delete(s);
      this.lingering.set(s, until);
    }
  }

  attach(sub: LiveSubscription, series: Iterable<string>): void {
    // Groups received before the subscription's snapshot or resume go out first, without it.
    this.dispatch();
    this.subs.add(sub);
    for (const s of series) this.route(sub, s, true);
  }

  detach(sub: LiveSubscription, series: Iterable<string>): void {
    for (const s of series) this.route(sub, s, false);
    this.subs.delete(sub);
  }

  /** Adds or removes one series of an attached subscription. */
  route(sub: LiveSubscription, series: string, on: boolean): void {
    let set = this.bySeries.get(series);
    if (on) {
      if (!set) { set = new Set(); this.bySeries.set(series, set); }
      set.add(sub);
    } else if (set) {
      set.delete(sub);
      if (set.size === 0) this.bySeries.delete(series);
    }
  }

  /**
   * Whether the ring holds every group after `eventId` for these series (see the header).
   * Returns the seq to replay after, or null.
   */
  resumable(eventId: string, series: Iterable<string>): number | null {
    const m = /^([0-9a-f]{8})-([0-9]{1,15})$/.exec(eventId);
    if (!m || m[1] !== this.boot) return null;
    const after = Number(m[2]);
    if (after > this.seq || after < this.evictedThrough) return null;
    for (const s of series) {
      const from = this.watchedFrom.get(s);
      if (from === undefined || from > after + 1) return null;
    }
    return after;
  }

  /** The ring's columns of the series after seq `after`, group by group. */
  *replay(after: number, series: ReadonlySet<string>): Generator<{ seq: number; columns: LiveColumns[] }> {
    for (const e of this.ring) {
      if (e.seq <= after) continue;
      const columns: LiveColumns[] = [];
      for (const s of series) { const c = e.bySeries.get(s); if (c) columns.push(...c); }
      if (columns.length > 0) yield { seq: e.seq, columns };
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribeFeed();
    this.unsubscribeStore();
    this.unsubscribeModel();
    clearInterval(this.sweep);
    if (this.reresolve) clearTimeout(this.reresolve);
    for (const s of [...this.subs]) s.close('shutting-down', 'the service is shutting down');
  }

  /** Whether commits of the series are wanted (by a subscription, or lingering for a resume). */
  private wants(series: string): boolean {
    return this.retained.has(series) || this.lingering.has(series) || this.watchedFrom.has(series);
  }

  private onGroup(g: LiveGroup): void {
    const bySeries = new Map<string, LiveColumns[]>();
    let points = 0;
    // The feed's columns are views into one buffer per group: when it also carries other
    // clients' series, ours are copied so the ring does not keep theirs alive for a minute.
    let own = false;
    for (const c of g.columns) if (!this.wants(c.series)) { own = true; break; }
    for (let c of g.columns) {
      // the feed carries every client's series (calculations, episode triggers): keep ours only
      if (!this.wants(c.series)) continue;
      if (own) c = { series: c.series, times: c.times.slice(), values: c.values.slice() as LiveColumns['values'], quality: c.quality.slice() };
      const list = bySeries.get(c.series);
      if (list) list.push(c); else bySeries.set(c.series, [c]);
      points += c.times.length;
    }
    if (bySeries.size === 0) return;
    const seq = ++this.seq;
    this.remember({ seq, receivedMs: Date.now(), bySeries, points });
    this.pending.push({ seq, bySeries });
    // A group that waited to reach this thread means it is behind and more are queued:
    // gather them for one dispatch this turn. Otherwise out at once.
    if (this.dispatchQueued) return;
    if (performance.timeOrigin + performance.now() - g.durableMs < BEHIND_MS) { this.dispatch(); return; }
    this.dispatchQueued = true;
    setImmediate(() => this.dispatch());
  }

  /** A durable write of the main thread's engine: the points of wanted series, minus refusals, as one group. */
  private onStoreWrite(batches: readonly PointBatch[], results: readonly BatchResult[]): void {
    if (this.closed) return;
    const columns: LiveColumns[] = [];
    for (let i = 0; i < batches.length; i++) {
      const b = batches[i];
      const series = String(b.series).toLowerCase();
      if (!this.wants(series)) continue;
      const c = columnsOf(series, b, results[i]?.refusals ?? []);
      if (c.times.length > 0) columns.push(c);
    }
    if (columns.length > 0) this.onGroup({ seq: 0, durableMs: performance.timeOrigin + performance.now(), columns });
  }

  /**
   * Hands the groups received since the last dispatch to their subscriptions: one `points`
   * event per subscription, with the id of the last group. Runs as each group arrives, or
   * once per event-loop turn when behind (onGroup), and before a subscription attaches or changes its series.
   */
  dispatch(): void {
    this.dispatchQueued = false;
    if (this.pending.length === 0) return;
    const groups = this.pending;
    this.pending = [];
    this.arena.reset();
    const touched = new Set<LiveSubscription>();
    /** Subscriptions with the same share key send the payload their first one builds. */
    const leaders = new Map<string, LiveSubscription>();
    const followers = new Map<LiveSubscription, LiveSubscription[]>();
    const following = new Set<LiveSubscription>();
    for (const g of groups) {
      for (const [series, cols] of g.bySeries) {
        const subs = this.bySeries.get(series);
        if (!subs) continue;
        for (const sub of subs) {
          if (!touched.has(sub)) {
            touched.add(sub);
            const key = sub.shareKey();
            const leader = key === null ? undefined : leaders.get(key);
            if (leader === undefined) {
              if (key !== null) leaders.set(key, sub);
            } else {
              const list = followers.get(leader);
              if (list) list.push(sub); else followers.set(leader, [sub]);
              following.add(sub);
              continue;
            }
          }
          if (!following.has(sub)) sub.take(series, cols);
        }
      }
    }
    const id = `${this.boot}-${groups[groups.length - 1].seq}`;
    // Each payload is valid until the next one: its followers get it right after their leader.
    for (const sub of touched) {
      if (following.has(sub)) continue;
      const payload = sub.flush(id);
      const list = followers.get(sub);
      if (list !== undefined && payload !== null) for (const f of list) f.send(id, payload);
    }
  }

  private remember(e: RingEntry): void {
    this.ring.push(e);
    this.ringPoints += e.points;
    const oldest = e.receivedMs - RESUME_WINDOW_MS;
    while (this.ring.length > 1 && (this.ringPoints > RING_MAX_POINTS || this.ring[0].receivedMs < oldest)) {
      const gone = this.ring.shift() as RingEntry;
      this.ringPoints -= gone.points;
      this.evictedThrough = gone.seq;
    }
  }

  private onModelCommit(): void {
    if (this.closed || this.subs.size === 0 || this.reresolve) return;
    this.reresolve = setTimeout(() => {
      this.reresolve = null;
      for (const s of this.subs) s.refresh();
    }, RERESOLVE_DEBOUNCE_MS);
    this.reresolve.unref();
  }

  private sweepLingering(): void {
    const now = Date.now();
    let changed = false;
    for (const [s, until] of this.lingering) {
      if (until > now) continue;
      this.lingering.delete(s);
      changed = true;
    }
    if (changed) this.syncWatch().catch((e: unknown) => this.service.log.warn({ err: e }, 'live updates: updating the watched series failed'));
  }

  /** Sends ingest the watched set (retained + lingering); concurrent calls share one round trip after the current one. */
  private syncWatch(): Promise<void> {
    if (this.syncing) { this.syncAgain = true; return this.syncing; } // its loop runs once more before it resolves
    this.syncing = (async () => {
      do {
        this.syncAgain = false;
        const want = new Set<string>([...this.retained.keys(), ...this.lingering.keys()]);
        await this.source.watch('live-updates', [...want]);
        // Groups received from now on carry every series of `want`.
        for (const s of want) if (!this.watchedFrom.has(s)) this.watchedFrom.set(s, this.seq + 1);
        for (const s of [...this.watchedFrom.keys()]) if (!want.has(s)) this.watchedFrom.delete(s);
      } while (this.syncAgain);
    })().finally(() => { this.syncing = null; });
    return this.syncing;
  }
}

/** Fresh columns of a main-thread write's batch (the caller keeps its arrays), refused points left out. */
function columnsOf(series: string, b: PointBatch, refusals: ReadonlyArray<{ index: number }>): LiveColumns {
  const refused = refusals.length === 0 ? null : new Set(refusals.map((r) => r.index));
  const n = b.times.length;
  const keep: number[] = [];
  for (let i = 0; i < n; i++) if (refused === null || !refused.has(i)) keep.push(i);
  const times = new BigInt64Array(keep.length), quality = new Uint32Array(keep.length);
  const values: unknown[] = new Array(keep.length);
  for (let j = 0; j < keep.length; j++) {
    const i = keep[j];
    times[j] = b.times[i];
    quality[j] = b.quality[i];
    values[j] = b.values[i];
  }
  return { series, times, values, quality };
}
