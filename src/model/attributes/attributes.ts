// Attribute changes: create (from a template definition of the asset's template, or with
// a definition of its own), instantiate a template's missing attributes on an asset,
// override the fields the definition lets the asset override, retire and unretire.
// The *In functions run inside a model transaction the caller opened; the plain ones
// open their own.
import { randomUUID } from 'node:crypto';
import type { Queryable, SqlParam } from '../db.js';
import { modelTransaction, type EventSink, type Who } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { endCurrentVersion, isUniqueViolation, checkExpectedTx } from '../versions/history.js';
import { checkDefinition, overridableField, type AttributeDefinition } from '../templates/templates.js';
import { currentAssetRow } from '../assets/assets.js';
import { ATTRIBUTE_COLUMNS, type AttributeRow } from './effective.js';
import type { AssetModel } from '../assets/asset-model.js';
import { isUuid } from '../../uuid.js';
import { checkContinuityClass, checkWriterClass } from '../vocabularies.js';

/** Rows per multi-row insert: 8 parameters each, far below the 65,535 parameter limit. */
const INSERT_BATCH = 1000;

export interface NewAttribute {
  asset_id: string;
  attr_def_id?: string | null;
  definition?: AttributeDefinition | null;
  overrides?: Record<string, unknown>;
}

export interface AttributePatch {
  expected_tx?: number | bigint;
  /** Replaces the whole set of overrides ({} clears them). */
  overrides?: Record<string, unknown>;
  retire?: boolean;
  unretire?: boolean;
}

function checkOverrides(overrides: Record<string, unknown>, def: AttributeDefinition): Record<string, unknown> {
  const allowed = new Set(def.overridable.map(overridableField));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(overrides)) {
    const f = overridableField(key);
    const field = `overrides.${key}`;
    if (!f) throw new ServiceError('invalid-request', `${field}: not an attribute field that can be overridden`, { errors: [{ field, problem: 'unknown field' }] });
    if (!allowed.has(f)) throw new ServiceError('invalid-request', `${field}: the definition "${def.name}" does not list ${f} as overridable`, { errors: [{ field, problem: 'not overridable' }], overridable: def.overridable });
    if ((f === 'quantity_kind_id' || f === 'display_unit_id' || f === 'enum_set_id') && value !== null && !isUuid(value)) {
      throw new ServiceError('invalid-request', `${field}: must be a uuid or null`, { errors: [{ field, problem: 'not a uuid' }] });
    }
    if (f === 'continuity_class') checkContinuityClass(field, value);
    if (f === 'writer_class') checkWriterClass(field, value);
    out[f] = value;
  }
  return out;
}

async function currentDefinition(q: Queryable, attrDefId: string): Promise<{ template_id: string; definition: AttributeDefinition } | null> {
  const { rows } = await q.query<{ template_id: string; definition: AttributeDefinition }>('SELECT template_id, definition FROM attr_def_version WHERE attr_def_id = $1 AND tx_to IS NULL', [attrDefId]);
  return rows[0] ?? null;
}

