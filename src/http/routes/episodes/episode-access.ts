// Who may see and change an episode. An episode is about its assets: reading it needs
// `read` on every asset it names, changing it `episode-manage` on every one (an episode
// without assets needs the capability on the whole model). "Every", not "any": a batch on
// a line and a lab analyser would otherwise show the lab's asset to someone who may read
// only the line. Unreadable episodes answer 404, so their existence does not leak.
import type { HandlerContext } from '../../route.js';
import type { Capability } from '../../../auth/capabilities.js';
import type { Db } from '../../../model/db.js';
import type { Who } from '../../../model/tx-log.js';
import { ServiceError } from '../../../errors.js';
import type { Episode } from '../../../episodes/episode-store.js';
import type { EpisodesPart } from '../../../episodes/episodes-part.js';

export function episodesOf(ctx: HandlerContext): { db: Db; part: EpisodesPart } {
  const part = ctx.service.parts.episodes;
  if (!part || !ctx.service.parts.model) throw new ServiceError('model-unavailable', 'the episodes part is not started');
  return { db: ctx.service.db, part };
}

export function who(ctx: HandlerContext, reason: string | undefined): Who {
  return { principal: ctx.principal?.subject ?? 'anonymous', reason: reason ?? '' };
}

/** A memoised "may use the capability on these assets" for one request. */
export function assetGate(ctx: HandlerContext, cap: Capability): (assetIds: string[]) => Promise<boolean> {
  const seen = new Map<string, Promise<boolean>>();
  let everything: Promise<boolean> | null = null;
  const one = (id: string) => {
    let p = seen.get(id);
    if (!p) { p = ctx.can(cap, { kind: 'asset', id }); seen.set(id, p); }
    return p;
  };
  return async (assetIds) => {
    everything ??= ctx.can(cap, { kind: 'global' });
    if (await everything) return true;
    if (assetIds.length === 0) return false;
    for (const id of assetIds) if (!(await one(id))) return false;
    return true;
  };
}

export const assetsOf = (e: Pick<Episode, 'assets'>): string[] => [...new Set(e.assets.map((a) => a.asset_id))];

/** Throws 404 when the caller may not read the episode, 403 when it may read but not `cap`. */
export async function authorizeEpisode(ctx: HandlerContext, e: Episode | null, id: string, cap: Capability): Promise<Episode> {
  if (!e || !(await assetGate(ctx, 'read')(assetsOf(e)))) throw new ServiceError('not-found', `episode ${id} not found`);
  if (cap !== 'read' && !(await assetGate(ctx, cap)(assetsOf(e)))) throw new ServiceError('forbidden', `capability ${cap} is not granted on every asset of episode ${id}`);
  return e;
}

/** Refuses (403) a change that names assets the caller may not manage episodes on. */
export async function authorizeAssets(ctx: HandlerContext, assetIds: string[]): Promise<void> {
  if (!(await assetGate(ctx, 'episode-manage')([...new Set(assetIds)]))) {
    throw new ServiceError('forbidden', 'capability episode-manage is not granted on every asset of the episode');
  }
}
