// Templates: named sets of attribute definitions plus the templates permitted as
// children. Every PATCH writes a new version; definitions keep their attr_def_id while
// their name stays, so attributes instantiated from a definition follow its new text.
import { randomUUID } from 'node:crypto';
import { type Queryable, sqlTextArray } from '../db.js';
import { modelTransaction, type EventSink, type Who } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { SqlArgs, validAt, endCurrentVersion, isUniqueViolation, type ReadTx } from '../versions/history.js';
import { checkName } from '../versions/names.js';
import type { AssetModel } from '../assets/asset-model.js';
import { checkContinuityClass, checkWriterClass } from '../vocabularies.js';

/** Fields of the Effective attribute a definition may let assets override. */
export const OVERRIDABLE_FIELDS = ['quantity_kind_id', 'display_unit_id', 'continuity_class', 'writer_class', 'enum_set_id', 'limit_traits', 'lifecycle_policy', 'entry_cadence'] as const;
export type OverridableField = (typeof OVERRIDABLE_FIELDS)[number];

export interface AttributeDefinition {
  name: string;
  quantity_kind_id: string | null;
  default_unit_id: string | null;
  continuity_class: string;
  writer_class: string;
  enum_set_id: string | null;
  limit_traits: unknown;
  lifecycle_policy: unknown;
  entry_cadence: unknown;
  overridable: string[];
}

export interface Template {
  template_id: string;
  name: string;
  notes: string;
  permitted_children: string[];
  version: number;
  tx_id: bigint;
  attributes: Array<[string, AttributeDefinition]>;
}

export interface TemplateInput {
  name: string;
  attributes?: AttributeDefinition[];
  notes?: string;
  permitted_children?: string[];
}

interface TemplateRow { template_id: string; name: string; notes: string; permitted_children: string[]; version: number; tx_from: bigint }

/** 'default_unit_id' names the same overridable field as 'display_unit_id' (the unit shown). */
export function overridableField(f: string): OverridableField | null {
  if (f === 'default_unit_id') return 'display_unit_id';
  return (OVERRIDABLE_FIELDS as readonly string[]).includes(f) ? f as OverridableField : null;
}

export function checkDefinition(field: string, d: AttributeDefinition): void {
  checkName(`${field}.name`, d.name, { pathSegment: true });
  checkContinuityClass(`${field}.continuity_class`, d.continuity_class);
  checkWriterClass(`${field}.writer_class`, d.writer_class);
  for (const [i, f] of d.overridable.entries()) {
    if (!overridableField(f)) {
      throw new ServiceError('invalid-request', `${field}.overridable[${i}]: "${f}" is not an overridable field (${OVERRIDABLE_FIELDS.join(', ')})`, { errors: [{ field: `${field}.overridable[${i}]`, problem: 'not an overridable field' }] });
    }
  }
}

function checkInput(t: TemplateInput): void {
  checkName('name', t.name);
  const seen = new Set<string>();
  (t.attributes ?? []).forEach((d, i) => {
    checkDefinition(`attributes[${i}]`, d);
    if (seen.has(d.name)) throw new ServiceError('invalid-request', `attributes[${i}].name: "${d.name}" is defined twice`, { errors: [{ field: `attributes[${i}].name`, problem: 'duplicate definition name' }] });
    seen.add(d.name);
  });
}

export async function currentTemplate(q: Queryable, id: string): Promise<TemplateRow | null> {
  const { rows } = await q.query<TemplateRow>('SELECT template_id, name, notes, permitted_children, version, tx_from FROM template_version WHERE template_id = $1 AND tx_to IS NULL', [id]);
  return rows[0] ?? null;
}

/** Templates valid at the read transaction, with their definitions (all, or the given ids). */
export async function templatesAt(q: Queryable, tx: ReadTx, ids?: string[]): Promise<Template[]> {
  const args = new SqlArgs();
  const idFilter = ids ? ` AND t.template_id = ANY(${args.add(sqlTextArray(ids))}::uuid[])` : '';
  const { rows } = await q.query<TemplateRow>(
    `SELECT template_id, name, notes, permitted_children, version, tx_from FROM template_version t WHERE ${validAt('t', tx, args)}${idFilter} ORDER BY name`, args.values);
  if (rows.length === 0) return [];
  const dargs = new SqlArgs();
  const defs = await q.query<{ attr_def_id: string; template_id: string; definition: AttributeDefinition }>(
    `SELECT attr_def_id, template_id, definition FROM attr_def_version d
      WHERE ${validAt('d', tx, dargs)} AND d.template_id = ANY(${dargs.add(sqlTextArray(rows.map((r) => r.template_id)))}::uuid[]) ORDER BY ordinal`, dargs.values);
  const byTemplate = new Map<string, Array<[string, AttributeDefinition]>>();
  for (const d of defs.rows) {
    const list = byTemplate.get(d.template_id) ?? [];
    list.push([d.attr_def_id, d.definition]);
    byTemplate.set(d.template_id, list);
  }
  return rows.map((r) => ({ template_id: r.template_id, name: r.name, notes: r.notes, permitted_children: r.permitted_children, version: r.version, tx_id: r.tx_from, attributes: byTemplate.get(r.template_id) ?? [] }));
}

