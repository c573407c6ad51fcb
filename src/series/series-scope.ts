// Which scope a series belongs to for authorization: the asset that owns it through the
// binding covering now, or the staging root while it is unbound (the same rule
// GET /v1/model/staging lists by, and model/series-owner.ts's owningAsset).
import type { Queryable } from '../model/db.js';
import type { AccessTarget } from '../auth/access-types.js';
import { nowNs } from '../clock.js';

export interface ScopeAt {
  scope: AccessTarget;
  /**
   * The next instant at which a current binding of the series starts or ends, after which
   * the scope may differ without any model change (null: none). A cache may keep `scope`
   * until then.
   */
  untilNs: bigint | null;
}

/** The scope at `atNs` and how long it holds, in one round trip. */
export async function seriesScopeAt(q: Queryable, seriesId: string, atNs: bigint = nowNs()): Promise<ScopeAt> {
  const { rows } = await q.query<{ asset_id: string | null; until_ns: bigint | string | null }>(
    `SELECT
       (SELECT a.asset_id FROM binding_version b
          JOIN attribute_version a ON a.attribute_id = b.attribute_id AND a.tx_to IS NULL
         WHERE b.series_id = $1 AND b.tx_to IS NULL AND b.from_ns <= $2 AND (b.to_ns IS NULL OR b.to_ns > $2)
         LIMIT 1) AS asset_id,
       (SELECT min(CASE WHEN b.from_ns > $2 THEN b.from_ns ELSE b.to_ns END) FROM binding_version b
         WHERE b.series_id = $1 AND b.tx_to IS NULL AND (b.from_ns > $2 OR b.to_ns > $2)) AS until_ns`,
    [seriesId, atNs]);
  const asset = rows[0]?.asset_id ?? null;
  const until = rows[0]?.until_ns ?? null;
  return { scope: asset === null ? { kind: 'staging' } : { kind: 'asset', id: asset }, untilNs: until === null ? null : BigInt(until) };
}

export async function seriesScope(q: Queryable, seriesId: string): Promise<AccessTarget> {
  return (await seriesScopeAt(q, seriesId)).scope;
}
