// One live subscription: a `resolve` object followed as the model and the data change.
// It resolves to the attributes the caller may read and the series bound to each now,
// sends their latest values, then every committed point of those series as the hub
// hands it over, one `points` event per group commit. After a model commit it resolves
// again and reports what changed (`resolved`: attributes added, rebound to another
// series, removed), each added or rebound attribute with its latest value. Transports
// (SSE, the WebSocket) implement LiveOutput; docs/live-updates.md is the protocol.
import type { ServiceContext } from '../../service-context.js';
import { ServiceError } from '../../errors.js';
import { nowNs } from '../../clock.js';
import { readMeta, readSnapshot } from '../../storage/series-store.js';
import type { ValueType } from '../../storage/encoding/chunk-types.js';
import { resolveRead, type Can, type ResolveRequest } from '../read-resolution.js';
import type { LiveColumns } from './commit-source.js';
import { pointsText } from './live-format.js';
import { RESUME_WINDOW_MS, type LiveHub } from './live-hub.js';

/** Attributes one subscription may follow (a larger scope is refused with 400 naming this limit). */
export const MAX_LIVE_ATTRIBUTES = 10_000;
/** Bytes a client may leave unread (per connection) before it is cut off as a slow consumer. */
export const LIVE_BACKLOG_LIMIT = 1 << 20;
export const HEARTBEAT_MS = 15_000;
/**
 * Each subscription resolves again at least this often (spread by up to a fifth, so 1,000
 * subscriptions do not all resolve in the same turn): grant changes, revoked tokens and
 * ended sessions do not go through the model's commit feed, and take effect within it.
 */
export const REVALIDATE_MS = 30_000;

/**
 * The subscriber's current read permission, asked again at each resolution: null when its
 * credentials no longer authenticate or no longer grant read anywhere.
 */
export type LiveAccess = () => Promise<Can | null>;

export type LiveEvent = 'snapshot' | 'points' | 'resolved' | 'resumed' | 'reset' | 'heartbeat' | 'closing';

/** Where a subscription's events go: an SSE stream, or one subscription id on a WebSocket. */
export interface LiveOutput {
  /** Writes one event; `id` is null for events that are no resume position. `payload` is a JSON object's text. */
  event(type: LiveEvent, id: string | null, payload: string): void;
  /** Bytes written to this client that it has not taken yet. */
  backlogBytes(): number;
  /** Writes the final `closing` event and closes (the whole connection when the backlog is the cause). */
  end(payload: string, wholeConnection: boolean): void;
  readonly closed: boolean;
}

interface Target {
  attributeId: string;
  path: string;
  series: string | null;
  valueType: ValueType | null;
  enumSetId: string | null;
  /** `{"attribute_id":…,"path":…,"series":…,` ready to prefix a member. */
  head: string;
  /** The initial value sent: a committed point equal to it is not sent again. */
  dedupe: { ts: bigint; text: string } | null;
}

const NOT_BEGUN: LiveOutput = { event: () => undefined, backlogBytes: () => 0, end: () => undefined, closed: true };

type Format = (c: LiveColumns, type: ValueType | null, enumSet: string | null) => string;

/** Rejects what a live subscription cannot honour (it follows the current model and the newest data). */
export function checkLiveResolve(req: ResolveRequest, field = 'resolve'): void {
  if (req.as_of_ns != null) throw new ServiceError('invalid-request', `${field}.as_of_ns: a live subscription follows the current model; omit as_of_ns or use null`, { errors: [{ field: `${field}.as_of_ns`, problem: 'not allowed on a live subscription' }] });
  if (req.range != null) throw new ServiceError('invalid-request', `${field}.range: a live subscription starts now; omit range or use null`, { errors: [{ field: `${field}.range`, problem: 'not allowed on a live subscription' }] });
}

