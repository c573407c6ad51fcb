// What POST /v1/read/summary needs beyond the shared read plan: the interval grid of the
// request and, per attribute, how its values integrate to a total (the quantity kind's
// `integrates_to` and the registry's unit factors: a flow in m³/h totals to m³).
//
//   parseInterval(text | ns) -> bigint ns        ("500ms", "30s", "15m", "1h", "1d", "7d", or ns)
//   summaryBoundaries(startNs, endNs, intervalNs) -> BigInt64Array
//   totalPlans(service, attributes) -> Array<TotalPlan | null>   (same order)
//
// A total is the integral of the signal over the covered time. Every canonical rate unit
// of the seeded registry is "per second" (m³/s, kg/s, W = J/s), so the total of a value v
// stored in unit u is ∫ (v·f_u + o_u) dt with dt in seconds, in the canonical unit of the
// kind the rate integrates to (m³, kg, J). An attribute whose kind has no `integrates_to`
// (a temperature, a level) has no total: `total` is null there, never an error.
import type { ServiceContext } from '../service-context.js';
import { ServiceError, invalid } from '../errors.js';
import { toDouble } from '../exact-ratio.js';
import { entryRow, unitScales } from '../model/registries/registry-entries.js';
import { uniformBoundaries } from '../storage/series-store.js';
import type { ReadAttribute } from './read-resolution.js';

export interface TotalPlan {
  /** Stored unit to the canonical rate: canonical = v * factor + offset (doubles of the exact ratios). */
  factor: number;
  offset: number;
  /** The unit the total is in: the canonical unit of the kind the rate integrates to. */
  unitId: string;
}

const UNIT_NS: Record<string, bigint> = { ns: 1n, us: 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n, d: 86_400_000_000_000n };

/** An interval as a duration string (`<integer><unit>`, units ns us ms s m h d) or an integer of ns. */
export function parseInterval(x: string | number | bigint): bigint {
  if (typeof x !== 'string') {
    const n = BigInt(x);
    if (n <= 0n) throw invalid('interval', 'must be a positive number of ns or a duration such as "1m", "1h", "1d"');
    return n;
  }
  const m = /^([0-9]{1,15})(ns|us|ms|s|m|h|d)$/.exec(x);
  if (!m) throw invalid('interval', `"${x}" is not a duration: an integer and one of ns, us, ms, s, m, h, d (e.g. "15m", "1d"), or an integer of ns`);
  const n = BigInt(m[1]) * UNIT_NS[m[2]];
  if (n <= 0n) throw invalid('interval', 'must be positive');
  return n;
}

export function summaryBoundaries(startNs: bigint, endNs: bigint, intervalNs: bigint): BigInt64Array {
  if (endNs <= startNs) throw invalid('end_ns', 'must be greater than start_ns');
  if (intervalNs >= 2n ** 52n) throw invalid('interval', 'must be shorter than 2^52 ns (52 days)');
  return uniformBoundaries(startNs, endNs, intervalNs);
}

/** Per attribute (same order): how its stored values integrate to a total, or null when they do not. */
export async function totalPlans(service: ServiceContext, attributes: readonly ReadAttribute[]): Promise<Array<TotalPlan | null>> {
  const model = service.parts.model;
  if (!model) throw new ServiceError('model-unavailable', 'the asset model is not started');
  const units = [...new Set(attributes.map((a) => a.unitId).filter((u): u is string => u !== null))];
  const scales = units.length > 0 ? await unitScales(model.db, units) : new Map();
  // kind -> canonical unit of the kind it integrates to (null: none)
  const integrated = new Map<string, string | null>();
  const out: Array<TotalPlan | null> = new Array(attributes.length).fill(null);
  for (let i = 0; i < attributes.length; i++) {
    const a = attributes[i];
    if (a.unitId === null) continue;
    const scale = scales.get(a.unitId);
    if (!scale) continue;
    const kind = a.quantityKindId ?? scale.kindId;
    let target = integrated.get(kind);
    if (target === undefined) {
      const k = await entryRow(model.db, 'quantity-kinds', kind);
      const to = k?.integrates_to ? await entryRow(model.db, 'quantity-kinds', k.integrates_to) : null;
      target = to?.canonical_unit_id ?? null;
      integrated.set(kind, target);
    }
    if (target === null) continue;
    out[i] = { factor: toDouble(scale.factor), offset: toDouble(scale.offset), unitId: target };
  }
  return out;
}
