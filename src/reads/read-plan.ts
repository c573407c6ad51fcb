// From a resolution to what a read worker runs: the plan of attributes and segments
// (src/workers/resolved-points.ts) with each attribute's unit conversion, and the members
// every resolved point task carries. Times cross the thread boundary as decimal strings.
//
//   readTaskBase(resolution, units, options) -> ResolvedTaskBase
import { nowNs } from '../clock.js';
import type { BodyFormat } from '../workers/task-protocol.js';
import type { ExcludeQuality, PlanAttribute, ResolvedTaskBase } from '../workers/resolved-points.js';
import type { ReadResolution } from './read-resolution.js';
import type { EnumMemberNames } from '../series/enum-members.js';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import { answeredUnit, type UnitPlan } from './read-units.js';

/** Default and largest `max_points` of a point read (the largest is the series raw route's MAX_RAW_LIMIT). */
export const DEFAULT_MAX_POINTS = 1_000_000;
export const MAX_MAX_POINTS = 10_000_000;

export interface ReadTaskOptions {
  excludeQuality?: ExcludeQuality;
  format: BodyFormat;
  maxPoints?: number;
  /** Member names by enum set (memberNamesOf): enum rows carry `member`. */
  members?: Record<string, EnumMemberNames>;
}

export function planAttributes(r: ReadResolution, units: Map<string, UnitPlan>): PlanAttribute[] {
  const out: PlanAttribute[] = new Array(r.attributes.length);
  for (let i = 0; i < r.attributes.length; i++) {
    const a = r.attributes[i];
    const u = units.get(a.attributeId);
    out[i] = {
      attributeId: a.attributeId, path: a.path, unitId: answeredUnit(a, units), continuity: a.continuity,
      convert: u === undefined || u.identity ? null : { factor: u.factor, offset: u.offset },
      segments: a.segments.filter((s) => s.valueType !== null).map((s) => ({
        series: s.seriesId, startNs: String(s.startNs), endNs: String(s.endNs),
        boundFromNs: String(s.boundFromNs), boundToNs: s.boundToNs === null ? null : String(s.boundToNs),
        valueType: s.valueType as ValueType, enumSetId: s.enumSetId,
      })),
    };
  }
  return out;
}

export function readTaskBase(r: ReadResolution, units: Map<string, UnitPlan>, o: ReadTaskOptions): ResolvedTaskBase {
  return {
    attributes: planAttributes(r, units),
    windowStartNs: String(r.window.startNs), windowEndNs: String(r.window.endNs), modelAsOfNs: String(r.modelAsOfNs),
    nowNs: String(nowNs()), excludeQuality: o.excludeQuality ?? null, format: o.format, maxPoints: o.maxPoints ?? DEFAULT_MAX_POINTS,
    ...(o.members === undefined ? {} : { members: o.members }),
  };
}
