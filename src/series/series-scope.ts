// Which scope a series belongs to for authorization: the asset that owns it through the
// binding covering now, or the staging root while it is unbound (the same rule
// GET /v1/model/staging lists by).
import type { Queryable } from '../model/db.js';
import type { AccessTarget } from '../auth/access-types.js';
import { owningAsset } from '../model/series-owner.js';

export async function seriesScope(q: Queryable, seriesId: string): Promise<AccessTarget> {
  const asset = await owningAsset(q, seriesId);
  return asset === null ? { kind: 'staging' } : { kind: 'asset', id: asset };
}
