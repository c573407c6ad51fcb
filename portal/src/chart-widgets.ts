// Widgets drawn from reads over the window: sparkline (the render band at the canvas'
// width), xy (one attribute against another, interval averages), heatmap (attributes by
// interval, coloured by average) and the episode Gantt (POST /v1/episodes/query).
import { call, isMissingRoute, ApiError } from './api.js';
import { readBands } from './trend.js';
import { readIntervals } from './reads.js';
import { msToNs, type TimeWindow } from './time.js';
import { PALETTE, attributesOf, canvasIn, formatValue, setState, type WidgetInput, type WidgetView } from './widget-frame.js';

const INK = PALETTE[0];

export class SparklineView implements WidgetView {
  constructor(private readonly input: WidgetInput) { input.tile.dataset.ink = INK; }

  async draw(win: TimeWindow): Promise<void> {
    const a = attributesOf(this.input.resolved)[0];
    if (!a) { setState(this.input.tile, 'empty', 'no attribute to draw'); return; }
    setState(this.input.tile, 'drawing');
    const width = Math.max(50, this.input.body.clientWidth);
    const r = (await readBands([a.attributeId], win.startMs, win.endMs, width)).get(a.attributeId)?.render ?? null;
    const { ctx, w, h } = canvasIn(this.input.body);
    if (!r || r.t_ms.length === 0) { setState(this.input.tile, 'empty', 'no data in the window'); return; }
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < r.t_ms.length; i++) { const a1 = r.v_min[i], b1 = r.v_max[i]; if (a1 !== null) lo = Math.min(lo, a1); if (b1 !== null) hi = Math.max(hi, b1); }
    const span = hi - lo || 1;
    const x = (ms: number) => ((ms - win.startMs) / (win.endMs - win.startMs)) * w;
    const y = (v: number) => 4 + (1 - (v - lo) / span) * (h - 8);
    ctx.strokeStyle = INK; ctx.fillStyle = INK; ctx.lineWidth = 1.5;
    ctx.beginPath();
    for (let i = 0; i < r.t_ms.length; i++) {
      const mn = r.v_min[i], mx = r.v_max[i];
      if (mn === null || mx === null) continue;
      ctx.fillRect(x(r.t_ms[i]), y(mx), 1, Math.max(1, y(mn) - y(mx)));
    }
    ctx.stroke();
    setState(this.input.tile, 'drawn');
  }
  destroy(): void {}
}

export class XyView implements WidgetView {
  constructor(private readonly input: WidgetInput) { input.tile.dataset.ink = INK; }

  async draw(win: TimeWindow): Promise<void> {
    const [ax, ay] = attributesOf(this.input.resolved);
    if (!ax || !ay) { setState(this.input.tile, 'empty', 'an xy plot needs two attributes (x, then y)'); return; }
    setState(this.input.tile, 'drawing');
    const iv = await readIntervals([ax.attributeId, ay.attributeId], win.startMs, win.endMs, 200);
    const xs = iv.get(ax.attributeId) ?? [], ys = iv.get(ay.attributeId) ?? [];
    const pts: Array<[number, number]> = [];
    for (let i = 0; i < Math.min(xs.length, ys.length); i++) { const a = xs[i].twa, b = ys[i].twa; if (a !== null && b !== null) pts.push([a, b]); }
    const { ctx, w, h } = canvasIn(this.input.body);
    if (pts.length === 0) { setState(this.input.tile, 'empty', 'no data in the window'); return; }
    const ext = (k: 0 | 1) => { let lo = Infinity, hi = -Infinity; for (const p of pts) { lo = Math.min(lo, p[k]); hi = Math.max(hi, p[k]); } return [lo, hi - lo || 1]; };
    const [x0, xs1] = ext(0), [y0, ys1] = ext(1);
    ctx.strokeStyle = '#bbb'; ctx.strokeRect(30, 6, w - 36, h - 30);
    ctx.fillStyle = INK;
    for (const [a, b] of pts) ctx.fillRect(30 + ((a - x0) / xs1) * (w - 40) - 2, 8 + (1 - (b - y0) / ys1) * (h - 36) - 2, 4, 4);
    ctx.fillStyle = '#555'; ctx.font = '11px system-ui, sans-serif';
    ctx.fillText(`${ax.label || 'x'}: ${formatValue(x0)}…${formatValue(x0 + xs1)}`, 32, h - 8);
    setState(this.input.tile, 'drawn');
  }
  destroy(): void {}
}

