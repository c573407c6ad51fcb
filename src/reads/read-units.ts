// Units of a resolved read: a read may ask each attribute's values in another unit of the
// same quantity kind (body `units`: a `default` for every attribute with a unit, or one per
// attribute id). Stored values are in the attribute's own unit (its effective display
// unit). The conversion is the registry's exact one (unit-conversion.ts): factor and
// offset kept as exact ratios, each value rounded once; the worker applies it
// (src/workers/resolved-points.ts) from the ratios' text.
//
//   unitPlans(service, attributes, units) -> Map<attributeId, UnitPlan>  (only converted ones)
//   UnitPlan { from, to, factor: "n/d", offset: "n/d" }
// An incompatible unit is a 400 naming the attribute and both units.
import type { ServiceContext } from '../service-context.js';
import { ServiceError } from '../errors.js';
import { UUID_RE } from '../uuid.js';
import { formatRatio } from '../exact-ratio.js';
import { unitScales } from '../model/registries/registry-entries.js';
import { unitConversion } from '../model/registries/unit-conversion.js';
import type { ReadAttribute } from './read-resolution.js';

export interface ReadUnitsRequest {
  default?: string;
  attributes?: Record<string, string>;
}

export interface UnitPlan {
  /** The attribute's own unit (what is stored). */
  from: string;
  /** The unit answered. */
  to: string;
  /** Exact ratios as text ("n" or "n/d"): v_to = v_from * factor + offset. */
  factor: string;
  offset: string;
  /** An alias (factor 1, offset 0): values pass unchanged. */
  identity: boolean;
}

const bad = (field: string, problem: string, extra: Record<string, unknown> = {}) =>
  new ServiceError('invalid-request', `${field}: ${problem}`, { errors: [{ field, problem, ...extra }] });

/** The conversions the request asks for, by attribute id (none for an attribute read in its own unit). */
export async function unitPlans(service: ServiceContext, attributes: readonly ReadAttribute[], units: ReadUnitsRequest | undefined): Promise<Map<string, UnitPlan>> {
  const plans = new Map<string, UnitPlan>();
  if (!units || (units.default === undefined && (units.attributes === undefined || Object.keys(units.attributes).length === 0))) return plans;
  const perAttribute = units.attributes ?? {};
  for (const id of Object.keys(perAttribute)) if (!UUID_RE.test(id)) throw bad('units.attributes', `key "${id}" is not an attribute id (uuid)`);
  const wanted = new Map<string, string>();
  for (const a of attributes) {
    const to = perAttribute[a.attributeId] ?? perAttribute[a.attributeId.toLowerCase()] ?? units.default;
    if (to === undefined) continue;
    if (a.unitId === null) {
      // `default` skips attributes without a unit; naming one explicitly is an error.
      if (perAttribute[a.attributeId] !== undefined) {
        throw bad(`units.attributes.${a.attributeId}`, `attribute ${a.path} (${a.attributeId}) has no unit, so its values cannot be read in unit ${to}`, { attribute_id: a.attributeId, unit_id: to });
      }
      continue;
    }
    if (to === a.unitId) continue;
    wanted.set(a.attributeId, to);
  }
  if (wanted.size === 0) return plans;
  const ids = new Set<string>(wanted.values());
  for (const a of attributes) if (wanted.has(a.attributeId) && a.unitId !== null) ids.add(a.unitId);
  const model = service.parts.model;
  if (!model) throw new ServiceError('model-unavailable', 'the asset model is not started');
  const scales = await unitScales(model.db, [...ids]);
  for (const a of attributes) {
    const to = wanted.get(a.attributeId);
    if (to === undefined || a.unitId === null) continue;
    const field = perAttribute[a.attributeId] !== undefined ? `units.attributes.${a.attributeId}` : 'units.default';
    const target = scales.get(to);
    if (!target) throw bad(field, `no unit ${to} in the registry`, { attribute_id: a.attributeId, unit_id: to });
    const own = scales.get(a.unitId);
    if (!own) throw bad(field, `attribute ${a.path} (${a.attributeId}) has unit ${a.unitId}, which is not in the registry`, { attribute_id: a.attributeId, unit_id: to });
    if (own.kindId !== target.kindId) {
      throw bad(field, `attribute ${a.path} (${a.attributeId}) is in unit ${a.unitId} (quantity kind ${own.kindId}); unit ${to} measures quantity kind ${target.kindId}, so they do not convert`,
        { attribute_id: a.attributeId, attribute_unit_id: a.unitId, unit_id: to });
    }
    const c = unitConversion(own, target);
    plans.set(a.attributeId, { from: a.unitId, to, factor: formatRatio(c.factor), offset: formatRatio(c.offset), identity: c.identity });
  }
  return plans;
}

/** The unit an attribute's values are answered in. */
export const answeredUnit = (a: ReadAttribute, plans: Map<string, UnitPlan>): string | null => plans.get(a.attributeId)?.to ?? a.unitId;
