// One live subscription: a `resolve` object followed as the model and the data change.
// It resolves to the attributes the caller may read and the series bound to each now,
// sends their latest values, then every committed point of those series as the hub
// hands it over, one `points` event per group commit. After a model commit it resolves
// again and reports what changed (`resolved`: attributes added, rebound to another
// series, removed), each added or rebound attribute with its latest value. As in the
// resolved reads, a subscription may ask values in another unit of the same quantity kind
// (`units`) and leave out bad or bad-and-uncertain points (`exclude_quality`). Transports
// (SSE, the WebSocket) implement LiveOutput; docs/live-updates.md is the protocol.
import type { ServiceContext } from '../../service-context.js';
import { ServiceError } from '../../errors.js';
import { nowNs } from '../../clock.js';
import type { ResolveRequest } from '../read-resolution.js';
import type { LiveColumns } from './commit-source.js';
import { pointsText } from './live-format.js';
import { payloads, type PointsPayload, type PointsRange } from './live-bytes.js';
import { RESUME_WINDOW_MS, type LiveHub } from './live-hub.js';
import { UnitsRefused, latestText, resolveTargets, seriesOf, type LiveAccess, type LiveOptions, type Target } from './live-targets.js';

export { MAX_LIVE_ATTRIBUTES, type LiveAccess, type LiveOptions } from './live-targets.js';

/** Bytes a client may leave unread (per connection) before it is cut off as a slow consumer. */
export const LIVE_BACKLOG_LIMIT = 1 << 20;
export const HEARTBEAT_MS = 15_000;
/**
 * Each subscription resolves again at least this often (spread by up to a fifth, so 1,000
 * subscriptions do not all resolve in the same turn): grant changes, revoked tokens and
 * ended sessions do not go through the model's commit feed, and take effect within it.
 */
export const REVALIDATE_MS = 30_000;

export type LiveEvent = 'snapshot' | 'points' | 'resolved' | 'resumed' | 'reset' | 'heartbeat' | 'closing';

/** Where a subscription's events go: an SSE stream, or one subscription id on a WebSocket. */
export interface LiveOutput {
  /** Writes one event; `id` is null for events that are no resume position. `payload` is a JSON object's text. */
  event(type: LiveEvent, id: string | null, payload: string): void;
  /** Writes one `points` event from its payload's bytes, framed in the room around them (see PointsPayload). */
  points(id: string, payload: PointsPayload): void;
  /** Bytes written to this client that it has not taken yet. */
  backlogBytes(): number;
  /** Writes the final `closing` event and closes (the whole connection when the backlog is the cause). */
  end(payload: string, wholeConnection: boolean): void;
  readonly closed: boolean;
}

const NOT_BEGUN: LiveOutput = { event: () => undefined, points: () => undefined, backlogBytes: () => 0, end: () => undefined, closed: true };

/** Rejects what a live subscription cannot honour (it follows the current model and the newest data). */
export function checkLiveResolve(req: ResolveRequest, field = 'resolve'): void {
  if (req.as_of_ns != null) throw new ServiceError('invalid-request', `${field}.as_of_ns: a live subscription follows the current model; omit as_of_ns or use null`, { errors: [{ field: `${field}.as_of_ns`, problem: 'not allowed on a live subscription' }] });
  if (req.range != null) throw new ServiceError('invalid-request', `${field}.range: a live subscription starts now; omit range or use null`, { errors: [{ field: `${field}.range`, problem: 'not allowed on a live subscription' }] });
}

export class LiveSubscription {
  private targets: Target[] = [];
  private bySeries = new Map<string, Target[]>();
  /** Identifies what this subscription's `points` bodies hold (its targets and filters); see shareKey(). */
  private installedKey = '';
  /** Whether a target may still hold a dedupe point (false once shareKey() found none). */
  private dedupeMaybe = true;
  /** What take() gathered for the next `points` event: each entry's head, and its points' range in the hub's arena. */
  private pendingHeads: Uint8Array[] = [];
  private pendingRanges: number[] = [];
  private attached = false;
  private closed = false;
  private refreshing = false;
  private refreshAgain = false;
  private heartbeat: NodeJS.Timeout | null = null;
  private revalidate: NodeJS.Timeout | null = null;
  private prepared: { targets: Target[]; modelTx: bigint } | null = null;
  private out: LiveOutput = NOT_BEGUN;
  private readonly service: ServiceContext;

