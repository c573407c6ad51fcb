// The portable display file: a document that imports on another site. Ids mean nothing
// there, so every id the document holds is listed with a name that does: an attribute by
// its path (and its name and asset template), a unit or quantity kind by its registry
// name. The document itself is carried exactly as stored; import writes the local ids at
// the listed places, and what the site does not have becomes an unresolved selector (or a
// null unit) with the reason, never a silently wrong id.
import type { Queryable } from '../model/db.js';
import { sqlTextArray } from '../model/db.js';
import type { AssetModel } from '../model/assets/asset-model.js';
import { splitAttributePath } from '../model/assets/asset-tree.js';
import { resolve } from '../model/resolve/resolve.js';
import { ServiceError } from '../errors.js';
import { type DisplayDocument, selectorSites, atPointer, isSelector } from './display-document.js';

export const EXPORT_FORMAT = 'service-display-export';
export const EXPORT_FORMAT_VERSION = '1.0';

export type RegistryReferenceKind = 'unit' | 'quantity-kind';

export type PortableReference =
  | { pointer: string; kind: 'attribute'; id: string; path: string; name: string; asset_template: string | null }
  | { pointer: string; kind: RegistryReferenceKind; id: string; name: string };

const REGISTRY_OF: Record<RegistryReferenceKind, string> = { unit: 'units', 'quantity-kind': 'quantity-kinds' };

/** The references of a document: attribute ids by path, registry ids by name. Ids this site does not know are left out. */
export async function exportReferences(model: AssetModel, doc: DisplayDocument, visible: (assetId: string) => Promise<boolean>): Promise<PortableReference[]> {
  const sites = selectorSites(doc);
  const attrIds = [...new Set(sites.flatMap((s) => (s.selector.kind === 'attribute-id' ? [s.selector.attribute_id.toLowerCase()] : [])))];
  const byId = new Map<string, { path: string; name: string; asset_template: string | null }>();
  if (attrIds.length > 0) {
    const tree = await model.tree();
    const r = await resolve(model, { select: { kind: 'attribute_ids', content: attrIds }, scope: {} }, visible);
    const templateIds = [...new Set(r.results.flatMap((a) => { const t = tree.get(a.asset_id)?.template_id; return t ? [t] : []; }))];
    const names = new Map<string, string>();
    if (templateIds.length > 0) {
      const { rows } = await model.db.query<{ template_id: string; name: string }>('SELECT template_id, name FROM template_version WHERE tx_to IS NULL AND template_id = ANY($1::uuid[])', [sqlTextArray(templateIds)]);
      for (const row of rows) names.set(row.template_id, row.name);
    }
    for (const a of r.results) {
      const t = tree.get(a.asset_id)?.template_id;
      byId.set(a.attribute_id, { path: a.path, name: a.name, asset_template: t ? names.get(t) ?? null : null });
    }
  }
  const registryIds = new Set<string>();
  for (const s of sites) for (const id of [s.trace?.unit_id, s.trace?.quantity_kind_id]) if (typeof id === 'string') registryIds.add(id.toLowerCase());
  const registry = new Map<string, { kind: string; name: string }>();
  if (registryIds.size > 0) {
    const { rows } = await model.db.query<{ entry_id: string; kind: string; name: string }>(
      'SELECT entry_id, kind, name FROM registry_entry_version WHERE tx_to IS NULL AND entry_id = ANY($1::uuid[])', [sqlTextArray([...registryIds])]);
    for (const row of rows) registry.set(row.entry_id, row);
  }
  const out: PortableReference[] = [];
  for (const s of sites) {
    if (s.selector.kind === 'attribute-id') {
      const a = byId.get(s.selector.attribute_id.toLowerCase());
      if (a) out.push({ pointer: s.pointer, kind: 'attribute', id: s.selector.attribute_id, ...a });
    }
    if (!s.trace) continue;
    const tracePointer = s.pointer.slice(0, -'/attribute'.length);
    for (const [field, kind] of [['unit_id', 'unit'], ['quantity_kind_id', 'quantity-kind']] as const) {
      const id = s.trace[field];
      const e = typeof id === 'string' ? registry.get(id.toLowerCase()) : undefined;
      if (typeof id === 'string' && e && e.kind === REGISTRY_OF[kind]) out.push({ pointer: `${tracePointer}/${field}`, kind, id, name: e.name });
    }
  }
  return out;
}

