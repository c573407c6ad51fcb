// Model lints: problems a modeller must see, each with a stable code, a severity, the
// resource and a message. Computed from the current model in a handful of set queries
// (never one query per attribute), so the whole model is linted in one request.
import type { Queryable } from '../db.js';
import { nowNs } from '../../clock.js';
import { effectiveAttributes, attributesWhere, type EffectiveAttribute } from '../attributes/effective.js';
import { templatesAt } from '../templates/templates.js';
import { currentEntryRows, type EntryRow } from '../registries/registry-entries.js';
import { attributePath, type AssetTree } from '../assets/asset-tree.js';

export type Severity = 'error' | 'warning' | 'info';

export interface Lint {
  code: string;
  severity: Severity;
  /** path: "/asset/path|attribute" for attribute and binding lints; asset_id: the asset they sit on. */
  resource: { kind: string; id: string; path: string | null; asset_id?: string };
  message: string;
}

/** Every lint code with its severity and what it means (the contract lists them). */
export const LINT_CODES = {
  'attribute-unbound': { severity: 'warning', meaning: 'A current attribute of a current asset has no binding covering now.' },
  'attribute-unit-not-in-kind': { severity: 'error', meaning: "The attribute's display unit measures another quantity kind than the attribute's." },
  'attribute-unit-unknown': { severity: 'error', meaning: "The attribute's display unit is not a current unit entry." },
  'attribute-quantity-kind-unknown': { severity: 'error', meaning: "The attribute's quantity kind is not a current quantity-kind entry." },
  'attribute-unit-without-kind': { severity: 'warning', meaning: 'The attribute has a display unit but no quantity kind, so the unit cannot be checked.' },
  'attribute-enum-set-unknown': { severity: 'error', meaning: "The attribute's enum set is not a current enum-set entry." },
  'binding-value-type': { severity: 'error', meaning: "The bound series' value type does not fit the attribute (enum set, or numeric quantity)." },
  'binding-enum-set-differs': { severity: 'error', meaning: 'The attribute and its bound enum series name different enum sets.' },
  'binding-series-missing': { severity: 'error', meaning: 'A current binding names a series that has no series record.' },
  'template-unit-not-in-kind': { severity: 'error', meaning: "A template definition's default unit measures another quantity kind than the definition's." },
  'template-unused': { severity: 'info', meaning: 'No current asset uses the template.' },
  'enum-set-empty': { severity: 'warning', meaning: 'The enum set has no members.' },
} as const satisfies Record<string, { severity: Severity; meaning: string }>;
export type LintCode = keyof typeof LINT_CODES;

const NUMERIC = new Set(['float64', 'int64']);

function lint(code: LintCode, kind: string, id: string, path: string | null, message: string, assetId?: string): Lint {
  return { code, severity: LINT_CODES[code].severity, resource: { kind, id, path, ...(assetId ? { asset_id: assetId } : {}) }, message };
}

interface BindingRow { attribute_id: string; binding_id: string; series_id: string; value_type: string | null; enum_set_id: string | null }