/** Inserts attribute versions in one multi-row statement (a bulk change stays a few round trips). */
async function insertAttributes(q: Queryable, rows: Array<Omit<AttributeRow, 'tx_from'>>, txId: bigint): Promise<void> {
  for (let at = 0; at < rows.length; at += INSERT_BATCH) {
    const values: string[] = [];
    const params: SqlParam[] = [];
    for (const r of rows.slice(at, at + INSERT_BATCH)) {
      const b = params.length;
      values.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8})`);
      params.push(r.attribute_id, r.asset_id, r.name, r.attr_def_id, r.definition as Record<string, unknown> | null, r.overrides, r.retired, txId);
    }
    await q.query(`INSERT INTO attribute_version (attribute_id, asset_id, name, attr_def_id, definition, overrides, retired, tx_from) VALUES ${values.join(', ')}`, params);
  }
}

function emitAttribute(events: EventSink, r: Omit<AttributeRow, 'tx_from'>, action: string, extra: Record<string, unknown> = {}): void {
  events.emit('attribute', r.attribute_id, action, { asset_id: r.asset_id, name: r.name, attr_def_id: r.attr_def_id, retired: r.retired, ...extra });
}

function attributeNameConflict(name: string, assetId: string): ServiceError {
  return new ServiceError('name-conflict', `asset ${assetId} already has an attribute named "${name}"`, { name, asset_id: assetId });
}

/** Creates one attribute inside the caller's model transaction; returns its id. */
export async function createAttributeIn(q: Queryable, txId: bigint, events: EventSink, a: NewAttribute, attributeId: string = randomUUID()): Promise<string> {
  if ((a.attr_def_id == null) === (a.definition == null)) {
    throw new ServiceError('invalid-request', 'attr_def_id, definition: give exactly one (a template definition to follow, or the attribute\'s own)', { errors: [{ field: 'definition', problem: 'exactly one of attr_def_id and definition' }] });
  }
  if (a.definition) checkDefinition('definition', a.definition);
  const asset = await currentAssetRow(q, a.asset_id);
  if (!asset) throw new ServiceError('invalid-request', `asset_id: no asset ${a.asset_id}`, { errors: [{ field: 'asset_id', problem: 'no such asset' }] });
  let def = a.definition ?? null;
  if (a.attr_def_id) {
    const d = await currentDefinition(q, a.attr_def_id);
    if (!d || d.template_id !== asset.template_id) {
      throw new ServiceError('invalid-request', `attr_def_id: ${a.attr_def_id} is not a definition of the asset's template`, { errors: [{ field: 'attr_def_id', problem: 'not a definition of the asset template' }] });
    }
    def = d.definition;
  }
  const d = def as AttributeDefinition;
  const row = { attribute_id: attributeId, asset_id: asset.asset_id, name: d.name, attr_def_id: a.attr_def_id ?? null, definition: a.definition ?? null, overrides: checkOverrides(a.overrides ?? {}, d), retired: false };
  try {
    await insertAttributes(q, [row], txId);
  } catch (e) {
    if (isUniqueViolation(e, 'attribute_name_current')) throw attributeNameConflict(d.name, a.asset_id);
    throw e;
  }
  emitAttribute(events, row, 'created');
  return attributeId;
}

export async function createAttribute(model: AssetModel, who: Who, a: NewAttribute): Promise<{ attributeId: string; txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => createAttributeIn(q, txId, events, a));
  return { attributeId: c.result, txId: c.txId };
}

/**
 * Creates, on an asset with a template, one attribute per current definition it does
 * not have yet, inside the caller's model transaction. attributeIdFor chooses the new
 * ids (model jobs fix them in their preview); by default they are random.
 */
