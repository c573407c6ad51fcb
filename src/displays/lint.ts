// Lint of display documents: what a display author wants to know before operators open
// the display. Facts from the model (attributes by id, templates' definitions, registry
// entries, episodes) are read once for a whole batch of documents (lintFacts), then each
// document is checked in memory (lintDocument), so listing 1,000 displays costs a handful
// of queries, not thousands.
import type { Queryable } from '../model/db.js';
import { sqlTextArray } from '../model/db.js';
import { attributesWhere, effectiveAttributes } from '../model/attributes/effective.js';
import { checkTimezone } from '../model/assets/timezones.js';
import { type DisplayDocument, type Widget, selectorSites } from './display-document.js';
import { finding, type LintFinding } from './lint-codes.js';
import { KNOWN_KINDS, RENDERED_KINDS, DISPLAY_SCHEMA } from './widget-kinds.js';
import { parseTimeExpression, evaluateTime, TimeExpressionError, type TimeExpression, type TimeContext } from './time-expression.js';
import { anchorEpisodeIds, episodeSpans, resolveAnchor } from './anchors.js';

export interface LintFacts {
  /** Existing attributes by id: their effective quantity kind. */
  attributes: Map<string, { quantity_kind_id: string | null }>;
  /** Template name -> its current definitions by name (their quantity kind); absent: no such template. */
  templates: Map<string, Map<string, { quantity_kind_id: string | null }>>;
  /** Registry entries by id: their kind and, for units, their quantity kind. */
  registry: Map<string, { kind: string; kind_id: string | null }>;
  episodes: Awaited<ReturnType<typeof episodeSpans>>;
  nowNs: bigint;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Widgets that show attribute values: one without any selector is worth a warning. */
const DATA_KINDS = new Set(['trend', 'bullet', 'sparkline', 'value-tile', 'table', 'state-indicator', 'xy', 'dot-bubble', 'bar', 'box', 'strip', 'interval-summary', 'heatmap', 'treemap']);

export async function lintFacts(q: Queryable, docs: DisplayDocument[], nowNs: bigint): Promise<LintFacts> {
  const attrIds = new Set<string>();
  const registryIds = new Set<string>();
  const templateNames = new Set<string>();
  const anchors: unknown[] = [];
  for (const d of docs) {
    if (typeof d.meta.template === 'string') templateNames.add(d.meta.template);
    for (const s of selectorSites(d)) {
      if (s.selector.kind === 'attribute-id' && UUID.test(s.selector.attribute_id)) attrIds.add(s.selector.attribute_id.toLowerCase());
      for (const id of [s.trace?.unit_id, s.trace?.quantity_kind_id]) if (typeof id === 'string') registryIds.add(id.toLowerCase());
    }
    for (const w of d.widgets ?? []) if (w.range && 'anchor' in w.range) anchors.push(w.range.anchor);
  }
  const facts: LintFacts = { attributes: new Map(), templates: new Map(), registry: new Map(), episodes: new Map(), nowNs };
  if (attrIds.size > 0) {
    const rows = await attributesWhere(q, null, (a) => `a.attribute_id = ANY(${a.add(sqlTextArray([...attrIds]))}::uuid[])`);
    for (const e of await effectiveAttributes(q, null, rows)) facts.attributes.set(e.attribute_id, { quantity_kind_id: e.quantity_kind_id });
  }
  if (templateNames.size > 0) {
    const { rows } = await q.query<{ template: string; name: string | null; definition: { quantity_kind_id?: string | null } | null }>(
      `SELECT t.name AS template, d.name, d.definition FROM template_version t
         LEFT JOIN attr_def_version d ON d.template_id = t.template_id AND d.tx_to IS NULL
        WHERE t.tx_to IS NULL AND t.name = ANY($1::text[])`, [sqlTextArray([...templateNames])]);
    for (const r of rows) {
      let defs = facts.templates.get(r.template);
      if (!defs) { defs = new Map(); facts.templates.set(r.template, defs); }
      if (r.name !== null) defs.set(r.name, { quantity_kind_id: r.definition?.quantity_kind_id ?? null });
    }
  }
  if (registryIds.size > 0) {
    const { rows } = await q.query<{ entry_id: string; kind: string; kind_id: string | null }>(
      'SELECT entry_id, kind, kind_id FROM registry_entry_version WHERE tx_to IS NULL AND entry_id = ANY($1::uuid[])', [sqlTextArray([...registryIds])]);
    for (const r of rows) facts.registry.set(r.entry_id, { kind: r.kind, kind_id: r.kind_id });
  }
  const episodeIds = anchorEpisodeIds(anchors);
  if (episodeIds.length > 0) facts.episodes = await episodeSpans(q, episodeIds);
  return facts;
}

export async function lintDocuments(q: Queryable, docs: DisplayDocument[], nowNs: bigint): Promise<LintFinding[][]> {
  const facts = await lintFacts(q, docs, nowNs);
  return docs.map((d) => lintDocument(d, facts));
}

/** A time expression checked on its own (null when it reads). */
function parsed(text: string | number | bigint): TimeExpression | string {
  if (typeof text !== 'string') return { base: { kind: 'instant', ns: BigInt(text) }, offsets: [] };
  try {
    return parseTimeExpression(text);
  } catch (e) {
    if (e instanceof TimeExpressionError) return e.message;
    throw e;
  }
}

/**
 * Checks a window [start, end] as it would read now. Expressions that need a context the
 * lint does not have (shift starts) are not judged.
 */
function lintWindow(out: LintFinding[], widgetId: string | null, where: string, start: string | number | bigint, end: string | number | bigint, time: TimeContext): void {
  const s = parsed(start);
  const e = parsed(end);
  if (typeof s === 'string') out.push(finding('time-invalid', widgetId, `${where}.start "${String(start)}": ${s}`));
  if (typeof e === 'string') out.push(finding('time-invalid', widgetId, `${where}.end "${String(end)}": ${e}`));
  if (typeof s === 'string' || typeof e === 'string') return;
  let sNs: bigint;
  let eNs: bigint;
  try {
    sNs = evaluateTime(s, time);
    eNs = evaluateTime(e, time);
  } catch (err) {
    if (err instanceof TimeExpressionError) {
      if (/shift/.test(err.message)) return;
      out.push(finding('time-invalid', widgetId, `${where}: ${err.message}`));
      return;
    }
    throw err;
  }
  if (sNs === eNs) out.push(finding('time-window-empty', widgetId, `${where}: "${String(start)}" and "${String(end)}" are the same instant`));
  else if (eNs < sNs) out.push(finding('time-window-inverted', widgetId, `${where}: ends ("${String(end)}") before it starts ("${String(start)}")`));
}

export function lintDocument(doc: DisplayDocument, facts: LintFacts): LintFinding[] {
  const out: LintFinding[] = [];
  const widgets = doc.widgets ?? [];
  let timezone = 'UTC';

  const [major, minor] = doc.service_display.split('.').map(Number);
  if (major > DISPLAY_SCHEMA.major || (major === DISPLAY_SCHEMA.major && minor > DISPLAY_SCHEMA.minor)) {
    out.push(finding('schema-version-newer', null, `service_display ${doc.service_display} is newer than ${DISPLAY_SCHEMA.major}.${DISPLAY_SCHEMA.minor}`));
  }
  if (doc.time?.timezone.mode === 'explicit') {
    try {
      timezone = checkTimezone('time.timezone.timezone', doc.time.timezone.timezone);
    } catch {
      out.push(finding('timezone-unknown', null, `time.timezone.timezone "${doc.time.timezone.timezone}" is not an IANA time zone`));
    }
  }
  const time: TimeContext = { nowNs: facts.nowNs, timezone, shiftStarts: null };
  if (doc.time) lintWindow(out, null, 'time', doc.time.start, doc.time.end, time);

  const template = typeof doc.meta.template === 'string' ? facts.templates.get(doc.meta.template) : undefined;
  if (typeof doc.meta.template === 'string' && !template) out.push(finding('template-unknown', null, `meta.template "${doc.meta.template}" is not an asset template of this model`));

  const ids = new Set<string>();
  const layers = new Set((doc.layers ?? []).map((l) => l.id));
  for (const w of widgets) {
    if (ids.has(w.id)) out.push(finding('widget-id-duplicate', w.id, `more than one widget has id "${w.id}"`));
    ids.add(w.id);
    if (!KNOWN_KINDS.has(w.type)) out.push(finding('widget-kind-unknown', w.id, `widget kind "${w.type}" is not a WidgetKind of schema ${DISPLAY_SCHEMA.major}.${DISPLAY_SCHEMA.minor}; shown as a placeholder`));
    else if (!RENDERED_KINDS.has(w.type)) out.push(finding('widget-kind-no-renderer', w.id, `the portal draws no "${w.type}" yet; shown as a placeholder`));
    if (typeof w.layer === 'string' && !layers.has(w.layer)) out.push(finding('layer-unknown', w.id, `layer "${w.layer}" is not declared in layers`));
    lintWidgetTime(out, w, time, facts);
  }
  for (const p of doc.priority_order ?? []) if (!ids.has(p)) out.push(finding('priority-order-unknown-widget', null, `priority_order names "${p}", which is no widget's id`));

  lintSelectors(out, doc, widgets, template, facts);
  return out;
}

function lintWidgetTime(out: LintFinding[], w: Widget, time: TimeContext, facts: LintFacts): void {
  if (w.time_override) lintWindow(out, w.id, 'time_override', w.time_override.start, w.time_override.end, time);
  const r = w.range;
  if (!r) return;
  if ('anchor' in r) {
    const a = resolveAnchor(r.anchor, time, facts.episodes);
    if (a.state === 'unresolved') out.push(finding('anchor-unresolvable', w.id, `range.anchor: ${a.reason}`));
  } else if ('start' in r) {
    lintWindow(out, w.id, 'range', r.start, r.end, time);
  }
}

function lintSelectors(out: LintFinding[], doc: DisplayDocument, widgets: Widget[], template: Map<string, { quantity_kind_id: string | null }> | undefined, facts: LintFacts): void {
  const sites = selectorSites(doc);
  const bound = new Set<number>();
  const groups = new Map((doc.scale_groups ?? []).map((g) => [g.id, g]));
  for (const g of groups.values()) {
    if (g.mode === 'explicit' && g.min !== null && g.max !== null && g.min >= g.max) out.push(finding('scale-group-inverted', null, `scale group "${g.id}": min ${g.min} is not below max ${g.max}`));
  }
  // quantity kinds per scale group (per widget: a scale group is one axis of one trend)
  const kindsByGroup = new Map<string, Map<string, string>>();
  for (const s of sites) {
    bound.add(s.widgetIndex);
    const sel = s.selector;
    let quantityKind: string | null = null;
    if (sel.kind === 'attribute-id') {
      const a = facts.attributes.get(sel.attribute_id.toLowerCase());
      if (!a) out.push(finding('attribute-unresolved', s.widgetId, `${s.pointer}: no attribute ${sel.attribute_id}`));
      else quantityKind = a.quantity_kind_id;
    } else if (sel.kind === 'template-relative') {
      if (template && !sel.name.includes('|')) {
        const def = template.get(sel.name);
        if (!def) out.push(finding('attribute-unresolved', s.widgetId, `${s.pointer}: template "${doc.meta.template}" defines no attribute "${sel.name}"`));
        else quantityKind = def.quantity_kind_id;
      }
    } else {
      out.push(finding('selector-unresolved', s.widgetId, `${s.pointer}: "${sel.name}" was saved unresolved: ${sel.reason}`));
    }
    const t = s.trace;
    if (!t) continue;
    for (const [field, id] of [['unit_id', t.unit_id], ['quantity_kind_id', t.quantity_kind_id]] as const) {
      if (typeof id === 'string' && !facts.registry.has(id.toLowerCase())) out.push(finding('unit-unknown', s.widgetId, `${s.pointer.replace(/\/attribute$/, '')}/${field}: no registry entry ${id}`));
    }
    if (typeof t.quantity_kind_id === 'string') quantityKind = t.quantity_kind_id.toLowerCase();
    else if (typeof t.unit_id === 'string') quantityKind = facts.registry.get(t.unit_id.toLowerCase())?.kind_id ?? quantityKind;
    if (typeof t.scale_group !== 'string') continue;
    if (!groups.has(t.scale_group)) out.push(finding('scale-group-unknown', s.widgetId, `${s.pointer.replace(/\/attribute$/, '')}: scale group "${t.scale_group}" is not declared in scale_groups`));
    if (quantityKind === null) continue;
    const key = `${s.widgetIndex}\u0000${t.scale_group}`;
    let kinds = kindsByGroup.get(key);
    if (!kinds) { kinds = new Map(); kindsByGroup.set(key, kinds); }
    if (!kinds.has(quantityKind)) kinds.set(quantityKind, t.label);
  }
  for (const [key, kinds] of kindsByGroup) {
    if (kinds.size < 2) continue;
    const [index, group] = key.split('\u0000');
    const w = widgets[Number(index)];
    out.push(finding('scale-group-incompatible-units', w.id, `scale group "${group}" mixes ${kinds.size} quantity kinds (traces ${[...kinds.values()].map((l) => JSON.stringify(l)).join(', ')}); they cannot share one axis`));
  }
  widgets.forEach((w, i) => {
    if (DATA_KINDS.has(w.type) && !bound.has(i)) out.push(finding('widget-unbound', w.id, `the ${w.type} shows no attribute (no selector in its bindings)`));
  });
}
