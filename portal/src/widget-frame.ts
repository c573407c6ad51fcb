// What every drawn widget shares: its tile in the page, the window it shows, and the marks
// the browser tests and the bench read (data-state, data-ink: the colours its data is drawn
// in, so a test can count those pixels on its canvases instead of trusting the DOM).
import type { TimeWindow } from './time.js';
import type { Resolution } from './selectors.js';

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];

export interface Widget { type: string; id: string; bindings?: unknown; multistate?: { bands: unknown[] } | null; range?: unknown; time_override?: { start: string; end: string } | null; x?: Record<string, unknown> }

export interface WidgetView {
  /** Reads and draws the window; resolves once the widget's pixels are on its canvases. */
  draw(window: TimeWindow): Promise<void>;
  destroy(): void;
}

export interface WidgetInput { widget: Widget; body: HTMLElement; tile: HTMLElement; resolved: Resolution[] }

export function setState(tile: HTMLElement, state: 'drawing' | 'drawn' | 'empty' | 'placeholder' | 'error', note?: string): void {
  tile.dataset.state = state;
  const n = tile.querySelector('.widget-note');
  if (n) n.textContent = note ?? '';
}

export const attributesOf = (resolved: Resolution[]) => resolved.flatMap((r) => ('attributeId' in r ? [r] : []));
export const unresolvedOf = (resolved: Resolution[]) => resolved.flatMap((r) => ('unresolved' in r ? [r.unresolved] : []));

/** A canvas filling `body`, sized in device pixels; returns its 2D context scaled to CSS pixels. */
export function canvasIn(body: HTMLElement, height?: number): { canvas: HTMLCanvasElement; ctx: CanvasRenderingContext2D; w: number; h: number } {
  let canvas = body.querySelector('canvas.widget-canvas') as HTMLCanvasElement | null;
  if (!canvas) {
    canvas = document.createElement('canvas');
    canvas.className = 'widget-canvas';
    body.appendChild(canvas);
  }
  const w = Math.max(50, body.clientWidth), h = height ?? Math.max(40, body.clientHeight);
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
  canvas.style.width = `${w}px`; canvas.style.height = `${h}px`;
  const ctx = canvas.getContext('2d') as CanvasRenderingContext2D;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return { canvas, ctx, w, h };
}

export function formatValue(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3);
  return v.toFixed(a >= 100 ? 1 : a >= 1 ? 2 : 3);
}
