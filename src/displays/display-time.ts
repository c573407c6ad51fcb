// The time a display shows: the zone (an explicit one, else the context asset's effective
// zone, else UTC, and the answer says which), the context for relative expressions (now,
// the zone, the asset's shift starts) and the window of a widget range of any variant.
import type { Queryable } from '../model/db.js';
import type { AssetNode, AssetTree } from '../model/assets/asset-tree.js';
import { DEFAULT_TIMEZONE } from '../model/assets/asset-tree.js';
import { effectiveProperties } from '../model/assets/properties.js';
import { checkTimezone } from '../model/assets/timezones.js';
import { resolveTime, TimeExpressionError, type TimeContext } from './time-expression.js';
import { durationNs, resolveAnchor, episodeSpans, anchorEpisodeIds, type AnchorWindow } from './anchors.js';
import type { WidgetRange } from './display-document.js';
import { ServiceError } from '../errors.js';

/** The asset property holding local shift start times, e.g. ["06:00", "14:00", "22:00"]. */
export const SHIFT_PROPERTY = 'shift_starts';

export interface DisplayTimeContext extends TimeContext {
  timezoneSource: 'explicit' | 'asset' | 'default';
}

export async function displayTimeContext(
  q: Queryable, tree: AssetTree, asset: AssetNode | null, explicitZone: string | undefined, nowNs: bigint,
): Promise<DisplayTimeContext> {
  let timezone = DEFAULT_TIMEZONE;
  let timezoneSource: DisplayTimeContext['timezoneSource'] = 'default';
  let shiftStarts: string[] | null = null;
  if (asset) {
    const p = tree.projection(asset);
    timezone = p.effective_timezone;
    if (p.timezone_source_asset !== null) timezoneSource = 'asset';
    const props = await effectiveProperties(q, null, tree.ancestry(asset));
    const shifts = props.find((x) => x.key === SHIFT_PROPERTY)?.value;
    if (Array.isArray(shifts) && shifts.every((s) => typeof s === 'string')) shiftStarts = shifts as string[];
  }
  if (explicitZone !== undefined) {
    timezone = checkTimezone('timezone', explicitZone);
    timezoneSource = 'explicit';
  }
  return { nowNs, timezone, timezoneSource, shiftStarts };
}

/** A start/end pair evaluated; a bad expression is a 400 naming its field, an inverted or empty window too. */
export function windowOf(start: string | number | bigint, end: string | number | bigint, ctx: TimeContext, field: string): { startNs: bigint; endNs: bigint } {
  const at = (text: string | number | bigint, name: string): bigint => {
    try {
      return resolveTime(text, ctx);
    } catch (e) {
      if (e instanceof TimeExpressionError) throw new ServiceError('invalid-request', `${field}${name}: ${e.message}`, { errors: [{ field: `${field}${name}`, problem: e.message }] });
      throw e;
    }
  };
  const startNs = at(start, 'start');
  const endNs = at(end, 'end');
  if (endNs <= startNs) {
    const problem = endNs === startNs ? 'the window is empty (end equals start)' : 'the window ends before it starts';
    throw new ServiceError('invalid-request', `${field}end: ${problem}`, { errors: [{ field: `${field}end`, problem }] });
  }
  return { startNs, endNs };
}

/** The window of a widget range: start/end, the last duration up to now, or an anchor (resolved or with its reason). */
export async function windowOfRange(q: Queryable, range: WidgetRange, ctx: TimeContext, field: string): Promise<AnchorWindow> {
  if ('anchor' in range) return resolveAnchor(range.anchor, ctx, await episodeSpans(q, anchorEpisodeIds([range.anchor])));
  if ('last' in range) {
    const d = durationNs(range.last);
    if (d === null || d === 0n) throw new ServiceError('invalid-request', `${field}last: not a duration`, { errors: [{ field: `${field}last`, problem: 'not a positive duration ("8h") or ns' }] });
    return { state: 'resolved', start_ns: ctx.nowNs - d, end_ns: ctx.nowNs };
  }
  const w = windowOf(range.start, range.end, ctx, field);
  return { state: 'resolved', start_ns: w.startNs, end_ns: w.endNs };
}
