// What a live subscription follows, resolved now: the attributes of its `resolve` the
// caller may read, each with the series bound to it, its value type, its points' filter
// (quality floor, unit conversion) and the fixed text of its event members; and each
// one's latest value, the initial value a subscription sends (live-subscription.ts).
import type { ServiceContext } from '../../service-context.js';
import { ServiceError } from '../../errors.js';
import { nowNs } from '../../clock.js';
import { pointBefore, readMeta, readSnapshot, readSnapshotAt, seriesKey, type ReadView, type SnapshotPoint } from '../../storage/series-store.js';
import type { ValueType } from '../../storage/encoding/chunk-types.js';
import { ValueConverter, minQuality } from '../../workers/resolved-points.js';
import { resolveRead, type Can, type ResolveRequest } from '../read-resolution.js';
import { unitPlans, type ReadUnitsRequest } from '../read-units.js';
import { pointsText, type PointFilter } from './live-format.js';

/** Attributes one subscription may follow (a larger scope is refused with 400 naming this limit). */
export const MAX_LIVE_ATTRIBUTES = 10_000;

/**
 * The subscriber's current read permission, asked again at each resolution: null when its
 * credentials no longer authenticate or no longer grant read anywhere.
 */
export type LiveAccess = () => Promise<Can | null>;

/** What a subscription asks besides its `resolve` (the resolved reads' members of the same names). */
export interface LiveOptions {
  units?: ReadUnitsRequest;
  exclude_quality?: 'bad' | 'bad_and_uncertain';
}

/** One resolved attribute a subscription follows. */
export interface Target {
  attributeId: string;
  path: string;
  series: string | null;
  valueType: ValueType | null;
  enumSetId: string | null;
  /** The quality floor and unit conversion of its points. */
  filter: PointFilter;
  /** Names (value type, enum set, filter): columns formatted under one key are shared. */
  formatKey: string;
  /** `{"attribute_id":…,"path":…,"unit_id":…,"series":…,` ready to prefix a member. */
  head: string;
  /** The head and `"points":` as UTF-8, ahead of each points array. */
  pointsHead: Uint8Array;
  /** The initial value sent: a committed point equal to it is not sent again. */
  dedupe: { ts: bigint; text: string } | null;
}

/** Resolves the request now for the caller's current permission (ServiceError when it cannot be served). */
export async function resolveTargets(service: ServiceContext, access: LiveAccess, req: ResolveRequest, options: LiveOptions): Promise<{ targets: Target[]; modelTx: bigint }> {
  const can = await access();
  if (can === null) throw new ServiceError('unauthenticated', 'the subscription\'s credentials no longer authenticate (logged out, revoked or expired) or no longer grant read');
  const r = await resolveRead(service, can, req, { atNs: nowNs() });
  if (r.attributes.length > MAX_LIVE_ATTRIBUTES) {
    throw new ServiceError('read-too-large', `resolve: the subscription resolves to ${r.attributes.length} attributes, more than the limit of ${MAX_LIVE_ATTRIBUTES} for one live subscription; narrow select or scope`,
      { limit: MAX_LIVE_ATTRIBUTES, field: 'resolve' });
  }
  let plans: Awaited<ReturnType<typeof unitPlans>>;
  try {
    plans = await unitPlans(service, r.attributes, options.units);
  } catch (e) {
    if (e instanceof ServiceError && e.code === 'invalid-request') throw new UnitsRefused(e);
    throw e;
  }
  const floor = minQuality(options.exclude_quality ?? null);
  const converters = new Map<string, ValueConverter>();
  const targets = r.attributes.map((a): Target => {
    const seg = a.segments.length > 0 ? a.segments[a.segments.length - 1] : null;
    const series = seg?.seriesId ?? null;
    const plan = plans.get(a.attributeId);
    let convert: ValueConverter | null = null;
    let convKey = '';
    if (plan && !plan.identity) {
      convKey = `${plan.factor}|${plan.offset}`;
      convert = converters.get(convKey) ?? new ValueConverter(plan);
      converters.set(convKey, convert);
    }
    const valueType = seg?.valueType ?? null;
    const unitId = plan?.to ?? a.unitId;
    const head = `{"attribute_id":"${a.attributeId}","path":${JSON.stringify(a.path)},"unit_id":${unitId === null ? 'null' : `"${unitId}"`},"series":${series === null ? 'null' : `"${series}"`},`;
    return {
      attributeId: a.attributeId, path: a.path, series, valueType, enumSetId: a.enumSetId,
      filter: { minQuality: floor, convert }, formatKey: `${valueType}/${a.enumSetId}/${floor}/${convKey}`,
      head, pointsHead: Buffer.from(`${head}"points":`, 'utf8'), dedupe: null,
    };
  });
  return { targets, modelTx: r.modelTx };
}

/** The request's units do not fit the resolved attributes: 400 at the start, `closing` (units-incompatible) later. */
export class UnitsRefused extends ServiceError {
  constructor(e: ServiceError) {
    super(e.code, e.message, e.details);
  }
}

/** How far back an initial value looks past points the quality filter drops (as the resolved snapshot). */
const PRIOR_WALK = 64;

/**
 * The target's latest point its filter keeps, as JSON text: the series head's, else (its
 * quality is below the floor) the latest kept one before it, looking back past at most
 * PRIOR_WALK dropped points (as POST /v1/read/snapshot does).
 */
export function latestText(view: ReadView, t: Target): { ts: bigint; text: string } | null {
  if (t.series === null) return null;
  const meta = readMeta(view, t.series);
  if (!meta) return null;
  let p: SnapshotPoint | null = readSnapshot(view, t.series, true);
  if (p !== null && p.quality < t.filter.minQuality) {
    const key = seriesKey(t.series);
    let at = p.ts;
    p = null;
    for (let step = 0; step <= PRIOR_WALK; step++) {
      const e = pointBefore(view, key, at);
      if (e === null) break;
      if (e.quality >= t.filter.minQuality) { p = readSnapshotAt(view, t.series, e.ts); break; }
      at = e.ts;
    }
  }
  if (p === null) return null;
  const one = pointsText({ series: t.series, times: BigInt64Array.of(p.ts), values: [p.value], quality: Uint32Array.of(p.quality) }, t.valueType ?? meta.type, t.enumSetId, t.filter).text;
  return { ts: p.ts, text: one.slice(1, -1) };
}

export function seriesOf(targets: Iterable<Target>): string[] {
  const out = new Set<string>();
  for (const t of targets) if (t.series !== null) out.add(t.series);
  return [...out];
}
