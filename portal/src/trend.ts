// The trend: each trace drawn as the min/max band of POST /v1/read/render at the plot's
// pixel width (one column a pixel, so a 10,000,000-point series costs what 1,000 points
// do), with uPlot. Zoom (drag a range, or the wheel) and pan re-read the band at the new
// window and width instead of stretching the old pixels; live points from /v1/stream are
// appended while the window's end follows the clock.
import uPlot from 'uplot';
import { post, type RenderItem } from './api.js';
import { msToNs, type TimeWindow } from './time.js';
import { live, type LivePoint } from './live.js';
import { PALETTE, attributesOf, setState, type WidgetInput, type WidgetView } from './widget-frame.js';

interface Trace { attributeId: string; label: string; color: string; stepped: boolean; limits: unknown; x: number[]; min: Array<number | null>; max: Array<number | null> }

/** Pen tokens a display author may name (spec: trace `pen.token`): colour names, or c0..c7 for the palette's order. */
const PEN_TOKENS: Record<string, string> = { blue: PALETTE[0], red: PALETTE[1], green: PALETTE[2], purple: PALETTE[3], orange: PALETTE[4], cyan: PALETTE[5], brown: PALETTE[6], pink: PALETTE[7] };
const penColor = (token: unknown, i: number) => {
  if (typeof token === 'string') {
    if (PEN_TOKENS[token]) return PEN_TOKENS[token];
    const m = /^c([0-7])$/.exec(token);
    if (m) return PALETTE[Number(m[1])];
  }
  return PALETTE[i % PALETTE.length];
};

const stepped = uPlot.paths.stepped?.({ align: 1 });
const alpha = (hex: string, a: number) => hex + Math.round(a * 255).toString(16).padStart(2, '0');

interface PendingRead { ids: Set<string>; answer: Promise<Map<string, RenderItem>> }
const pendingReads = new Map<string, PendingRead>();

/**
 * Reads the min/max band of each attribute over the window at `width` columns. Reads asked
 * in the same task for the same window and width travel as one POST /v1/read/render (a
 * display's trends open together): one resolution and one request instead of one a trend,
 * which the read pool then splits over its workers.
 */
export function readBands(ids: string[], startMs: number, endMs: number, width: number): Promise<Map<string, RenderItem>> {
  const w = Math.max(1, Math.round(width));
  const key = `${startMs}|${endMs}|${w}`;
  let p = pendingReads.get(key);
  if (!p) {
    const batch: PendingRead = { ids: new Set(), answer: Promise.resolve(new Map()) };
    batch.answer = new Promise<void>((r) => setTimeout(r, 0)).then(async () => {
      pendingReads.delete(key);
      const items = await post<RenderItem[]>('/v1/read/render', {
        resolve: { select: { kind: 'attribute_ids', content: [...batch.ids] }, scope: {} },
        start_ns: msToNs(startMs), end_ns: msToNs(endMs), width: w, mode: 'minmax-band',
      });
      return new Map(items.map((i) => [i.attribute_id, i]));
    });
    pendingReads.set(key, batch);
    p = batch;
  }
  for (const id of ids) p.ids.add(id);
  return p.answer;
}

/** Horizontal limit lines (hi/lo style numbers in the trace's limits) across the plot. */
function limitLines(limits: unknown): Array<{ name: string; value: number }> {
  if (!limits || typeof limits !== 'object') return [];
  return Object.entries(limits as Record<string, unknown>).flatMap(([name, v]) => (typeof v === 'number' ? [{ name, value: v }] : []));
}

export class TrendView implements WidgetView {
  private readonly traces: Trace[];
  private plot: uPlot | null = null;
  private window: TimeWindow = { startMs: 0, endMs: 1, live: false };
  private unsubscribe: (() => void) | null = null;
  private pending = 0;
  private frame = 0;
  /** Duration of the last re-read and redraw after a zoom or pan (ms), for the bench. */
  lastRedrawMs = 0;

  constructor(private readonly input: WidgetInput, private readonly opts: { height?: number; navigator?: boolean } = {}) {
    this.traces = attributesOf(input.resolved).map((r, i) => ({
      attributeId: r.attributeId, label: r.label || r.attributeId.slice(0, 8), color: penColor(r.pen, i), stepped: r.continuity === 'stepped',
      limits: r.limits, x: [], min: [], max: [],
    }));
    input.tile.dataset.ink = this.traces.map((t) => t.color).join(',');
  }

  async draw(window: TimeWindow): Promise<void> {
    this.window = { ...window };
    if (this.traces.length === 0) { setState(this.input.tile, 'empty', 'no attribute to draw'); return; }
    await this.reread();
    if (!this.unsubscribe) this.unsubscribe = live.subscribe(this.traces.map((t) => t.attributeId), (id, pts) => this.onLive(id, pts));
  }

  /** Zooms or pans to [startMs, endMs): a new band at the plot's width. */
  async zoomTo(startMs: number, endMs: number): Promise<number> {
    const t0 = performance.now();
    this.window = { startMs, endMs, live: false };
    await this.reread();
    this.lastRedrawMs = performance.now() - t0;
    performance.mark(`trend-redrawn:${this.input.widget.id}`, { detail: { ms: this.lastRedrawMs } });
    return this.lastRedrawMs;
  }

