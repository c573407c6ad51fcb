// The DisplayDocument as the domain reads it. The HTTP layer validates documents against
// the spec's schema (src/http/routes/displays/schemas.ts); this side only names the parts
// it interprets and leaves the rest (x bags, grid, link, unknown kinds) untouched.
export type TimeText = string | number | bigint;

export type AttributeSelector =
  | { kind: 'template-relative'; name: string }
  | { kind: 'attribute-id'; attribute_id: string }
  | { kind: 'unresolved'; name: string; reason: string };

export interface TrendTrace {
  attribute: AttributeSelector;
  continuity: string;
  label: string;
  limits?: unknown;
  pen: { glyph: string; token: string };
  quantity_kind_id?: string | null;
  scale_group: string;
  unit_id?: string | null;
}

export type WidgetRange =
  | { type: string; start: TimeText; end: TimeText }
  | { type: string; last: string | number | bigint }
  | { type: string; anchor: unknown; resolved?: unknown };

export interface Widget {
  type: string;
  id: string;
  bindings?: unknown;
  layer?: string | null;
  multistate?: { bands: unknown[] } | null;
  range?: WidgetRange;
  time_override?: { start: TimeText; end: TimeText } | null;
  [member: string]: unknown;
}

export type DocTimezone = { mode: 'automatic' } | { mode: 'explicit'; timezone: string };

export interface DisplayDocument {
  kind: 'display' | 'playlist' | 'session';
  meta: { layout: string; name: string; description?: string | null; form_factors?: string[]; template?: string | null };
  service_display: string;
  layers?: Array<{ id: string; name: string; visible: unknown }>;
  priority_order?: string[];
  scale_groups?: Array<{ id: string; min: number | null; max: number | null; mode: string }>;
  time?: { start: string; end: string; navigator: { visible: boolean }; timezone: DocTimezone };
  widgets?: Widget[];
  x?: Record<string, unknown>;
}

/** One attribute selector inside a document, with the JSON pointer (RFC 6901) of where it sits. */
export interface SelectorSite {
  widgetIndex: number;
  widgetId: string;
  pointer: string;
  selector: AttributeSelector;
  /** The trend trace holding it, when it is one. */
  trace: TrendTrace | null;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function isSelector(v: unknown): v is AttributeSelector {
  if (!isObject(v)) return false;
  if (v.kind === 'template-relative') return typeof v.name === 'string';
  if (v.kind === 'attribute-id') return typeof v.attribute_id === 'string';
  if (v.kind === 'unresolved') return typeof v.name === 'string' && typeof v.reason === 'string';
  return false;
}

/**
 * Every selector of the document's widgets, in document order. Trend bindings hold them at
 * `traces[].attribute`; any other kind's bindings at `attribute` or `attributes[]` (the
 * convention the portal writes for value tiles, tables, xy and the rest).
 */
export function selectorSites(doc: DisplayDocument): SelectorSite[] {
  const out: SelectorSite[] = [];
  const widgets = doc.widgets ?? [];
  for (let i = 0; i < widgets.length; i++) {
    const w = widgets[i];
    const b = w.bindings;
    if (!isObject(b)) continue;
    const base = `/widgets/${i}/bindings`;
    if (Array.isArray(b.traces)) {
      b.traces.forEach((t, j) => {
        if (isObject(t) && isSelector(t.attribute)) out.push({ widgetIndex: i, widgetId: w.id, pointer: `${base}/traces/${j}/attribute`, selector: t.attribute, trace: t as unknown as TrendTrace });
      });
    }
    if (isSelector(b.attribute)) out.push({ widgetIndex: i, widgetId: w.id, pointer: `${base}/attribute`, selector: b.attribute, trace: null });
    if (Array.isArray(b.attributes)) {
      b.attributes.forEach((s, j) => { if (isSelector(s)) out.push({ widgetIndex: i, widgetId: w.id, pointer: `${base}/attributes/${j}`, selector: s, trace: null }); });
    }
  }
  return out;
}

/** Reads or replaces the value at a JSON pointer of the document (pointers this module made: no escapes). */
export function atPointer(doc: unknown, pointer: string, replace?: unknown): unknown {
  const parts = pointer.split('/').slice(1);
  let cur: unknown = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    cur = (cur as Record<string, unknown>)[parts[i]];
    if (typeof cur !== 'object' || cur === null) return undefined;
  }
  const last = parts[parts.length - 1];
  const holder = cur as Record<string, unknown>;
  if (replace !== undefined) holder[last] = replace;
  return holder[last];
}