/** Blue (low) to red (high). */
const heat = (f: number) => `hsl(${Math.round(240 * (1 - Math.max(0, Math.min(1, f))))}, 75%, 50%)`;

export class HeatmapView implements WidgetView {
  constructor(private readonly input: WidgetInput) { input.tile.dataset.ink = 'heat'; }

  async draw(win: TimeWindow): Promise<void> {
    const attrs = attributesOf(this.input.resolved);
    if (attrs.length === 0) { setState(this.input.tile, 'empty', 'no attribute to draw'); return; }
    setState(this.input.tile, 'drawing');
    const cols = 48;
    const iv = await readIntervals(attrs.map((a) => a.attributeId), win.startMs, win.endMs, cols);
    const { ctx, w, h } = canvasIn(this.input.body);
    const rowH = (h - 4) / attrs.length, colW = (w - 4) / cols;
    let drawn = 0;
    attrs.forEach((a, r) => {
      const cells = iv.get(a.attributeId) ?? [];
      let lo = Infinity, hi = -Infinity;
      for (const c of cells) if (c.twa !== null) { lo = Math.min(lo, c.twa); hi = Math.max(hi, c.twa); }
      cells.forEach((c, i) => {
        if (c.twa === null) return;
        ctx.fillStyle = heat((c.twa - lo) / (hi - lo || 1));
        ctx.fillRect(2 + i * colW, 2 + r * rowH, Math.ceil(colW), Math.ceil(rowH) - 1);
        drawn++;
      });
    });
    setState(this.input.tile, drawn > 0 ? 'drawn' : 'empty', drawn > 0 ? '' : 'no data in the window');
  }
  destroy(): void {}
}

interface EpisodeBar { name: string; startMs: number; endMs: number | null }

export class EpisodeGanttView implements WidgetView {
  constructor(private readonly input: WidgetInput, private readonly contextAsset: string | null) { input.tile.dataset.ink = PALETTE.slice(0, 4).join(','); }

  async draw(win: TimeWindow): Promise<void> {
    setState(this.input.tile, 'drawing');
    let answer: unknown;
    try {
      answer = await call('POST', '/v1/episodes/query', {
        overlaps: { start_ns: msToNs(win.startMs), end_ns: msToNs(win.endMs) }, limit: 1000,
        ...(this.contextAsset ? { asset: { kind: 'under', content: this.contextAsset } } : {}),
      });
    } catch (e) {
      canvasIn(this.input.body);
      if (isMissingRoute(e)) { setState(this.input.tile, 'empty', 'episodes are not offered by this service yet'); return; }
      setState(this.input.tile, 'error', e instanceof ApiError ? e.message : String(e));
      return;
    }
    const items = (Array.isArray(answer) ? answer : (answer as { items?: unknown[] })?.items ?? []) as Array<Record<string, unknown>>;
    const bars: EpisodeBar[] = items.map((it) => ({
      name: String(it.name ?? it.template ?? 'episode'),
      startMs: Number(it.start_ns) / 1e6, endMs: it.end_ns === null || it.end_ns === undefined ? null : Number(it.end_ns) / 1e6,
    })).filter((b) => Number.isFinite(b.startMs));
    const { ctx, w, h } = canvasIn(this.input.body);
    if (bars.length === 0) { setState(this.input.tile, 'empty', 'no episode in the window'); return; }
    const rowH = Math.min(24, (h - 4) / bars.length);
    const x = (ms: number) => Math.max(0, Math.min(w, ((ms - win.startMs) / (win.endMs - win.startMs)) * w));
    ctx.font = '11px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    bars.forEach((b, i) => {
      const x0 = x(b.startMs), x1 = x(b.endMs ?? win.endMs);
      ctx.fillStyle = PALETTE[i % 4]; ctx.fillRect(x0, 2 + i * rowH, Math.max(2, x1 - x0), rowH - 3);
      ctx.fillStyle = '#fff'; ctx.fillText(b.name, x0 + 4, 2 + i * rowH + rowH / 2, Math.max(0, x1 - x0 - 6));
    });
    setState(this.input.tile, 'drawn');
  }
  destroy(): void {}
}
