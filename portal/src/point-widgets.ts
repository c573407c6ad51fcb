// Widgets that show the latest value of their attributes, kept current by live points:
// value tile, bullet, table, state indicator and bar. Each draws on its own canvas.
import { readSnapshots, numericValue } from './reads.js';
import { live } from './live.js';
import { formatTime, type TimeWindow } from './time.js';
import { PALETTE, attributesOf, canvasIn, formatValue, setState, type WidgetInput, type WidgetView } from './widget-frame.js';

interface Latest { attributeId: string; label: string; limits: unknown; value: number | null; tsMs: number | null }

/** A state band: the value's range (or exact value) with its colour and label. */
interface StateBand { min: number | null; max: number | null; value: number | null; color: string; label: string }

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The widget's multistate bands; without any, states from the attribute's limits (lolo, lo, hi, hihi). */
export function stateBands(multistate: { bands: unknown[] } | null | undefined, limits: unknown): StateBand[] {
  const out: StateBand[] = [];
  for (const b of multistate?.bands ?? []) {
    if (!b || typeof b !== 'object') continue;
    const o = b as Record<string, unknown>;
    out.push({
      min: num(o.min ?? o.from), max: num(o.max ?? o.to), value: num(o.value),
      color: typeof o.color === 'string' ? o.color : PALETTE[out.length % PALETTE.length], label: typeof o.label === 'string' ? o.label : `state ${out.length + 1}`,
    });
  }
  if (out.length > 0 || !limits || typeof limits !== 'object') return out;
  const l = limits as Record<string, unknown>;
  const lolo = num(l.lolo ?? l.low_low), lo = num(l.lo ?? l.low), hi = num(l.hi ?? l.high), hihi = num(l.hihi ?? l.high_high);
  if (hihi !== null) out.push({ min: hihi, max: null, value: null, color: '#c0392b', label: 'High high' });
  if (hi !== null) out.push({ min: hi, max: hihi, value: null, color: '#e67e22', label: 'High' });
  if (lolo !== null) out.push({ min: null, max: lolo, value: null, color: '#c0392b', label: 'Low low' });
  if (lo !== null) out.push({ min: lolo, max: lo, value: null, color: '#e67e22', label: 'Low' });
  if (out.length > 0) out.push({ min: null, max: null, value: null, color: '#27ae60', label: 'Normal' });
  return out;
}

export function stateOf(bands: StateBand[], v: number | null): StateBand | null {
  if (v === null) return null;
  for (const b of bands) {
    if (b.value !== null) { if (v === b.value) return b; continue; }
    if ((b.min === null || v >= b.min) && (b.max === null || v < b.max)) return b;
  }
  return null;
}

abstract class LatestValueView implements WidgetView {
  protected readonly latest: Latest[];
  private unsubscribe: (() => void) | null = null;

  constructor(protected readonly input: WidgetInput) {
    this.latest = attributesOf(input.resolved).map((r) => ({ attributeId: r.attributeId, label: r.label, limits: r.limits, value: null, tsMs: null }));
    input.tile.dataset.ink = this.inks().join(',');
  }

  protected inks(): string[] { return [PALETTE[0]]; }
  protected abstract paint(): void;

  async draw(_w: TimeWindow): Promise<void> {
    if (this.latest.length === 0) { setState(this.input.tile, 'empty', 'no attribute to show'); return; }
    setState(this.input.tile, 'drawing');
    const snaps = await readSnapshots(this.latest.map((l) => l.attributeId));
    for (const l of this.latest) {
      const s = snaps.get(l.attributeId);
      l.value = s ? numericValue(s.value) : null;
      l.tsMs = s ? s.ts_ns / 1e6 : null;
    }
    this.paint();
    setState(this.input.tile, this.latest.some((l) => l.value !== null) ? 'drawn' : 'empty', this.latest.some((l) => l.value !== null) ? '' : 'no value yet');
    this.unsubscribe ??= live.subscribe(this.latest.map((l) => l.attributeId), (id, pts) => {
      const p = pts[pts.length - 1];
      for (const l of this.latest) if (l.attributeId === id && (l.tsMs === null || p.tsMs >= l.tsMs)) { l.value = p.value; l.tsMs = p.tsMs; }
      this.input.tile.dataset.livePoints = String(Number(this.input.tile.dataset.livePoints ?? 0) + pts.length);
      this.paint();
      if (this.latest.some((l) => l.value !== null)) setState(this.input.tile, 'drawn');
    });
  }

  destroy(): void { this.unsubscribe?.(); }
}

export class ValueTileView extends LatestValueView {
  protected paint(): void {
    const { ctx, w, h } = canvasIn(this.input.body);
    const l = this.latest[0];
    const state = stateOf(stateBands(this.input.widget.multistate, l.limits), l.value);
    ctx.fillStyle = state?.color ?? PALETTE[0];
    ctx.font = `600 ${Math.min(48, h * 0.45)}px system-ui, sans-serif`;
    ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
    ctx.fillText(formatValue(l.value), w / 2, h * 0.42);
    ctx.fillStyle = '#555'; ctx.font = '12px system-ui, sans-serif';
    ctx.fillText(l.tsMs === null ? l.label : `${l.label} · ${formatTime(l.tsMs)}`, w / 2, h * 0.82);
    this.input.tile.dataset.value = String(l.value);
  }
  protected override inks(): string[] { return [PALETTE[0], '#c0392b', '#e67e22', '#27ae60']; }
}

