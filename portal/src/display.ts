// A display drawn in the page: its widgets laid out on the grid, each with its renderer,
// under the time bar. Kinds without a renderer get a placeholder tile that names the kind
// (spec: unknown kinds are kept and shown, never an error). When every widget has drawn,
// the page sets the performance mark `display-drawn`, which the bench reads against the
// navigation's start.
import { resolveSelectors, selectorsOf } from './selectors.js';
import { resolveWindow, TimeExpressionError, type TimeWindow } from './time.js';
import { TimeBar } from './time-bar.js';
import { TrendView } from './trend.js';
import { BarView, BulletView, StateIndicatorView, TableView, ValueTileView } from './point-widgets.js';
import { EpisodeGanttView, HeatmapView, SparklineView, XyView } from './chart-widgets.js';
import { attributesOf, setState, unresolvedOf, type Widget, type WidgetInput, type WidgetView } from './widget-frame.js';

export interface DisplayDocument {
  kind: string;
  meta: { name: string; layout: string; description?: string | null };
  time?: { start: string; end: string; navigator?: { visible: boolean } };
  widgets: Widget[];
}

export interface DrawnDisplay { views: Map<string, WidgetView>; timeBar: TimeBar; drawn: Promise<void> }

function viewFor(kind: string, input: WidgetInput, contextAsset: string | null): WidgetView | null {
  switch (kind) {
    case 'trend': return new TrendView(input);
    case 'value-tile': return new ValueTileView(input);
    case 'sparkline': return new SparklineView(input);
    case 'bullet': return new BulletView(input);
    case 'table': return new TableView(input);
    case 'state-indicator': return new StateIndicatorView(input);
    case 'episode-gantt': return new EpisodeGanttView(input, contextAsset);
    case 'xy': return new XyView(input);
    case 'bar': return new BarView(input);
    case 'heatmap': return new HeatmapView(input);
    default: return null;
  }
}

/** Grid placement from the widget's `grid` ({x, y, w, h} or {col, row, width, height}), in 12 columns. */
function place(tile: HTMLElement, grid: unknown): void {
  if (!grid || typeof grid !== 'object') return;
  const g = grid as Record<string, unknown>;
  const n = (...keys: string[]) => { for (const k of keys) if (typeof g[k] === 'number') return g[k] as number; return null; };
  const x = n('x', 'col', 'column'), y = n('y', 'row'), w = n('w', 'width', 'cols'), h = n('h', 'height', 'rows');
  if (x !== null) tile.style.gridColumnStart = String(x + 1);
  if (y !== null) tile.style.gridRowStart = String(y + 1);
  if (w !== null) tile.style.gridColumnEnd = `span ${w}`;
  if (h !== null) tile.style.gridRowEnd = `span ${h}`;
}

function tileFor(w: Widget): { tile: HTMLElement; body: HTMLElement } {
  const tile = document.createElement('section');
  tile.className = `widget widget-${w.type}`;
  tile.dataset.widgetId = w.id;
  tile.dataset.kind = w.type;
  const head = document.createElement('h3');
  head.textContent = typeof w.x?.title === 'string' ? w.x.title : `${w.type} ${w.id}`;
  const note = document.createElement('p');
  note.className = 'widget-note';
  const body = document.createElement('div');
  body.className = 'widget-body';
  tile.append(head, body, note);
  place(tile, (w as { grid?: unknown }).grid);
  return { tile, body };
}

/** A duration such as `8h` or ns, in ms. */
function durationMs(last: unknown): number | null {
  if (typeof last === 'number') return last / 1e6;
  if (typeof last !== 'string') return null;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(last);
  if (!m) return null;
  return Number(m[1]) * { ms: 1, s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8 }[m[2] as 'ms'];
}

const timeText = (v: unknown) => String(v);

/**
 * The window a widget shows: its `range` (start and end, the last duration, or an anchored
 * window the service resolved), else its `time_override`, else the display's. An anchored
 * window that did not resolve is an error naming the reason, never the display's window.
 */
