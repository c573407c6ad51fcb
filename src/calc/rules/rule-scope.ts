// The expression checker's view of the model (its ExpressionScope): what a reference
// means for a rule, the units constants may carry, and enum members by name. A template
// rule's plain names are the template's attribute definitions; its paths (..|Flow) are
// followed from every current asset of the template and must lead to an attribute on
// each. An asset rule's names and paths are followed from that asset.
//
// Keys: an input's key is its reference text as written, so one checked (and compiled)
// expression serves every asset of a template; each asset maps the texts to its own
// attributes (rule-targets.ts).
import type { Queryable } from '../../model/db.js';
import { currentEntryRows, type EntryRow } from '../../model/registries/registry-entries.js';
import { parseRatio, toDouble } from '../../exact-ratio.js';
import type { AttributeDefinition } from '../../model/templates/templates.js';
import type { AssetNode, AssetTree } from '../../model/assets/asset-tree.js';
import type { CachedAttribute } from '../../model/resolve/attribute-cache.js';
import type { ExpressionScope, InputDescriptor, InputValueType, QuantityKindRef, UnitDescriptor } from '../expression/types.js';
import { followReference } from './reference-path.js';

/** The registries an expression may name, read once per check. */
export class RegistryView {
  private constructor(
    private readonly unitsBySymbol: Map<string, UnitDescriptor>,
    private readonly unitsById: Map<string, UnitDescriptor>,
    private readonly kinds: Map<string, QuantityKindRef>,
    private readonly enumSets: Map<string, EntryRow>,
  ) {}

  static async load(q: Queryable): Promise<RegistryView> {
    const [units, kinds, sets] = await Promise.all([currentEntryRows(q, 'units'), currentEntryRows(q, 'quantity-kinds'), currentEntryRows(q, 'enum-sets')]);
    const kindMap = new Map(kinds.map((k) => [k.entry_id, { id: k.entry_id, name: k.name }]));
    const bySymbol = new Map<string, UnitDescriptor>();
    const byId = new Map<string, UnitDescriptor>();
    for (const u of units) {
      const kind = u.kind_id ? kindMap.get(u.kind_id) : undefined;
      const factor = u.factor_exact ? parseRatio(u.factor_exact) : null;
      const offset = u.offset_exact ? parseRatio(u.offset_exact) : null;
      if (!kind || !factor) continue;
      const d: UnitDescriptor = { id: u.entry_id, symbol: u.symbol ?? u.name, quantityKind: kind, factor: toDouble(factor), offset: offset ? toDouble(offset) : 0 };
      byId.set(u.entry_id, d);
      if (u.symbol && !bySymbol.has(u.symbol)) bySymbol.set(u.symbol, d);
    }
    return new RegistryView(bySymbol, byId, kindMap, new Map(sets.map((s) => [s.entry_id, s])));
  }

  unit(symbol: string): UnitDescriptor | null { return this.unitsBySymbol.get(symbol) ?? null; }
  unitById(id: string | null): UnitDescriptor | null { return id === null ? null : this.unitsById.get(id) ?? null; }
  kind(id: string | null): QuantityKindRef | null { return id === null ? null : this.kinds.get(id) ?? null; }

  enumMember(enumSet: string, member: string): number | null {
    const members = this.enumSets.get(enumSet)?.members;
    if (!Array.isArray(members)) return null;
    for (const m of members as Array<{ ordinal?: unknown; name?: unknown }>) {
      if (m && m.name === member && (typeof m.ordinal === 'number' || typeof m.ordinal === 'bigint')) return Number(m.ordinal);
    }
    return null;
  }
}

const SERIES_TYPES: Record<string, InputValueType> = { float64: 'float64', int64: 'int64', boolean: 'bool', string: 'string', enum: 'enum' };

/** What the expression sees of an attribute: from its definition, and the bound series' type when known. */
export function describeAttribute(key: string, reg: RegistryView, a: { quantity_kind_id: string | null; unit_id: string | null; enum_set_id: string | null }, seriesType: string | null): InputDescriptor {
  const valueType: InputValueType = seriesType && SERIES_TYPES[seriesType] ? SERIES_TYPES[seriesType] : a.enum_set_id ? 'enum' : 'float64';
  return { key, valueType, quantityKind: reg.kind(a.quantity_kind_id), unitId: a.unit_id, unit: reg.unitById(a.unit_id), enumSet: a.enum_set_id };
}

export function describeDefinition(key: string, reg: RegistryView, d: AttributeDefinition): InputDescriptor {
  return describeAttribute(key, reg, { quantity_kind_id: d.quantity_kind_id, unit_id: d.default_unit_id, enum_set_id: d.enum_set_id }, null);
}

export function describeCached(key: string, reg: RegistryView, c: CachedAttribute, seriesType: string | null): InputDescriptor {
  const e = c.effective;
  return describeAttribute(key, reg, { quantity_kind_id: e.quantity_kind_id, unit_id: e.display_unit_id, enum_set_id: e.enum_set_id }, seriesType);
}

/** The attribute a reference leads to from one asset, or null. */
export function attributeFor(tree: AssetTree, from: AssetNode, text: string, attributes: Map<string, CachedAttribute[]>): CachedAttribute | null {
  const target = followReference(tree, from, text);
  if (!target) return null;
  return attributes.get(target.asset.asset_id)?.find((c) => c.effective.name === target.attributeName && !c.effective.retired) ?? null;
}

/** The series an attribute is bound to now (its open binding), or null. */
export function currentSeries(c: CachedAttribute): string | null {
  for (let i = c.bindings.length - 1; i >= 0; i--) if (c.bindings[i].to_ns === null) return c.bindings[i].series_id;
  return null;
}

/**
 * A scope that answers references and records which texts were asked (the rule's
 * input_refs, for cycle checks). `resolve` maps a reference text to its descriptor.
 */
export class RecordingScope implements ExpressionScope {
  readonly asked = new Set<string>();
  constructor(private readonly reg: RegistryView, private readonly resolve: (text: string) => InputDescriptor | null) {}
  reference(text: string): InputDescriptor | null {
    const d = this.resolve(text);
    if (d) this.asked.add(text);
    return d;
  }
  unit(symbol: string): UnitDescriptor | null { return this.reg.unit(symbol); }
  enumMember(enumSet: string, member: string): number | null { return this.reg.enumMember(enumSet, member); }
}