export async function modelLints(q: Queryable, tree: AssetTree): Promise<Lint[]> {
  const out: Lint[] = [];
  const [units, kinds, enumSets] = await Promise.all([currentEntryRows(q, 'units'), currentEntryRows(q, 'quantity-kinds'), currentEntryRows(q, 'enum-sets')]);
  const unitById = new Map<string, EntryRow>(units.map((u) => [u.entry_id, u]));
  const kindIds = new Set(kinds.map((k) => k.entry_id));
  const enumIds = new Set(enumSets.map((e) => e.entry_id));
  const unitName = (id: string) => { const u = unitById.get(id); return u ? `${u.name} (${u.symbol ?? ''})` : id; };

  // Attributes of current, unretired assets.
  const rows = await attributesWhere(q, null, () => 'NOT a.retired');
  const attrs = (await effectiveAttributes(q, null, rows)).filter((a) => {
    const n = tree.get(a.asset_id);
    return n !== undefined && !tree.effectivelyRetired(n);
  });
  const pathOf = (a: EffectiveAttribute) => { const n = tree.get(a.asset_id); return n ? attributePath(tree.path(n), a.name) : null; };

  const now = nowNs();
  const { rows: bindings } = await q.query<BindingRow>(
    `SELECT b.attribute_id, b.binding_id, b.series_id, s.value_type, s.enum_set_id
       FROM binding_version b LEFT JOIN series s ON s.series_id = b.series_id
      WHERE b.tx_to IS NULL AND b.from_ns <= $1 AND (b.to_ns IS NULL OR b.to_ns > $1)`, [now]);
  const bindingOf = new Map(bindings.map((b) => [b.attribute_id, b]));

  for (const a of attrs) {
    const path = pathOf(a);
    const res = (code: LintCode, message: string) => out.push(lint(code, 'attribute', a.attribute_id, path, message, a.asset_id));
    if (a.quantity_kind_id && !kindIds.has(a.quantity_kind_id)) res('attribute-quantity-kind-unknown', `quantity kind ${a.quantity_kind_id} is not in the registry`);
    if (a.display_unit_id) {
      const u = unitById.get(a.display_unit_id);
      if (!u) res('attribute-unit-unknown', `unit ${a.display_unit_id} is not in the registry`);
      else if (!a.quantity_kind_id) res('attribute-unit-without-kind', `unit ${unitName(u.entry_id)} is set without a quantity kind`);
      else if (u.kind_id !== a.quantity_kind_id) res('attribute-unit-not-in-kind', `unit ${unitName(u.entry_id)} does not measure the attribute's quantity kind`);
    }
    if (a.enum_set_id && !enumIds.has(a.enum_set_id)) res('attribute-enum-set-unknown', `enum set ${a.enum_set_id} is not in the registry`);
    const b = bindingOf.get(a.attribute_id);
    if (!b) { res('attribute-unbound', 'no series is bound to the attribute now'); continue; }
    const bres = (code: LintCode, message: string) => out.push(lint(code, 'binding', b.binding_id, path, message, a.asset_id));
    if (b.value_type === null) { bres('binding-series-missing', `series ${b.series_id} has no series record`); continue; }
    if (a.enum_set_id) {
      if (b.value_type !== 'enum') bres('binding-value-type', `the attribute has an enum set but series ${b.series_id} holds ${b.value_type} values`);
      else if (b.enum_set_id !== a.enum_set_id) bres('binding-enum-set-differs', `series ${b.series_id} uses enum set ${b.enum_set_id}, the attribute ${a.enum_set_id}`);
    } else if (a.quantity_kind_id && !NUMERIC.has(b.value_type)) {
      bres('binding-value-type', `the attribute measures a quantity but series ${b.series_id} holds ${b.value_type} values`);
    }
  }

  // Templates: definitions whose default unit is of another kind; templates nobody uses.
  const used = new Set<string>();
  for (const n of tree.nodes.values()) if (n.template_id && !tree.effectivelyRetired(n)) used.add(n.template_id);
  for (const t of await templatesAt(q, null)) {
    if (!used.has(t.template_id)) out.push(lint('template-unused', 'template', t.template_id, null, `no current asset uses template "${t.name}"`));
    for (const [defId, d] of t.attributes) {
      const u = d.default_unit_id ? unitById.get(d.default_unit_id) : undefined;
      if (u && d.quantity_kind_id && u.kind_id !== d.quantity_kind_id) {
        out.push(lint('template-unit-not-in-kind', 'template', t.template_id, null, `definition "${d.name}" (${defId}): unit ${unitName(u.entry_id)} does not measure its quantity kind`));
      }
    }
  }

  for (const e of enumSets) {
    if (!Array.isArray(e.members) || e.members.length === 0) out.push(lint('enum-set-empty', 'registry-entry', e.entry_id, null, `enum set "${e.name}" has no members`));
  }
  return out;
}
