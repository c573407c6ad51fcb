// The time bar over a display: the window as operators write it (start and end
// expressions), pan left and right by half a window, and the navigator: the first trend
// attribute's band over three windows before and one after (up to now), with the current
// window shaded; a click on it centres the window there.
import { readBands } from './trend.js';
import type { BandRender } from './api.js';
import { formatTime, TimeExpressionError, type TimeWindow } from './time.js';
import { PALETTE } from './widget-frame.js';

export interface TimeBarOptions {
  start: string; end: string;
  /** The window start and end resolve to (the caller resolved it before drawing). */
  window: TimeWindow;
  navigatorAttribute: string | null;
  /** Reads the navigator's overview around the window (default: the first trend attribute's band over 3 windows before, 1 after). */
  readOverview?(w: TimeWindow, width: number): Promise<Overview | null>;
  resolve(start: string, end: string): Promise<TimeWindow>;
  onChange(w: TimeWindow, start: string, end: string): void;
}

export interface Overview { startMs: number; endMs: number; render: BandRender | null }

export class TimeBar {
  readonly el: HTMLElement;
  private readonly startIn: HTMLInputElement;
  private readonly endIn: HTMLInputElement;
  private readonly error: HTMLElement;
  private readonly nav: HTMLCanvasElement;
  /** The range the navigator last drew (clicks map into it). */
  private navSpan: [number, number] = [0, 1];
  window: TimeWindow;

  constructor(private readonly opts: TimeBarOptions) {
    this.el = document.createElement('div');
    this.el.className = 'time-bar';
    this.startIn = input('start', opts.start);
    this.endIn = input('end', opts.end);
    const apply = button('Apply', () => this.apply());
    const back = button('◀', () => this.pan(-0.5));
    const fwd = button('▶', () => this.pan(0.5));
    back.title = 'Half a window back'; fwd.title = 'Half a window forward';
    this.error = document.createElement('span');
    this.error.className = 'error';
    this.nav = document.createElement('canvas');
    this.nav.className = 'navigator';
    this.nav.addEventListener('click', (ev) => this.centreAt(ev.offsetX));
    const form = document.createElement('form');
    form.addEventListener('submit', (ev) => { ev.preventDefault(); this.apply(); });
    form.append(back, label('From', this.startIn), label('to', this.endIn), apply, fwd, this.error);
    this.el.append(form, this.nav);
    this.window = opts.window;
  }

  private apply(): void {
    this.opts.resolve(this.startIn.value, this.endIn.value).then((w) => {
      this.window = w;
      this.error.textContent = '';
      this.opts.onChange(this.window, this.startIn.value, this.endIn.value);
      void this.drawNavigator();
    }, (e: unknown) => {
      this.error.textContent = e instanceof TimeExpressionError ? e.message : String(e instanceof Error ? e.message : e);
    });
  }

  private setExact(startMs: number, endMs: number): void {
    this.startIn.value = new Date(startMs).toISOString();
    this.endIn.value = new Date(endMs).toISOString();
    this.apply();
  }

  private pan(fraction: number): void {
    const span = this.window.endMs - this.window.startMs;
    this.setExact(this.window.startMs + span * fraction, this.window.endMs + span * fraction);
  }

  private defaultRange(): [number, number] {
    const span = this.window.endMs - this.window.startMs;
    return [this.window.startMs - 3 * span, Math.min(Date.now(), this.window.endMs + span)];
  }

  private centreAt(px: number): void {
    const [a, b] = this.navSpan;
    const at = a + (px / this.nav.clientWidth) * (b - a);
    const span = this.window.endMs - this.window.startMs;
    this.setExact(at - span / 2, at + span / 2);
  }

  private async overview(width: number): Promise<Overview | null> {
    const given = this.opts.readOverview ? await this.opts.readOverview(this.window, width) : null;
    if (given || !this.opts.navigatorAttribute) return given;
    const [a, b] = this.defaultRange();
    const r = (await readBands([this.opts.navigatorAttribute], a, b, width)).get(this.opts.navigatorAttribute)?.render ?? null;
    return { startMs: a, endMs: b, render: r };
  }

  async drawNavigator(): Promise<void> {
    const w = Math.max(100, this.nav.clientWidth), h = 36;
    const o = await this.overview(w).catch(() => null);
    const [a, b] = o ? [o.startMs, o.endMs] : this.defaultRange();
    this.navSpan = [a, b];
    const dpr = devicePixelRatio || 1;
    this.nav.width = w * dpr; this.nav.height = h * dpr;
    const ctx = this.nav.getContext('2d') as CanvasRenderingContext2D;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const x = (ms: number) => ((ms - a) / (b - a)) * w;
    ctx.fillStyle = 'rgba(31,119,180,0.15)';
    ctx.fillRect(x(this.window.startMs), 0, Math.max(2, x(this.window.endMs) - x(this.window.startMs)), h);
    ctx.fillStyle = '#666'; ctx.font = '10px system-ui, sans-serif';
    ctx.fillText(formatTime(a), 2, h - 2);
    const r = o?.render;
    if (!r || r.t_ms.length === 0) return;
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < r.t_ms.length; i++) { const m = r.v_min[i], M = r.v_max[i]; if (m !== null) lo = Math.min(lo, m); if (M !== null) hi = Math.max(hi, M); }
    const y = (v: number) => 2 + (1 - (v - lo) / (hi - lo || 1)) * (h - 14);
    ctx.fillStyle = PALETTE[0];
    for (let i = 0; i < r.t_ms.length; i++) {
      const m = r.v_min[i], M = r.v_max[i];
      if (m !== null && M !== null) ctx.fillRect(x(r.t_ms[i]), y(M), 1, Math.max(1, y(m) - y(M)));
    }
    this.nav.dataset.drawn = 'true';
  }
}

function input(name: string, value: string): HTMLInputElement {
  const i = document.createElement('input');
  i.name = name; i.value = value; i.size = 22; i.spellcheck = false;
  return i;
}

function label(text: string, el: HTMLElement): HTMLLabelElement {
  const l = document.createElement('label');
  l.append(text + ' ', el);
  return l;
}

export function button(text: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button'; b.textContent = text;
  b.addEventListener('click', onClick);
  return b;
}
