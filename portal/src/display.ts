// A display drawn in the page: its widgets laid out on the grid, each with its renderer,
// under the time bar. Kinds without a renderer get a placeholder tile that names the kind
// (spec: unknown kinds are kept and shown, never an error). When every widget has drawn,
// the page sets the performance mark `display-drawn`, which the bench reads against the
// navigation's start.
import { resolveSelectors, selectorsOf, serverResolution } from './selectors.js';
import { msToNs, type TimeWindow } from './time.js';
import { post, isMissingRoute, type BandRender } from './api.js';
import { resolveRange, resolveWindowIn } from './window-resolution.js';
import { TimeBar, type Overview } from './time-bar.js';
import { TrendView } from './trend.js';
import { BarView, BulletView, StateIndicatorView, TableView, ValueTileView } from './point-widgets.js';
import { EpisodeGanttView, HeatmapView, SparklineView, XyView } from './chart-widgets.js';
import { attributesOf, setState, unresolvedOf, type Widget, type WidgetInput, type WidgetView } from './widget-frame.js';

export interface DisplayDocument {
  kind: string;
  meta: { name: string; layout: string; description?: string | null };
  time?: { start: string; end: string; navigator?: { visible: boolean } };
  widgets?: Widget[];
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

/** The window a widget shows: its `range`, else its `time_override`, else the display's. */
async function windowOf(w: Widget, display: TimeWindow, contextAsset: string | null): Promise<TimeWindow> {
  const r = w.range as Record<string, unknown> | undefined;
  if (r && typeof r === 'object') return resolveRange(r, contextAsset);
  if (w.time_override) return resolveWindowIn(String(w.time_override.start), String(w.time_override.end), contextAsset);
  return display;
}

export async function drawDisplay(root: HTMLElement, doc: DisplayDocument, opts: { contextAsset: string | null; displayId: string | null; start?: string; end?: string }): Promise<DrawnDisplay> {
  const start = opts.start ?? doc.time?.start ?? '*-8h', end = opts.end ?? doc.time?.end ?? '*';
  const grid = document.createElement('div');
  grid.className = `display-grid layout-${doc.meta.layout}`;
  const views = new Map<string, WidgetView>();
  const widgets = doc.widgets ?? [];
  const [server, displayWindow] = await Promise.all([
    opts.displayId ? serverResolution(opts.displayId, opts.contextAsset) : Promise.resolve(new Map()),
    resolveWindowIn(start, end, opts.contextAsset).catch((e: unknown) => e as Error),
  ]);
  if (displayWindow instanceof Error) {
    root.replaceChildren(errorNote(`The display's time window: ${displayWindow.message}`));
    throw displayWindow;
  }
  const tiles = widgets.map((w) => tileFor(w));
  const slots = widgets.map((w, i) => selectorsOf(w.bindings, `/widgets/${i}/bindings`));
  const all = await resolveSelectors(slots.flat(), opts.contextAsset, server);
  let at = 0;
  const prepared = widgets.map((w, i) => {
    grid.appendChild(tiles[i].tile);
    const resolved = all.slice(at, at + slots[i].length);
    at += slots[i].length;
    return { w, tile: tiles[i].tile, body: tiles[i].body, resolved };
  });
  const firstTrendAttr = prepared.flatMap((p) => (p.w.type === 'trend' ? attributesOf(p.resolved) : []))[0]?.attributeId ?? null;
  const widgetOf = new Map(prepared.map((p) => [p.w.id, p.w]));
  /** Draws one widget in its window; a failure (a read refused, a window that cannot be) stays on its tile. */
  const drawIn = async (id: string, tile: HTMLElement, win: TimeWindow): Promise<void> => {
    const view = views.get(id);
    if (!view) return;
    try {
      await view.draw(await windowOf(widgetOf.get(id) as Widget, win, opts.contextAsset));
    } catch (e) {
      setState(tile, 'error', e instanceof Error ? e.message : String(e));
    }
  };
  const timeBar = new TimeBar({
    start, end, window: displayWindow, navigatorAttribute: doc.time?.navigator?.visible === false ? null : firstTrendAttr,
    resolve: (a, b) => resolveWindowIn(a, b, opts.contextAsset),
    readOverview: opts.displayId ? (win, width) => navigatorContext(opts.displayId as string, opts.contextAsset, win, width) : undefined,
    onChange: (win) => { for (const p of prepared) void drawIn(p.w.id, p.tile, win); },
  });
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

interface NavigatorContext { overview: { start_ns: number; end_ns: number }; render: Array<{ render: BandRender | null } | null> }

/** The service's overview for a stored display (POST /v1/displays/time/navigator-context): its first trace with data. */
async function navigatorContext(displayId: string, contextAsset: string | null, win: TimeWindow, width: number): Promise<Overview | null> {
  try {
    const r = await post<NavigatorContext>('/v1/displays/time/navigator-context', {
      display_id: displayId, start: msToNs(win.startMs), end: msToNs(win.endMs), width: Math.min(4000, Math.max(1, Math.round(width))), span: 2,
      ...(contextAsset ? { asset_id: contextAsset } : {}),
    });
    const first = r.render.find((x) => x?.render && x.render.t_ms.length > 0)?.render ?? null;
    return { startMs: r.overview.start_ns / 1e6, endMs: r.overview.end_ns / 1e6, render: first };
  } catch (e) {
    if (isMissingRoute(e)) return null;
    throw e;
  }
}

export function errorNote(text: string): HTMLElement {
  const p = document.createElement('p');
  p.className = 'error';
  p.textContent = text;
  return p;
}