async function checkPermitted(q: Queryable, ids: string[], self: string): Promise<void> {
  const others = ids.filter((id) => id !== self);
  if (others.length === 0) return;
  const { rows } = await q.query<{ template_id: string }>('SELECT template_id FROM template_version WHERE tx_to IS NULL AND template_id = ANY($1::uuid[])', [sqlTextArray(others)]);
  const found = new Set(rows.map((r) => r.template_id));
  const missing = others.find((id) => !found.has(id));
  if (missing) throw new ServiceError('invalid-request', `permitted_children: no template ${missing}`, { errors: [{ field: 'permitted_children', problem: 'no such template' }] });
}

async function writeDefinitions(q: Queryable, templateId: string, defs: AttributeDefinition[], txId: bigint): Promise<void> {
  const { rows: current } = await q.query<{ attr_def_id: string; name: string }>('SELECT attr_def_id, name FROM attr_def_version WHERE template_id = $1 AND tx_to IS NULL', [templateId]);
  const byName = new Map(current.map((r) => [r.name, r.attr_def_id]));
  for (const r of current) await endCurrentVersion(q, 'attr_def_version', { attr_def_id: r.attr_def_id }, txId);
  for (const [i, d] of defs.entries()) {
    const id = byName.get(d.name) ?? randomUUID();
    await q.query('INSERT INTO attr_def_version (attr_def_id, template_id, ordinal, name, definition, tx_from) VALUES ($1, $2, $3, $4, $5, $6)',
      [id, templateId, i, d.name, d as unknown as Record<string, unknown>, txId]);
  }
}

function templateNameConflict(name: string): ServiceError {
  return new ServiceError('name-conflict', `a template named "${name}" already exists`, { name });
}

/** Creates a template (version 1) inside the caller's model transaction; returns its id. */
export async function createTemplateIn(q: Queryable, txId: bigint, events: EventSink, t: TemplateInput, templateId: string = randomUUID()): Promise<string> {
  checkInput(t);
  try {
    await checkPermitted(q, t.permitted_children ?? [], templateId);
    await q.query('INSERT INTO template_version (template_id, name, notes, permitted_children, version, tx_from) VALUES ($1, $2, $3, $4::uuid[], 1, $5)',
      [templateId, t.name, t.notes ?? '', sqlTextArray(t.permitted_children ?? []), txId]);
  } catch (e) {
    if (isUniqueViolation(e, 'template_name_current')) throw templateNameConflict(t.name);
    throw e;
  }
  await writeDefinitions(q, templateId, t.attributes ?? [], txId);
  events.emit('template', templateId, 'created', { name: t.name, version: 1 });
  return templateId;
}

export async function createTemplate(model: AssetModel, who: Who, t: TemplateInput): Promise<{ templateId: string; txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => createTemplateIn(q, txId, events, t));
  return { templateId: c.result, txId: c.txId };
}

/** Replaces a template with a new version inside the caller's model transaction; returns the version. */
export async function patchTemplateIn(q: Queryable, txId: bigint, events: EventSink, templateId: string, t: TemplateInput): Promise<number> {
  checkInput(t);
  const cur = await q.query<TemplateRow>('SELECT template_id, name, notes, permitted_children, version, tx_from FROM template_version WHERE template_id = $1 AND tx_to IS NULL FOR UPDATE', [templateId]);
  const prev = cur.rows[0];
  if (!prev) throw new ServiceError('not-found', `template ${templateId} not found`);
  await checkPermitted(q, t.permitted_children ?? prev.permitted_children, templateId);
  await endCurrentVersion(q, 'template_version', { template_id: templateId }, txId);
  const version = prev.version + 1;
  try {
    await q.query('INSERT INTO template_version (template_id, name, notes, permitted_children, version, tx_from) VALUES ($1, $2, $3, $4::uuid[], $5, $6)',
      [templateId, t.name, t.notes ?? prev.notes, sqlTextArray(t.permitted_children ?? prev.permitted_children), version, txId]);
  } catch (e) {
    if (isUniqueViolation(e, 'template_name_current')) throw templateNameConflict(t.name);
    throw e;
  }
  if (t.attributes) await writeDefinitions(q, templateId, t.attributes, txId);
  events.emit('template', templateId, 'updated', { name: t.name, version });
  return version;
}

/** Replaces a template with a new version (the body is the whole new template). */
export async function patchTemplate(model: AssetModel, who: Who, templateId: string, t: TemplateInput): Promise<{ txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => patchTemplateIn(q, txId, events, templateId, t));
  return { txId: c.txId };
}