export async function instantiateTemplateIn(
  q: Queryable, txId: bigint, events: EventSink, assetId: string, attributeIdFor: (attrDefId: string) => string = () => randomUUID(),
): Promise<string[]> {
  const asset = await currentAssetRow(q, assetId, true);
  if (!asset) throw new ServiceError('not-found', `asset ${assetId} not found`);
  if (!asset.template_id) throw new ServiceError('invalid-request', `asset ${assetId} has no template to instantiate`, { errors: [{ field: 'path.uuid', problem: 'asset has no template' }] });
  const { rows: defs } = await q.query<{ attr_def_id: string; definition: AttributeDefinition }>('SELECT attr_def_id, definition FROM attr_def_version WHERE template_id = $1 AND tx_to IS NULL ORDER BY ordinal', [asset.template_id]);
  const { rows: have } = await q.query<{ attr_def_id: string | null; name: string }>('SELECT attr_def_id, name FROM attribute_version WHERE asset_id = $1 AND tx_to IS NULL', [assetId]);
  const haveDefs = new Set(have.map((h) => h.attr_def_id));
  const haveNames = new Map(have.map((h) => [h.name, h.attr_def_id]));
  const rows: Array<Omit<AttributeRow, 'tx_from'>> = [];
  for (const d of defs) {
    if (haveDefs.has(d.attr_def_id)) continue;
    // Checked here rather than left to the unique index: the bulk insert would not say which name.
    if (haveNames.has(d.definition.name)) throw attributeNameConflict(d.definition.name, assetId);
    rows.push({ attribute_id: attributeIdFor(d.attr_def_id), asset_id: assetId, name: d.definition.name, attr_def_id: d.attr_def_id, definition: null, overrides: {}, retired: false });
  }
  try {
    await insertAttributes(q, rows, txId);
  } catch (e) {
    // A concurrent create took one of the names after the read above.
    if (isUniqueViolation(e, 'attribute_name_current')) throw new ServiceError('name-conflict', `asset ${assetId}: an attribute name of template ${asset.template_id} was taken meanwhile`, { asset_id: assetId });
    throw e;
  }
  for (const row of rows) emitAttribute(events, row, 'created', { instantiated_from: asset.template_id });
  return rows.map((r) => r.attribute_id);
}

export async function instantiateTemplate(model: AssetModel, who: Who, assetId: string): Promise<{ created: string[]; txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => instantiateTemplateIn(q, txId, events, assetId));
  return { created: c.result, txId: c.txId };
}

/** Changes overrides or retirement of one attribute inside the caller's model transaction. */
export async function patchAttributeIn(q: Queryable, txId: bigint, events: EventSink, attributeId: string, p: AttributePatch): Promise<void> {
  if (p.retire && p.unretire) throw new ServiceError('invalid-request', 'retire, unretire: only one of them at a time', { errors: [{ field: 'unretire', problem: 'conflicts with retire' }] });
  if (p.overrides === undefined && !p.retire && !p.unretire) throw new ServiceError('invalid-request', 'patch: nothing to change (give overrides, retire or unretire)', { errors: [{ field: 'body', problem: 'empty patch' }] });
  const { rows } = await q.query<AttributeRow>(`SELECT ${ATTRIBUTE_COLUMNS} FROM attribute_version a WHERE a.attribute_id = $1 AND a.tx_to IS NULL FOR UPDATE`, [attributeId]);
  const cur = rows[0];
  if (!cur) throw new ServiceError('not-found', `attribute ${attributeId} not found`);
  checkExpectedTx(`attribute ${attributeId}`, p.expected_tx, cur.tx_from);
  if (p.retire && cur.retired) throw new ServiceError('conflict', `attribute ${attributeId} is already retired`);
  if (p.unretire && !cur.retired) throw new ServiceError('conflict', `attribute ${attributeId} is not retired`);
  const next = { ...cur };
  const changes: string[] = [];
  if (p.overrides !== undefined) {
    const def = cur.definition ?? (await currentDefinition(q, cur.attr_def_id as string))?.definition;
    if (!def) throw new ServiceError('conflict', `attribute ${attributeId}: its template no longer defines it; overrides cannot change`);
    next.overrides = checkOverrides(p.overrides, def);
    changes.push('overridden');
  }
  if (p.retire) { next.retired = true; changes.push('retired'); }
  if (p.unretire) { next.retired = false; changes.push('unretired'); }
  await endCurrentVersion(q, 'attribute_version', { attribute_id: attributeId }, txId);
  await insertAttributes(q, [next], txId);
  emitAttribute(events, next, changes.length === 1 ? changes[0] : 'updated', { changes, ...(p.overrides !== undefined ? { overrides: next.overrides } : {}) });
}

export async function patchAttribute(model: AssetModel, who: Who, attributeId: string, p: AttributePatch): Promise<{ txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => patchAttributeIn(q, txId, events, attributeId, p));
  return { txId: c.txId };
}
