// Live points through the service's /v1/stream WebSocket: one socket per page carrying one
// subscription per view (ids chosen here), opened with the session cookie. A dropped socket
// reconnects after a pause and resumes from the last event id it saw, so a short outage
// loses no point (docs/live-updates.md: resume window of 60 s).

export interface LivePoint { tsMs: number; value: number | null; quality: number }
export type LiveListener = (attributeId: string, points: LivePoint[]) => void;

interface Subscription { ids: string[]; listener: LiveListener; lastEventId: string | null }

interface Entry { attribute_id: string; snapshot?: { ts_ns: number; value: unknown; quality: number } | null; points?: Array<{ ts_ns: number; value: unknown; quality: number }> }

const numeric = (v: unknown): number | null => {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v && typeof v === 'object' && 'ordinal' in v) return Number((v as { ordinal: number }).ordinal);
  return null;
};

export class LiveStream {
  private socket: WebSocket | null = null;
  private readonly subs = new Map<string, Subscription>();
  private next = 1;
  private closed = false;
  /** Points received, for the page's own status line and the browser tests. */
  received = 0;

  subscribe(attributeIds: string[], listener: LiveListener): () => void {
    const id = `s${this.next++}`;
    this.subs.set(id, { ids: attributeIds, listener, lastEventId: null });
    this.ensureOpen();
    this.send(id);
    return () => {
      this.subs.delete(id);
      if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: 'unsubscribe', id }));
    };
  }

  close(): void {
    this.closed = true;
    this.socket?.close();
  }

  private ensureOpen(): void {
    if (this.socket || this.closed) return;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/stream`;
    const ws = new WebSocket(url);
    this.socket = ws;
    ws.onopen = () => { for (const id of this.subs.keys()) this.send(id); };
    ws.onmessage = (ev) => this.onMessage(String(ev.data));
    ws.onclose = () => {
      this.socket = null;
      if (!this.closed && this.subs.size > 0) setTimeout(() => this.ensureOpen(), 2_000);
    };
  }

  private send(id: string): void {
    const s = this.subs.get(id);
    if (!s || this.socket?.readyState !== WebSocket.OPEN) return;
    const msg: Record<string, unknown> = { type: 'subscribe', id, resolve: { select: { kind: 'attribute_ids', content: s.ids }, scope: {} } };
    if (s.lastEventId) msg.resume_after = s.lastEventId;
    this.socket.send(JSON.stringify(msg));
  }

  private onMessage(text: string): void {
    let m: { type: string; id?: string; event_id?: string; attributes?: Entry[]; added?: Entry[]; rebound?: Entry[] };
    try { m = JSON.parse(text); } catch { return; }
    const s = m.id ? this.subs.get(m.id) : undefined;
    if (!s) return;
    if (m.event_id) s.lastEventId = m.event_id;
    const deliver = (entries: Entry[] | undefined, initial: boolean) => {
      for (const e of entries ?? []) {
        const raw = initial ? (e.snapshot ? [e.snapshot] : []) : (e.points ?? []);
        const pts = raw.map((p) => ({ tsMs: p.ts_ns / 1e6, value: numeric(p.value), quality: p.quality }));
        if (pts.length === 0) continue;
        if (!initial) this.received += pts.length;
        s.listener(e.attribute_id, pts);
      }
    };
    if (m.type === 'points') deliver(m.attributes, false);
    else if (m.type === 'snapshot') deliver(m.attributes, true);
    else if (m.type === 'resolved') { deliver(m.added, true); deliver(m.rebound, true); }
  }
}

export const live = new LiveStream();
