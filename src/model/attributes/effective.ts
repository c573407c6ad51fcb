// The Effective attribute: the definition an attribute follows (its template's
// definition as of the read, or its own) with the asset's overrides applied. An override
// applies only while the definition lists its field as overridable, so a template
// version that withdraws a field takes the override out of effect without losing it.
import { type Queryable, sqlTextArray } from '../db.js';
import { SqlArgs, validAt, type ReadTx } from '../versions/history.js';
import { overridableField, type AttributeDefinition } from '../templates/templates.js';

export interface AttributeRow {
  attribute_id: string;
  asset_id: string;
  name: string;
  attr_def_id: string | null;
  definition: AttributeDefinition | null;
  overrides: Record<string, unknown>;
  retired: boolean;
  tx_from: bigint;
}

export interface EffectiveAttribute {
  attribute_id: string;
  asset_id: string;
  name: string;
  attr_def_id: string | null;
  quantity_kind_id: string | null;
  display_unit_id: string | null;
  continuity_class: string;
  writer_class: string;
  enum_set_id: string | null;
  limit_traits: unknown;
  lifecycle_policy: unknown;
  entry_cadence: unknown;
  retired: boolean;
  overridden_fields: string[];
  tx_id: bigint;
}

export const ATTRIBUTE_COLUMNS = 'a.attribute_id, a.asset_id, a.name, a.attr_def_id, a.definition, a.overrides, a.retired, a.tx_from';

/**
 * Definitions for the given attr_def_ids as of the read: the version valid then, or for
 * a definition a later template version removed, its last version before the read.
 */
export async function definitionsAt(q: Queryable, tx: ReadTx, ids: Iterable<string>): Promise<Map<string, AttributeDefinition>> {
  const list = [...new Set(ids)];
  const out = new Map<string, AttributeDefinition>();
  if (list.length === 0) return out;
  const args = new SqlArgs();
  const upTo = tx === null ? '' : ` AND d.tx_from <= ${args.add(tx)}`;
  const { rows } = await q.query<{ attr_def_id: string; definition: AttributeDefinition }>(
    `SELECT DISTINCT ON (d.attr_def_id) d.attr_def_id, d.definition FROM attr_def_version d
      WHERE d.attr_def_id = ANY(${args.add(sqlTextArray(list))}::uuid[])${upTo} ORDER BY d.attr_def_id, d.tx_from DESC`, args.values);
  for (const r of rows) out.set(r.attr_def_id, r.definition);
  return out;
}

export function effectiveAttribute(a: AttributeRow, defs: Map<string, AttributeDefinition>): EffectiveAttribute {
  const base = a.definition ?? (a.attr_def_id ? defs.get(a.attr_def_id) : undefined);
  const e: EffectiveAttribute = {
    attribute_id: a.attribute_id, asset_id: a.asset_id, name: a.name, attr_def_id: a.attr_def_id,
    quantity_kind_id: base?.quantity_kind_id ?? null, display_unit_id: base?.default_unit_id ?? null,
    continuity_class: base?.continuity_class ?? 'continuous', writer_class: base?.writer_class ?? 'collector',
    enum_set_id: base?.enum_set_id ?? null, limit_traits: base?.limit_traits ?? null,
    lifecycle_policy: base?.lifecycle_policy ?? null, entry_cadence: base?.entry_cadence ?? null,
    retired: a.retired, overridden_fields: [], tx_id: a.tx_from,
  };
  const allowed = new Set((base?.overridable ?? []).map(overridableField));
  for (const key of Object.keys(a.overrides).sort()) {
    const f = overridableField(key);
    if (!f || !allowed.has(f)) continue;
    (e as unknown as Record<string, unknown>)[f] = a.overrides[key];
    e.overridden_fields.push(f);
  }
  return e;
}

/** Attributes valid at the read, filtered by a caller-built condition on alias a. */
export async function attributesWhere(q: Queryable, tx: ReadTx, build: (args: SqlArgs) => string): Promise<AttributeRow[]> {
  const args = new SqlArgs();
  const valid = validAt('a', tx, args);
  const cond = build(args);
  const { rows } = await q.query<AttributeRow>(`SELECT ${ATTRIBUTE_COLUMNS} FROM attribute_version a WHERE ${valid} AND ${cond}`, args.values);
  return rows;
}

/** Effective attributes for rows already read (one query for all their definitions). */
export async function effectiveAttributes(q: Queryable, tx: ReadTx, rows: AttributeRow[]): Promise<EffectiveAttribute[]> {
  const ids: string[] = [];
  for (const r of rows) if (r.attr_def_id) ids.push(r.attr_def_id);
  const defs = await definitionsAt(q, tx, ids);
  return rows.map((r) => effectiveAttribute(r, defs));
}
