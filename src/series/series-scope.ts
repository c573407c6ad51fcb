// Which scope a series belongs to for authorization: the asset that owns it through its
// current binding, or the staging root while it is unbound.
//
// Bindings belong to the asset model (issue #6), which exports owningAsset from
// src/model/series-owner.ts. Until that module exists every series is unbound, so every
// series is in staging; this is the one place to switch over when it lands.
import type { Queryable } from '../model/db.js';
import type { AccessTarget } from '../auth/access-types.js';

export async function owningAssetOf(_q: Queryable, _seriesId: string): Promise<string | null> {
  return null;
}

export async function seriesScope(q: Queryable, seriesId: string): Promise<AccessTarget> {
  const asset = await owningAssetOf(q, seriesId);
  return asset === null ? { kind: 'staging' } : { kind: 'asset', id: asset };
}