  destroy(): void {
    this.unsubscribe?.();
    cancelAnimationFrame(this.frame);
    this.plot?.destroy();
  }

  private width(): number { return Math.max(100, this.input.body.clientWidth); }

  private async reread(): Promise<void> {
    const seq = ++this.pending;
    setState(this.input.tile, 'drawing');
    const plotWidth = this.plot ? this.plot.bbox.width / (devicePixelRatio || 1) : this.width() - 60;
    const bands = await readBands(this.traces.map((t) => t.attributeId), this.window.startMs, this.window.endMs, plotWidth);
    if (seq !== this.pending) return; // a later zoom superseded this read
    let points = 0;
    for (const t of this.traces) {
      const r = bands.get(t.attributeId)?.render ?? null;
      t.x = r ? r.t_ms.map((ms) => ms / 1000) : [];
      t.min = r ? r.v_min : [];
      t.max = r ? r.v_max : [];
      if (!t.label || t.label === t.attributeId.slice(0, 8)) t.label = bands.get(t.attributeId)?.path ?? t.label;
      points += r?.points_scanned ?? 0;
    }
    this.render();
    this.input.tile.dataset.pointsScanned = String(points);
    setState(this.input.tile, this.traces.some((t) => t.x.length > 0) ? 'drawn' : 'empty', this.traces.some((t) => t.x.length > 0) ? '' : 'no data in the window');
  }

  private data(): uPlot.AlignedData {
    const tables = this.traces.map((t) => [t.x, t.max, t.min] as unknown as uPlot.AlignedData);
    const joined = this.traces.length === 1 ? tables[0] : uPlot.join(tables);
    return joined;
  }

  private render(): void {
    const data = this.data();
    if (this.plot) {
      this.plot.setData(data, true);
      return;
    }
    const series: uPlot.Series[] = [{}];
    const bands: uPlot.Band[] = [];
    this.traces.forEach((t, i) => {
      const paths = t.stepped ? stepped : undefined;
      series.push({ label: t.label, stroke: t.color, width: 1.25, spanGaps: false, points: { show: false }, paths });
      series.push({ label: `${t.label} (min)`, stroke: t.color, width: 1, spanGaps: false, points: { show: false }, paths });
      bands.push({ series: [1 + 2 * i, 2 + 2 * i], fill: alpha(t.color, 0.3) });
    });
    const self = this;
    const opts: uPlot.Options = {
      width: this.width(), height: this.opts.height ?? Math.max(120, this.input.body.clientHeight - 30),
      series, bands,
      scales: { x: { time: true, range: () => [self.window.startMs / 1000, self.window.endMs / 1000] } },
      legend: { show: this.traces.length > 0, live: false },
      cursor: { drag: { x: true, y: false, setScale: false } },
      hooks: {
        setSelect: [(u) => {
          if (u.select.width < 3) return;
          const a = u.posToVal(u.select.left, 'x') * 1000, b = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          void self.zoomTo(a, b);
        }],
        draw: [(u) => self.drawLimits(u)],
      },
    };
    this.plot = new uPlot(opts, data, this.input.body);
    // A band is two series (max, min); the legend names each trace once.
    this.plot.root.querySelectorAll<HTMLElement>('.u-legend tr.u-series').forEach((row, i) => { if (i % 2 === 1) row.style.display = 'none'; });
    this.plot.over.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const u = this.plot as uPlot;
      const at = u.posToVal(ev.offsetX, 'x') * 1000;
      const f = ev.deltaY > 0 ? 1.5 : 1 / 1.5;
      void this.zoomTo(at - (at - this.window.startMs) * f, at + (this.window.endMs - at) * f);
    }, { passive: false });
    this.plot.over.addEventListener('dblclick', () => void this.zoomTo(this.window.startMs - (this.window.endMs - this.window.startMs) / 2, this.window.endMs + (this.window.endMs - this.window.startMs) / 2));
  }

  private drawLimits(u: uPlot): void {
    const ctx = u.ctx;
    for (const t of this.traces) {
      for (const { value } of limitLines(t.limits)) {
        const y = u.valToPos(value, 'y', true);
        if (y < u.bbox.top || y > u.bbox.top + u.bbox.height) continue;
        ctx.save();
        ctx.strokeStyle = '#c0392b'; ctx.setLineDash([6, 4]); ctx.lineWidth = 1;
        ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke();
        ctx.restore();
      }
    }
  }

  private onLive(attributeId: string, pts: LivePoint[]): void {
    const t = this.traces.find((x) => x.attributeId === attributeId);
    if (!t) return;
    for (const p of pts) {
      const s = p.tsMs / 1000;
      if (t.x.length > 0 && s <= t.x[t.x.length - 1]) continue; // already drawn by the band
      if (!this.window.live && p.tsMs >= this.window.endMs) continue; // a past window does not grow
      t.x.push(s); t.min.push(p.value); t.max.push(p.value);
      if (this.window.live && p.tsMs > this.window.endMs) {
        const span = this.window.endMs - this.window.startMs;
        this.window.endMs = p.tsMs + 1;
        this.window.startMs = this.window.endMs - span;
      }
    }
    this.input.tile.dataset.livePoints = String(Number(this.input.tile.dataset.livePoints ?? 0) + pts.length);
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.plot?.setData(this.data(), true); });
  }
}
