// Anchored windows: a widget range whose window follows something else. The authored
// anchor is kept as written; resolving it gives a window or an explicit reason, never a
// substituted default range.
//
//   {kind: 'episode', episode_id, before?, after?}  the episode's span, widened by before/after;
//                                                   an open episode runs to now
//   {kind: 'instant', at, before?, after?}          a window around a time expression
//
// before/after are durations ("30m", "2h") or ns. Episodes are read from the episodes
// area's tables with plain SQL; where those tables do not exist (a model without episodes)
// the reason says "episodes not available".
import type { Queryable } from '../model/db.js';
import { sqlTextArray } from '../model/db.js';
import { resolveTime, TimeExpressionError, type TimeContext } from './time-expression.js';
import { isObject } from './display-document.js';

export type AnchorWindow = { state: 'resolved'; start_ns: bigint; end_ns: bigint } | { state: 'unresolved'; reason: string };

const DURATION = /^([0-9]+)(?:\.([0-9]+))?(ms|s|m|h|d|w)$/;
const UNIT_NS: Record<string, bigint> = { ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n, d: 86_400_000_000_000n, w: 604_800_000_000_000n };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A duration ("8h", "1.5d", ns as an integer) in ns, or null when it is not one. Days are 24 h here. */
export function durationNs(v: unknown): bigint | null {
  if (typeof v === 'bigint') return v >= 0n ? v : null;
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : null;
  if (typeof v !== 'string') return null;
  const m = DURATION.exec(v);
  if (!m || m[1].length > 15) return null;
  const frac = m[2] ?? '';
  return (BigInt(m[1] + frac) * UNIT_NS[m[3]]) / 10n ** BigInt(frac.length);
}

interface EpisodeSpan { start_ns: bigint; end_ns: bigint | null; state: string }

/** Episodes by id, or a reason why none can be read. One query for the whole batch. */
export async function episodeSpans(q: Queryable, ids: string[]): Promise<Map<string, EpisodeSpan> | string> {
  const exists = await q.query<{ t: string | null }>("SELECT to_regclass('episode_version')::text AS t");
  if (!exists.rows[0]?.t) return 'episodes not available: this model has no episodes';
  const out = new Map<string, EpisodeSpan>();
  const valid = ids.filter((id) => UUID.test(id));
  if (valid.length === 0) return out;
  const { rows } = await q.query<EpisodeSpan & { episode_id: string }>(
    'SELECT episode_id, start_ns, end_ns, state FROM episode_version WHERE tx_to IS NULL AND episode_id = ANY($1::uuid[])', [sqlTextArray(valid)]);
  for (const r of rows) out.set(r.episode_id, r);
  return out;
}

/** The episode ids a list of anchors refers to. */
export function anchorEpisodeIds(anchors: unknown[]): string[] {
  const ids = new Set<string>();
  for (const a of anchors) if (isObject(a) && a.kind === 'episode' && typeof a.episode_id === 'string') ids.add(a.episode_id.toLowerCase());
  return [...ids];
}

function widen(v: unknown, what: string): bigint | string {
  if (v === undefined || v === null) return 0n;
  const d = durationNs(v);
  return d === null ? `${what} is not a duration ("30m", "2h") or ns` : d;
}

/** Resolves one anchor. `episodes`: what episodeSpans answered for the batch. */
export function resolveAnchor(anchor: unknown, time: TimeContext, episodes: Map<string, EpisodeSpan> | string): AnchorWindow {
  const no = (reason: string): AnchorWindow => ({ state: 'unresolved', reason });
  if (!isObject(anchor)) return no('the anchor is not an object with a kind');
  const before = widen(anchor.before, 'anchor.before');
  const after = widen(anchor.after, 'anchor.after');
  if (typeof before === 'string') return no(before);
  if (typeof after === 'string') return no(after);
  let start: bigint;
  let end: bigint;
  if (anchor.kind === 'episode') {
    if (typeof anchor.episode_id !== 'string' || !UUID.test(anchor.episode_id)) return no('anchor.episode_id is not an episode id (uuid)');
    if (typeof episodes === 'string') return no(episodes);
    const e = episodes.get(anchor.episode_id.toLowerCase());
    if (!e) return no(`episode ${anchor.episode_id} not found`);
    if (e.state === 'void') return no(`episode ${anchor.episode_id} is void`);
    start = e.start_ns;
    end = e.end_ns ?? time.nowNs;
  } else if (anchor.kind === 'instant') {
    if (typeof anchor.at !== 'string' && typeof anchor.at !== 'number' && typeof anchor.at !== 'bigint') return no('anchor.at is not a time expression');
    try {
      start = end = resolveTime(anchor.at, time);
    } catch (e) {
      if (e instanceof TimeExpressionError) return no(`anchor.at: ${e.message}`);
      throw e;
    }
  } else {
    return no(`unknown anchor kind ${JSON.stringify(typeof anchor.kind === 'string' ? anchor.kind : null)} (episode or instant)`);
  }
  start -= before;
  end += after;
  if (end <= start) return no('the anchored window is empty (give before or after)');
  return { state: 'resolved', start_ns: start, end_ns: end };
}