export class BulletView extends LatestValueView {
  protected paint(): void {
    const { ctx, w, h } = canvasIn(this.input.body);
    const l = this.latest[0];
    const lim = (l.limits ?? {}) as Record<string, unknown>;
    const lo = num(lim.min ?? lim.lolo ?? lim.lo) ?? 0;
    const hi = num(lim.max ?? lim.hihi ?? lim.hi) ?? Math.max(1, (l.value ?? 1) * 1.25);
    const x = (v: number) => 10 + ((v - lo) / (hi - lo || 1)) * (w - 20);
    ctx.fillStyle = '#e8e8e8'; ctx.fillRect(10, h * 0.3, w - 20, h * 0.4);
    if (l.value !== null) { ctx.fillStyle = PALETTE[0]; ctx.fillRect(10, h * 0.4, Math.max(1, Math.min(w - 20, x(l.value) - 10)), h * 0.2); }
    const target = num(lim.target);
    if (target !== null) { ctx.fillStyle = '#222'; ctx.fillRect(x(target) - 1, h * 0.25, 2, h * 0.5); }
    ctx.fillStyle = '#333'; ctx.font = '12px system-ui, sans-serif'; ctx.textBaseline = 'top';
    ctx.fillText(`${l.label}: ${formatValue(l.value)}`, 10, h * 0.75);
  }
}

export class TableView extends LatestValueView {
  protected paint(): void {
    const rowH = 22;
    const { ctx, w } = canvasIn(this.input.body, Math.max(60, (this.latest.length + 1) * rowH + 6));
    ctx.font = '12px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    ctx.fillStyle = '#555';
    ctx.fillText('Attribute', 8, rowH / 2); ctx.fillText('Value', w * 0.55, rowH / 2); ctx.fillText('Time', w * 0.72, rowH / 2);
    this.latest.forEach((l, i) => {
      const y = (i + 1) * rowH + rowH / 2;
      if (i % 2 === 0) { ctx.fillStyle = '#f3f6fa'; ctx.fillRect(0, y - rowH / 2, w, rowH); }
      ctx.fillStyle = '#222'; ctx.fillText(l.label, 8, y, w * 0.5);
      ctx.fillStyle = PALETTE[0]; ctx.fillText(formatValue(l.value), w * 0.55, y);
      ctx.fillStyle = '#555'; ctx.fillText(l.tsMs === null ? '' : formatTime(l.tsMs), w * 0.72, y, w * 0.28);
    });
  }
}

export class StateIndicatorView extends LatestValueView {
  protected paint(): void {
    const { ctx, w, h } = canvasIn(this.input.body);
    const l = this.latest[0];
    const bands = stateBands(this.input.widget.multistate, l.limits);
    const state = stateOf(bands, l.value);
    const r = Math.min(w, h) * 0.3;
    ctx.beginPath(); ctx.arc(w / 2, h * 0.4, r, 0, Math.PI * 2);
    ctx.fillStyle = state?.color ?? '#95a5a6'; ctx.fill();
    ctx.fillStyle = '#222'; ctx.font = '13px system-ui, sans-serif'; ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    ctx.fillText(`${state?.label ?? (bands.length ? 'no state' : 'no states defined')} (${formatValue(l.value)})`, w / 2, h * 0.4 + r + 6);
    this.input.tile.dataset.stateLabel = state?.label ?? '';
  }
  protected override inks(): string[] {
    const l = this.latest[0];
    const colors = stateBands(this.input.widget.multistate, l?.limits).map((b) => b.color);
    return colors.length ? colors : ['#95a5a6'];
  }
}

export class BarView extends LatestValueView {
  protected paint(): void {
    const { ctx, w, h } = canvasIn(this.input.body);
    const vals = this.latest.map((l) => l.value ?? 0);
    const top = Math.max(0, ...vals), bottom = Math.min(0, ...vals);
    const span = top - bottom || 1;
    const bw = (w - 20) / Math.max(1, vals.length);
    const y0 = 10 + ((top - 0) / span) * (h - 40);
    ctx.font = '11px system-ui, sans-serif'; ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    this.latest.forEach((l, i) => {
      const v = l.value ?? 0;
      const y = 10 + ((top - v) / span) * (h - 40);
      ctx.fillStyle = PALETTE[i % PALETTE.length];
      ctx.fillRect(10 + i * bw + bw * 0.15, Math.min(y, y0), bw * 0.7, Math.max(1, Math.abs(y0 - y)));
      ctx.fillStyle = '#333'; ctx.fillText(l.label, 10 + i * bw + bw / 2, h - 26, bw);
    });
  }
  protected override inks(): string[] { return this.latest.map((_l, i) => PALETTE[i % PALETTE.length]); }
}
