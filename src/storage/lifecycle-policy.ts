// `service-lifecycle-policy/v1`: what a series keeps and for how long, validated here so
// that the route, the engine and the enforcement read one shape.
//   raw:        {keep: 'forever'} or {keep_days: n >= 0, then: 'rollups' | 'delete'}
//               ('rollups' = after keep_days the raw chunks go and the rollups stay;
//                'delete' = rollups of that time go too)
//   rollups:    {keep: 'forever' | '<n>d'}
//   annotations:{keep: 'forever' | '<n>d'}   (annotations live in the model; enforcement
//               returns their cutoff for the model to apply)
//   swinging_door (optional, float64 series only): applied when a head is sealed, with
//               deviation maxdev_percent_of_range % of (range_max - range_min).
import { invalid } from '../errors.js';

export const LIFECYCLE_SCHEMA = 'service-lifecycle-policy/v1';

export interface LifecyclePolicy {
  schema: typeof LIFECYCLE_SCHEMA;
  raw: { keep: string } | { keep_days: number; then: 'rollups' | 'delete' };
  rollups: { keep: string };
  annotations: { keep: string };
  swinging_door?: { maxdev_percent_of_range: number; range_max: number; range_min: number };
}

const KEEP_RE = /^(forever|[0-9]{1,6}d)$/;
const NS_PER_DAY = 86_400_000_000_000n;

/** ns a `keep` string retains, null for forever. */
export function keepNs(keep: string): bigint | null {
  if (keep === 'forever') return null;
  return BigInt(keep.slice(0, -1)) * NS_PER_DAY;
}

function obj(v: unknown, field: string, keys: string[]): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid(field, 'must be an object');
  for (const k of Object.keys(v)) if (!keys.includes(k)) throw invalid(`${field}.${k}`, 'is not a known field');
  return v as Record<string, unknown>;
}

function keep(v: unknown, field: string): { keep: string } {
  const o = obj(v, field, ['keep']);
  if (typeof o.keep !== 'string' || !KEEP_RE.test(o.keep)) throw invalid(`${field}.keep`, "must be 'forever' or '<days>d'");
  return { keep: o.keep };
}

function finite(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(field, 'must be a finite number');
  return v;
}

/** Validates an untrusted policy document; throws invalid-request naming the field. */
export function parseLifecyclePolicy(v: unknown): LifecyclePolicy {
  const o = obj(v, 'policy', ['schema', 'raw', 'rollups', 'annotations', 'swinging_door']);
  if (o.schema !== LIFECYCLE_SCHEMA) throw invalid('policy.schema', `must be '${LIFECYCLE_SCHEMA}'`);
  const rawObj = obj(o.raw, 'policy.raw', ['keep', 'keep_days', 'then']);
  let raw: LifecyclePolicy['raw'];
  if ('keep' in rawObj) {
    if ('keep_days' in rawObj || 'then' in rawObj) throw invalid('policy.raw', 'is either {keep} or {keep_days, then}');
    raw = keep(rawObj, 'policy.raw');
  } else {
    const days = rawObj.keep_days;
    if (typeof days !== 'number' || !Number.isInteger(days) || days < 0 || days > 1_000_000) throw invalid('policy.raw.keep_days', 'must be an integer >= 0');
    if (rawObj.then !== 'rollups' && rawObj.then !== 'delete') throw invalid('policy.raw.then', "must be 'rollups' or 'delete'");
    raw = { keep_days: days, then: rawObj.then };
  }
  const policy: LifecyclePolicy = { schema: LIFECYCLE_SCHEMA, raw, rollups: keep(o.rollups, 'policy.rollups'), annotations: keep(o.annotations, 'policy.annotations') };
  if (o.swinging_door !== undefined) {
    const s = obj(o.swinging_door, 'policy.swinging_door', ['maxdev_percent_of_range', 'range_max', 'range_min']);
    const pct = finite(s.maxdev_percent_of_range, 'policy.swinging_door.maxdev_percent_of_range');
    const hi = finite(s.range_max, 'policy.swinging_door.range_max');
    const lo = finite(s.range_min, 'policy.swinging_door.range_min');
    if (pct < 0 || pct > 100) throw invalid('policy.swinging_door.maxdev_percent_of_range', 'must be within 0..100');
    if (!(hi > lo)) throw invalid('policy.swinging_door.range_max', 'must be greater than range_min');
    policy.swinging_door = { maxdev_percent_of_range: pct, range_max: hi, range_min: lo };
  }
  return policy;
}