export function windowOf(w: Widget, display: TimeWindow): TimeWindow {
  const r = w.range as Record<string, unknown> | undefined;
  if (r && typeof r === 'object') {
    if ('anchor' in r) {
      const res = r.resolved as { state: string; start?: unknown; end?: unknown; reason?: string } | null | undefined;
      if (!res) throw new TimeExpressionError('the anchored window has not been resolved by the service');
      if (res.state !== 'resolved') throw new TimeExpressionError(`the anchored window cannot be resolved: ${res.reason ?? 'no reason given'}`);
      return resolveWindow(timeText(res.start), timeText(res.end));
    }
    if ('last' in r) {
      const ms = durationMs(r.last);
      if (ms === null) throw new TimeExpressionError(`range.last ${String(r.last)} is not a duration`);
      const now = Date.now();
      return { startMs: now - ms, endMs: now, live: true };
    }
    if ('start' in r && 'end' in r) return resolveWindow(timeText(r.start), timeText(r.end));
  }
  if (w.time_override) return resolveWindow(timeText(w.time_override.start), timeText(w.time_override.end));
  return display;
}

export async function drawDisplay(root: HTMLElement, doc: DisplayDocument, opts: { contextAsset: string | null; start?: string; end?: string }): Promise<DrawnDisplay> {
  const start = opts.start ?? doc.time?.start ?? '*-8h', end = opts.end ?? doc.time?.end ?? '*';
  const grid = document.createElement('div');
  grid.className = `display-grid layout-${doc.meta.layout}`;
  const views = new Map<string, WidgetView>();
  const prepared = await Promise.all(doc.widgets.map(async (w) => {
    const { tile, body } = tileFor(w);
    grid.appendChild(tile);
    const slots = selectorsOf(w.bindings);
    const resolved = await resolveSelectors(slots, opts.contextAsset);
    return { w, tile, body, resolved };
  }));
  const firstTrendAttr = prepared.flatMap((p) => (p.w.type === 'trend' ? attributesOf(p.resolved) : []))[0]?.attributeId ?? null;
  const widgetOf = new Map(prepared.map((p) => [p.w.id, p.w]));
  /** Draws one widget in its window; a failure (a read refused, a window that cannot be) stays on its tile. */
  const drawIn = async (id: string, tile: HTMLElement, win: TimeWindow): Promise<void> => {
    const view = views.get(id);
    if (!view) return;
    try {
      await view.draw(windowOf(widgetOf.get(id) as Widget, win));
    } catch (e) {
      setState(tile, 'error', e instanceof Error ? e.message : String(e));
    }
  };
  let timeBar: TimeBar;
  try {
    timeBar = new TimeBar({
      start, end, navigatorAttribute: doc.time?.navigator?.visible === false ? null : firstTrendAttr,
      onChange: (win) => { for (const p of prepared) void drawIn(p.w.id, p.tile, win); },
    });
  } catch (e) {
    if (e instanceof TimeExpressionError) { root.replaceChildren(errorNote(`The display's time window: ${e.message}`)); }
    throw e;
  }
  root.replaceChildren(timeBar.el, grid);
  const draws: Array<Promise<void>> = [];
  for (const p of prepared) {
    const input = { widget: p.w, body: p.body, tile: p.tile, resolved: p.resolved };
    const missing = unresolvedOf(p.resolved);
    const view = viewFor(p.w.type, input, opts.contextAsset);
    if (!view) {
      p.body.classList.add('placeholder');
      p.body.textContent = `No renderer for widget kind "${p.w.type}" yet`;
      setState(p.tile, 'placeholder');
      continue;
    }
    views.set(p.w.id, view);
    draws.push(drawIn(p.w.id, p.tile, timeBar.window).then(() => {
      if (missing.length) p.tile.querySelector('.widget-note')?.append(` unresolved: ${missing.join('; ')}`);
    }));
  }
  const drawn = Promise.all(draws).then(() => {
    performance.mark('display-drawn');
    document.body.dataset.displayDrawn = 'true';
    // The navigator's wider read waits for the widgets: it must not delay what the operator came for.
    void timeBar.drawNavigator();
  });
  return { views, timeBar, drawn };
}

export function errorNote(text: string): HTMLElement {
  const p = document.createElement('p');
  p.className = 'error';
  p.textContent = text;
  return p;
}