export class LiveSubscription {
  private targets: Target[] = [];
  private bySeries = new Map<string, Target[]>();
  private pending: string[] = [];
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
  ) {
    this.service = hub.service;
  }

  /**
   * Resolves and makes ingest report the series; nothing is sent yet. Throws ServiceError
   * for a request that cannot be served (the route answers it as an HTTP error, the
   * WebSocket as a per-subscription error). Follow with begin(), or abandon().
   */
  async prepare(): Promise<void> {
    const r = await this.resolveTargets();
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
        for (const c of g.columns) this.take(c.series, [c], (col, type, enumSet) => pointsText(col, type, enumSet, null).text);
        this.flush(`${this.hub.boot}-${g.seq}`, 0);
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

  /** Called by the hub for each group: the columns of one series this subscription follows. */
  take(series: string, cols: LiveColumns[], format: Format): void {
    const targets = this.bySeries.get(series);
    if (!targets) return;
    for (const t of targets) {
      for (const c of cols) {
        let text: string;
        const d = t.dedupe;
        if (d !== null) {
          let skip = -1, later = false;
          for (let i = 0; i < c.times.length; i++) {
            if (c.times[i] === d.ts && skip < 0) skip = i;
            if (c.times[i] > d.ts) later = true;
          }
          if (skip >= 0 && pointsText({ ...c, times: c.times.subarray(skip, skip + 1), values: c.values.slice(skip, skip + 1) as LiveColumns['values'], quality: c.quality.subarray(skip, skip + 1) }, t.valueType, t.enumSetId, null).text === `[${d.text}]`) {
            const r = pointsText(c, t.valueType, t.enumSetId, (i) => i !== skip);
            text = r.text;
            if (r.count === 0) { if (later) t.dedupe = null; continue; }
          } else text = format(c, t.valueType, t.enumSetId);
          if (later) t.dedupe = null;
        } else text = format(c, t.valueType, t.enumSetId);
        this.pending.push(`${t.head}"points":${text}}`);
      }
    }
  }

  /** Sends what take() gathered for the group `id` as one `points` event. */
  flush(id: string, _durableMs: number): void {
    if (this.pending.length === 0) return;
    const body = `{"attributes":[${this.pending.join(',')}]}`;
    this.pending = [];
    if (this.out.closed) { this.close(null, ''); return; }
    this.out.event('points', id, body);
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
      next = await this.resolveTargets();
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
    this.bySeries = new Map();
    for (const t of targets) {
      if (t.series === null) continue;
      const list = this.bySeries.get(t.series);
      if (list) list.push(t); else this.bySeries.set(t.series, [t]);
    }
  }

  private async resolveTargets(): Promise<{ targets: Target[]; modelTx: bigint }> {
    const can = await this.access();
    if (can === null) throw new ServiceError('unauthenticated', 'the subscription\'s credentials no longer authenticate (logged out, revoked or expired) or no longer grant read');
    const r = await resolveRead(this.service, can, this.req, { atNs: nowNs() });
    if (r.attributes.length > MAX_LIVE_ATTRIBUTES) {
      throw new ServiceError('read-too-large', `resolve: the subscription resolves to ${r.attributes.length} attributes, more than the limit of ${MAX_LIVE_ATTRIBUTES} for one live subscription; narrow select or scope`,
        { limit: MAX_LIVE_ATTRIBUTES, field: 'resolve' });
    }
    const targets = r.attributes.map((a): Target => {
      const seg = a.segments.length > 0 ? a.segments[a.segments.length - 1] : null;
      const series = seg?.seriesId ?? null;
      return {
        attributeId: a.attributeId, path: a.path, series, valueType: seg?.valueType ?? null, enumSetId: a.enumSetId,
        head: `{"attribute_id":"${a.attributeId}","path":${JSON.stringify(a.path)},"series":${series === null ? 'null' : `"${series}"`},`,
        dedupe: null,
      };
    });
    return { targets, modelTx: r.modelTx };
  }

  /** `{…, "snapshot": point or null}` per target, read now; sets each target's dedupe point. */
  private snapshots(targets: Target[]): string[] {
    if (targets.length === 0) return [];
    return this.service.parts.storage.read((view) => targets.map((t) => {
      const p = t.series !== null && readMeta(view, t.series) ? readSnapshot(view, t.series) : null;
      if (p === null) { t.dedupe = null; return `${t.head}"snapshot":null}`; }
      const one = pointsText({ series: t.series as string, times: BigInt64Array.of(p.ts), values: [p.value], quality: Uint32Array.of(p.quality) }, t.valueType, t.enumSetId, null).text;
      const text = one.slice(1, -1);
      t.dedupe = { ts: p.ts, text };
      return `${t.head}"snapshot":${text}}`;
    }));
  }
}

function seriesOf(targets: Iterable<Target>): string[] {
  const out = new Set<string>();
  for (const t of targets) if (t.series !== null) out.add(t.series);
  return [...out];
}
