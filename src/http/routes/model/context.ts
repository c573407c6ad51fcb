// What every Model route needs from its context: the asset model part, who is acting
// (principal subject and reason, recorded in the transaction log), and a memoised
// "may read this asset" predicate for filtering results.
import type { HandlerContext } from '../../route.js';
import type { Who } from '../../../model/tx-log.js';
import type { AssetModel } from '../../../model/assets/asset-model.js';
import { ServiceError } from '../../../errors.js';

export function modelOf(ctx: HandlerContext): AssetModel {
  const m = ctx.service.parts.model;
  if (!m) throw new ServiceError('model-unavailable', 'the asset model is not started');
  return m;
}

export function who(ctx: HandlerContext, reason: string | undefined): Who {
  return { principal: ctx.principal?.subject ?? 'anonymous', reason: reason ?? '' };
}

/**
 * A predicate answering whether the caller may read an asset, asked once per asset.
 * Holders of read on the whole model skip the per-asset checks.
 */
export async function assetReader(ctx: HandlerContext): Promise<{ everything: boolean; asset(id: string): Promise<boolean> }> {
  const everything = await ctx.can('read', { kind: 'global' });
  const seen = new Map<string, boolean>();
  return {
    everything,
    async asset(id: string) {
      if (everything) return true;
      let ok = seen.get(id);
      if (ok === undefined) { ok = await ctx.can('read', { kind: 'asset', id }); seen.set(id, ok); }
      return ok;
    },
  };
}