export interface ImportedReference {
  pointer: string;
  kind: PortableReference['kind'];
  /** The local id written at the pointer, or null when this site has no match. */
  id: string | null;
  reason: string | null;
}

const POINTER = /^\/widgets\/\d{1,6}\/bindings\/(traces\/\d{1,6}\/(attribute|unit_id|quantity_kind_id)|attribute|attributes\/\d{1,6})$/;

const refused = (i: number, problem: string) =>
  new ServiceError('invalid-request', `body.file.references.${i}.pointer: ${problem}`, { errors: [{ field: `body.file.references.${i}.pointer`, problem }] });

/**
 * Writes this site's ids into a copy of the document at the references' pointers. A
 * pointer must name what its kind says (an attribute-id selector, or a trace's unit_id or
 * quantity_kind_id holding an id), else the file is refused (400 naming the reference).
 */
export async function importReferences(model: AssetModel, doc: DisplayDocument, refs: PortableReference[]): Promise<{ document: DisplayDocument; references: ImportedReference[] }> {
  const copy = structuredClone(doc);
  const tree = await model.tree();
  const out: ImportedReference[] = [];
  const registryNames = refs.flatMap((r) => (r.kind === 'attribute' ? [] : [`${REGISTRY_OF[r.kind]}\u0000${r.name}`]));
  const registry = await registryByName(model.db, registryNames);
  const wantedAssets = new Map<string, string>();
  refs.forEach((r) => {
    if (r.kind !== 'attribute') return;
    const split = splitAttributePath(r.path);
    const node = split ? tree.byPath(split.assetPath) : undefined;
    if (node) wantedAssets.set(r.pointer, node.asset_id);
  });
  const cached = await model.attributes.forAssets([...new Set(wantedAssets.values())]);
  for (let i = 0; i < refs.length; i++) {
    const r = refs[i];
    if (!POINTER.test(r.pointer)) throw refused(i, 'not the place of a selector, unit_id or quantity_kind_id in the document');
    const current = atPointer(copy, r.pointer);
    if (r.kind === 'attribute') {
      if (!isSelector(current) || current.kind !== 'attribute-id' || !r.pointer.match(/attribute(s\/\d+)?$/)) throw refused(i, 'does not hold an attribute-id selector');
      const assetId = wantedAssets.get(r.pointer);
      const name = splitAttributePath(r.path)?.name;
      const found = assetId ? cached.get(assetId)?.find((c) => c.effective.name === name && !c.effective.retired) : undefined;
      if (found) {
        atPointer(copy, r.pointer, { kind: 'attribute-id', attribute_id: found.effective.attribute_id });
        out.push({ pointer: r.pointer, kind: r.kind, id: found.effective.attribute_id, reason: null });
      } else {
        const reason = `no attribute at ${r.path} on this site`;
        atPointer(copy, r.pointer, { kind: 'unresolved', name: r.path, reason });
        out.push({ pointer: r.pointer, kind: r.kind, id: null, reason });
      }
    } else {
      const field = r.kind === 'unit' ? 'unit_id' : 'quantity_kind_id';
      if (!r.pointer.endsWith(`/${field}`) || typeof current !== 'string') throw refused(i, `does not hold a ${field}`);
      const id = registry.get(`${REGISTRY_OF[r.kind]}\u0000${r.name}`) ?? null;
      atPointer(copy, r.pointer, id);
      out.push({ pointer: r.pointer, kind: r.kind, id, reason: id ? null : `no ${r.kind} named "${r.name}" in this site's registry` });
    }
  }
  return { document: copy, references: out };
}

async function registryByName(q: Queryable, keys: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (keys.length === 0) return out;
  const kinds = keys.map((k) => k.split('\u0000')[0]);
  const names = keys.map((k) => k.split('\u0000')[1]);
  const { rows } = await q.query<{ entry_id: string; kind: string; name: string }>(
    `SELECT e.entry_id, e.kind, e.name FROM registry_entry_version e
       JOIN unnest($1::text[], $2::text[]) AS w(kind, name) ON e.kind = w.kind AND e.name = w.name
      WHERE e.tx_to IS NULL`, [sqlTextArray(kinds), sqlTextArray(names)]);
  for (const r of rows) out.set(`${r.kind}\u0000${r.name}`, r.entry_id);
  return out;
}
