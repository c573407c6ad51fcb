// Windows as the service evaluates them. Expressions that do not depend on a time zone
// (`*`, `now`, `*-8h`, ns, an ISO 8601 instant with its offset) resolve in the page with no
// round trip; the others (`t`, `y+6h`, `shift`, a local ISO time) go to
// POST /v1/displays/time/resolve with the context asset, whose effective zone and shift
// starts apply, and an anchored widget range goes there too (the anchor resolves in the
// model, or comes back with the reason it cannot). Without that route the page resolves
// everything in the browser's zone.
import { post, isMissingRoute } from './api.js';
import { resolveWindow, TimeExpressionError, type TimeWindow } from './time.js';

const ZONE_FREE = /^\s*(?:(?:\*|now)?(?:\s*[+-]\s*\d+(?:\.\d+)?\s*(?:ms|s|m|h|d|w))*|\d{16,19}|\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d))\s*$/i;

interface TimeResolution { state: 'resolved' | 'unresolved'; start_ns: number | null; end_ns: number | null; reason: string | null }

let serviceResolves = true;

async function viaService(body: Record<string, unknown>): Promise<TimeResolution | null> {
  if (!serviceResolves) return null;
  try {
    return await post<TimeResolution>('/v1/displays/time/resolve', body);
  } catch (e) {
    if (isMissingRoute(e)) { serviceResolves = false; return null; }
    throw new TimeExpressionError(e instanceof Error ? e.message : String(e));
  }
}

const isLive = (end: string) => /^\s*(\*|now)\s*$/i.test(end);

/** A start and end in the context asset's zone; throws TimeExpressionError naming the problem. */
export async function resolveWindowIn(start: string, end: string, contextAsset: string | null): Promise<TimeWindow> {
  if (ZONE_FREE.test(start) && ZONE_FREE.test(end)) return resolveWindow(start, end);
  const r = await viaService({ start, end, ...(contextAsset ? { asset_id: contextAsset } : {}) });
  if (!r) return resolveWindow(start, end);
  if (r.state !== 'resolved' || r.start_ns === null || r.end_ns === null) throw new TimeExpressionError(r.reason ?? `${start} to ${end} did not resolve`);
  if (!(r.end_ns > r.start_ns)) throw new TimeExpressionError(`the window ${start} to ${end} is empty or inverted`);
  return { startMs: r.start_ns / 1e6, endMs: r.end_ns / 1e6, live: isLive(end) };
}

/** A widget's `range`: start and end, the last duration, or an anchored window (never replaced by a default). */
export async function resolveRange(range: Record<string, unknown>, contextAsset: string | null): Promise<TimeWindow> {
  if ('start' in range && 'end' in range && !('anchor' in range)) return resolveWindowIn(String(range.start), String(range.end), contextAsset);
  const r = await viaService({ range, ...(contextAsset ? { asset_id: contextAsset } : {}) });
  if (r) {
    if (r.state !== 'resolved' || r.start_ns === null || r.end_ns === null) throw new TimeExpressionError(`the anchored window cannot be resolved: ${r.reason ?? 'no reason given'}`);
    return { startMs: r.start_ns / 1e6, endMs: r.end_ns / 1e6, live: 'last' in range };
  }
  if ('last' in range) {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(String(range.last));
    const ms = typeof range.last === 'number' ? range.last / 1e6 : m ? Number(m[1]) * { ms: 1, s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8 }[m[2] as 'ms'] : null;
    if (ms === null) throw new TimeExpressionError(`range.last ${String(range.last)} is not a duration`);
    const now = Date.now();
    return { startMs: now - ms, endMs: now, live: true };
  }
  throw new TimeExpressionError('the anchored window cannot be resolved: the service does not resolve anchors');
}