  constructor(
    private readonly hub: LiveHub,
    private readonly access: LiveAccess,
    private readonly req: ResolveRequest,
    private readonly onClosed: () => void = () => undefined,
    private readonly options: LiveOptions = {},
  ) {
    this.service = hub.service;
  }

  /**
   * Resolves and makes ingest report the series; nothing is sent yet. Throws ServiceError
   * for a request that cannot be served (the route answers it as an HTTP error, the
   * WebSocket as a per-subscription error). Follow with begin(), or abandon().
   */
  async prepare(): Promise<void> {
    const r = await resolveTargets(this.service, this.access, this.req, this.options);
    await this.hub.retain(seriesOf(r.targets));
    this.prepared = r;
    if (this.closed) this.hub.release(seriesOf(r.targets));
  }

  /** Gives the series back when begin() will not be called (the client left meanwhile). */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.prepared) this.hub.release(seriesOf(this.prepared.targets));
    this.prepared = null;
  }

  /**
   * Starts following and sends the initial values, or, with `resumeAfter` an event id
   * still in the hub's ring, the events missed since (see live-hub.ts).
   */
  begin(out: LiveOutput, resumeAfter: string | null): void {
    if (this.closed || !this.prepared) return;
    this.out = out;
    const { targets, modelTx } = this.prepared;
    this.prepared = null;
    const series = seriesOf(targets);
    this.install(targets);
    this.hub.attach(this, this.bySeries.keys());
    this.attached = true;
    this.heartbeat = setInterval(() => {
      if (!out.closed) out.event('heartbeat', null, `{"now_ns":${nowNs()},"position":"${this.hub.position()}"}`);
      this.checkBacklog();
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
    this.revalidate = setInterval(() => this.refresh(), REVALIDATE_MS + Math.floor(Math.random() * REVALIDATE_MS / 5));
    this.revalidate.unref();
    const after = resumeAfter === null ? null : this.hub.resumable(resumeAfter, series);
    if (after !== null) {
      const list = targets.map((t) => `${t.head}"value_type":${JSON.stringify(t.valueType)}}`).join(',');
      out.event('resumed', null, `{"after":${JSON.stringify(resumeAfter)},"model_tx":${modelTx},"attributes":[${list}]}`);
      const wanted = new Set(this.bySeries.keys());
      for (const g of this.hub.replay(after, wanted)) {
        this.hub.arena.reset();
        for (const c of g.columns) this.take(c.series, [c]);
        this.flush(`${this.hub.boot}-${g.seq}`);
      }
      this.checkBacklog();
      return;
    }
    if (resumeAfter !== null) {
      out.event('reset', null, `{"reason":"resume-unavailable","detail":${JSON.stringify(`events after ${resumeAfter} are no longer held (the resume window is ${RESUME_WINDOW_MS / 1000} s and bounded in size, and ends at a restart); the initial values follow`)}}`);
    }
    const entries = this.snapshots(targets);
    out.event('snapshot', this.hub.position(), `{"model_tx":${modelTx},"attributes":[${entries.join(',')}]}`);
    this.checkBacklog();
  }

  /**
   * The key of the `points` bodies this subscription would build: equal keys, equal bodies
   * (the same targets, series and filters); null while an initial value still awaits its
   * first later point (dedupe), which makes its body its own.
   */
  shareKey(): string | null {
    if (this.dedupeMaybe) {
      for (const t of this.targets) if (t.dedupe !== null) return null;
      this.dedupeMaybe = false; // dedupe points are only set with the initial values: none until the next ones
    }
    return this.installedKey;
  }

  /**
   * Called by the hub for each group: the columns of one series this subscription follows,
   * written into the hub's arena (once per formatting, shared with other subscriptions).
   */
  take(series: string, cols: LiveColumns[]): void {
    const targets = this.bySeries.get(series);
    if (!targets) return;
    const arena = this.hub.arena;
    for (const t of targets) {
      for (const c of cols) {
        let r: PointsRange;
        const d = t.dedupe;
        if (d !== null) {
          // The initial value sent may come again in the first group after it: leave it out once.
          let skip = -1, later = false;
          for (let i = 0; i < c.times.length; i++) {
            if (c.times[i] === d.ts && skip < 0) skip = i;
            if (c.times[i] > d.ts) later = true;
          }
          if (skip >= 0 && pointsText(slice(c, skip), t.valueType, t.enumSetId, t.filter).text === `[${d.text}]`) {
            r = arena.own(c, t.valueType, t.enumSetId, t.filter, skip);
          } else r = arena.shared(c, t.valueType, t.enumSetId, t.filter, t.formatKey);
          if (later) t.dedupe = null;
        } else r = arena.shared(c, t.valueType, t.enumSetId, t.filter, t.formatKey);
        if (r.count > 0) { this.pendingHeads.push(t.pointsHead); this.pendingRanges.push(r.start, r.end); }
      }
    }
  }

  /**
   * Sends what take() gathered as one `points` event with id `id`; returns its payload
   * (valid until the next one is composed), or null when nothing was gathered.
   */
  flush(id: string): PointsPayload | null {
    const heads = this.pendingHeads;
    if (heads.length === 0) return null;
    const ranges = this.pendingRanges;
    const from = this.hub.arena.sink.buf;
    payloads.begin();
    for (let k = 0; k < heads.length; k++) payloads.entry(heads[k], from, ranges[2 * k], ranges[2 * k + 1]);
    const payload = payloads.end();
    this.pendingHeads = [];
    this.pendingRanges = [];
    this.send(id, payload);
    return payload;
  }

  /** Sends a `points` payload (composed by this subscription or by one with the same share key). */
  send(id: string, payload: PointsPayload | null): void {
    if (payload === null || this.closed) return;
    if (this.out.closed) { this.close(null, ''); return; }
    this.out.points(id, payload);
    this.checkBacklog();
  }

  /** Resolves again (after a model commit) and reports what changed. */
  refresh(): void {
    if (this.closed || !this.attached) return;
    if (this.refreshing) { this.refreshAgain = true; return; }
    this.refreshing = true;
    (async () => {
      do {
        this.refreshAgain = false;
        await this.refreshOnce();
      } while (this.refreshAgain && !this.closed);
    })().catch((e: unknown) => {
      this.service.log.warn({ err: e }, 'live subscription: resolving again after a model change failed; following the previous resolution');
    }).finally(() => { this.refreshing = false; });
  }

  private async refreshOnce(): Promise<void> {
    let next: { targets: Target[]; modelTx: bigint };
    try {
      next = await resolveTargets(this.service, this.access, this.req, this.options);
    } catch (e) {
      if (e instanceof ServiceError && e.code === 'read-too-large') {
        // The scope grew past the limit: say so and stop rather than follow part of it.
        this.close('scope-too-large', e.message);
        return;
      }
      if (e instanceof ServiceError && e.code === 'unauthenticated') {
        this.close('unauthenticated', e.message);
        return;
      }
      if (e instanceof UnitsRefused) {
        // An attribute that entered the scope cannot be given in the requested unit: say so and stop.
        this.close('units-incompatible', e.message);
        return;
      }
      throw e;
    }
    const newSeries = seriesOf(next.targets);
    await this.hub.retain(newSeries);
    if (this.closed) { this.hub.release(newSeries); return; }
    const old = new Map(this.targets.map((t) => [t.attributeId, t]));
    const added: Target[] = [], rebound: Array<[Target, Target]> = [], removed: Target[] = [];
    for (const t of next.targets) {
      const o = old.get(t.attributeId);
      if (!o) added.push(t);
      else if (o.series !== t.series) rebound.push([t, o]);
      else t.dedupe = o.dedupe;
    }
    const keep = new Set(next.targets.map((t) => t.attributeId));
    for (const o of this.targets) if (!keep.has(o.attributeId)) removed.push(o);
    // Points of groups received under the old resolution go out before the change.
    this.hub.dispatch();
    const oldSeries = [...this.bySeries.keys()];
    for (const s of oldSeries) this.hub.route(this, s, false);
    this.install(next.targets);
    for (const s of this.bySeries.keys()) this.hub.route(this, s, true);
    this.hub.release(seriesOf(old.values()));
    if (added.length === 0 && rebound.length === 0 && removed.length === 0) return;
    const addedText = this.snapshots(added);
    const reboundText = this.snapshots(rebound.map(([t]) => t)).map((s, i) => `${s.slice(0, -1)},"previous_series":${JSON.stringify(rebound[i][1].series)}}`);
    const removedText = removed.map((t) => `{"attribute_id":"${t.attributeId}","path":${JSON.stringify(t.path)}}`);
    this.out.event('resolved', this.hub.position(), `{"model_tx":${next.modelTx},"added":[${addedText.join(',')}],"rebound":[${reboundText.join(',')}],"removed":[${removedText.join(',')}]}`);
    this.checkBacklog();
  }

  /**
   * Stops following. With a code, a final `closing` event says why (`slow-consumer` closes
   * the whole connection: the backlog is the connection's).
   */
  close(code: string | null, message: string, extra = ''): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.revalidate) clearInterval(this.revalidate);
    if (this.prepared) { this.hub.release(seriesOf(this.prepared.targets)); this.prepared = null; }
    if (this.attached) {
      this.hub.detach(this, this.bySeries.keys());
      this.hub.release(seriesOf(this.targets));
      this.attached = false;
    }
    if (code !== null && !this.out.closed) this.out.end(`{"code":"${code}","error":${JSON.stringify(message)}${extra}}`, code === 'slow-consumer' || code === 'shutting-down');
    this.onClosed();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private checkBacklog(): void {
    if (this.closed) return;
    if (this.out.closed) { this.close(null, ''); return; }
    const backlog = this.out.backlogBytes();
    if (backlog > LIVE_BACKLOG_LIMIT) {
      this.close('slow-consumer', `the client left ${backlog} bytes unread, more than the limit of ${LIVE_BACKLOG_LIMIT}; read faster or subscribe to fewer attributes, then subscribe again (with the last event id to resume)`,
        `,"backlog_bytes":${backlog},"limit_bytes":${LIVE_BACKLOG_LIMIT}`);
    }
  }

  private install(targets: Target[]): void {
    this.targets = targets;
    this.dedupeMaybe = true;
    this.installedKey = targets.map((t) => `${t.attributeId}:${t.series}:${t.formatKey}`).join(',');
    this.bySeries = new Map();
    for (const t of targets) {
      if (t.series === null) continue;
      const list = this.bySeries.get(t.series);
      if (list) list.push(t); else this.bySeries.set(t.series, [t]);
    }
  }

  /** `{…, "snapshot": point or null}` per target, read now; sets each target's dedupe point. */
  private snapshots(targets: Target[]): string[] {
    if (targets.length === 0) return [];
    this.dedupeMaybe = true;
    return this.service.parts.storage.read((view) => targets.map((t) => {
      const text = latestText(view, t);
      t.dedupe = text === null ? null : text;
      return `${t.head}"snapshot":${text === null ? 'null' : text.text}}`;
    }));
  }
}

/** One point's columns. */
function slice(c: LiveColumns, i: number): LiveColumns {
  return { series: c.series, times: c.times.subarray(i, i + 1), values: c.values.slice(i, i + 1) as LiveColumns['values'], quality: c.quality.subarray(i, i + 1) };
}
