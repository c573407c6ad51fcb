// Which asset owns a series: the asset of the attribute whose binding covers the series
// at the instant asked (now by default). null means the series is unbound, i.e. in
// staging. Series routes scope their reads with it.
import type { Queryable } from './db.js';
import { nowNs } from '../clock.js';

export async function owningAsset(q: Queryable, seriesId: string, atNs: bigint = nowNs()): Promise<string | null> {
  const { rows } = await q.query<{ asset_id: string }>(
    `SELECT a.asset_id FROM binding_version b
       JOIN attribute_version a ON a.attribute_id = b.attribute_id AND a.tx_to IS NULL
      WHERE b.series_id = $1 AND b.tx_to IS NULL AND b.from_ns <= $2 AND (b.to_ns IS NULL OR b.to_ns > $2)
      LIMIT 1`, [seriesId, atNs]);
  return rows[0]?.asset_id ?? null;
}

export interface StagedSeries {
  series_id: string;
  source_name: string;
  value_type: string;
  created_ns: bigint;
}

/** Series with no binding covering now or later (unbound: staging), in series_id order after a cursor. */
export async function stagedSeries(q: Queryable, limit: number, after: string | null): Promise<StagedSeries[]> {
  const { rows } = await q.query<StagedSeries>(
    `SELECT s.series_id, s.source_name, s.value_type, s.created_ns FROM series s
      WHERE ($1::uuid IS NULL OR s.series_id > $1::uuid)
        AND NOT EXISTS (SELECT 1 FROM binding_version b WHERE b.series_id = s.series_id AND b.tx_to IS NULL AND (b.to_ns IS NULL OR b.to_ns > $2))
      ORDER BY s.series_id LIMIT $3`, [after, nowNs(), limit]);
  return rows;
}
