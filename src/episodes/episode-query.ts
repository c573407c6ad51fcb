// POST /v1/episodes/query over the episodes: by template, by assets (the route expands a
// subtree or a view to asset ids), by overlap with a time range, by state, and by
// predicates on attribute values; keyset paging in (start_ns, id) order.
//
// Overlap with [from, to) is start < to AND (end > from OR end IS NULL). A btree can only
// bound one column's range, so closed episodes are found by start within
// [from - longest span, to), the longest span kept in episode_span_bound (read in the same
// statement), and open ones by their partial index: both are range scans of the
// (asset_id, start_ns) index per asset. Measured against a GiST over (asset_id, int8range)
// with btree_gist, the btree answered in the same time (docs/decisions.md, 2026-11-28).
//
// As of a past transaction the current index (episode_asset) does not apply: the versions
// valid then are filtered by their own assets (a walk over episode_version, fine for the
// occasional audit question, not indexed for a million episodes).
import type { Queryable, SqlParam } from '../model/db.js';
import { sqlTextArray } from '../model/db.js';
import { SqlArgs, validAt, type ReadTx } from '../model/versions/history.js';
import { jsonbParam } from '../model/db.js';
import { EPISODE_SELECT, toEpisode, type Episode, type EpisodeState } from './episode-store.js';

export const PREDICATE_OPS = ['=', '!=', '<', '<=', '>', '>='] as const;
export type PredicateOp = (typeof PREDICATE_OPS)[number];

export interface AttributePredicate { name: string; op: PredicateOp; value: number | bigint | string | boolean }

export interface EpisodeQuery {
  templateIds: string[] | null;
  /** null: any asset (or none); otherwise episodes with at least one of these assets. */
  assetIds: string[] | null;
  overlaps: { startNs: bigint; endNs: bigint } | null;
  states: EpisodeState[];
  attributes: AttributePredicate[];
  after: { startNs: bigint; id: string } | null;
  limit: number;
  /** null: the current episodes; else the versions valid at this model transaction. */
  tx: ReadTx;
}

/** The lowest start a closed episode overlapping from `from` can have (the longest span back). */
const lowestStartSql = (from: string) => `(${from}::bigint - (SELECT max_span_ns FROM episode_span_bound))`;

function overlapSql(alias: string, o: { startNs: bigint; endNs: bigint }, args: SqlArgs): string {
  const from = args.add(o.startNs), to = args.add(o.endNs), lo = lowestStartSql(from);
  return `((${alias}.end_ns IS NOT NULL AND ${alias}.start_ns >= ${lo} AND ${alias}.start_ns < ${to} AND ${alias}.end_ns > ${from})`
    + ` OR (${alias}.end_ns IS NULL AND ${alias}.start_ns < ${to}))`;
}

function predicateSql(p: AttributePredicate, args: SqlArgs): string {
  const value = `e.attributes->${args.add(p.name)}->'value'`;
  if (p.op === '=' || p.op === '!=') {
    return `${value} ${p.op === '=' ? '=' : 'IS DISTINCT FROM'} ${args.add(jsonbParam(p.value))}::jsonb`;
  }
  // CASE, not AND: SQL does not promise to test the type before the cast (PostgreSQL 15 did not)
  if (typeof p.value === 'string') return `CASE WHEN jsonb_typeof(${value}) = 'string' THEN (${value} #>> '{}') ${p.op} ${args.add(p.value)} ELSE false END`;
  if (typeof p.value === 'boolean') return `CASE WHEN jsonb_typeof(${value}) = 'boolean' THEN (${value})::boolean ${p.op} ${args.add(p.value)} ELSE false END`;
  return `CASE WHEN jsonb_typeof(${value}) = 'number' THEN (${value})::numeric ${p.op} ${args.add(String(p.value))}::numeric ELSE false END`;
}

/** One page of episodes; `more` says whether another page follows. */
export async function queryEpisodes(q: Queryable, query: EpisodeQuery): Promise<{ items: Episode[]; more: boolean }> {
  const args = new SqlArgs();
  const where: string[] = [validAt('e', query.tx, args), `e.state = ANY(${args.add(sqlTextArray(query.states))}::text[])`];
  if (query.templateIds) where.push(`e.template_id = ANY(${args.add(sqlTextArray(query.templateIds))}::uuid[])`);
  if (query.assetIds) {
    if (query.assetIds.length === 0) return { items: [], more: false };
    const ids = `${args.add(sqlTextArray(query.assetIds))}::uuid[]`;
    if (query.tx === null) {
      const inner = [`a.asset_id = ANY(${ids})`];
      if (query.overlaps) inner.push(overlapSql('a', query.overlaps, args));
      where.push(`e.episode_id IN (SELECT a.episode_id FROM episode_asset a WHERE ${inner.join(' AND ')})`);
    } else {
      where.push(`EXISTS (SELECT 1 FROM jsonb_to_recordset(e.assets) AS x(asset_id uuid) WHERE x.asset_id = ANY(${ids}))`);
    }
  }
  if (query.overlaps) where.push(overlapSql('e', query.overlaps, args));
  for (const p of query.attributes) where.push(predicateSql(p, args));
  if (query.after) where.push(`(e.start_ns, e.episode_id) > (${args.add(query.after.startNs)}::bigint, ${args.add(query.after.id)}::uuid)`);
  const limit: SqlParam = query.limit + 1;
  const { rows } = await q.query<Parameters<typeof toEpisode>[0]>(
    `${EPISODE_SELECT} WHERE ${where.join(' AND ')} ORDER BY e.start_ns, e.episode_id LIMIT ${args.add(limit)}`, args.values);
  return { items: rows.slice(0, query.limit).map(toEpisode), more: rows.length > query.limit };
}

/**
 * Life over life: the last `lives` closed episodes of a template on an asset that started
 * before `beforeNs`, oldest first (the (asset_id, start_ns) index walked backwards).
 */
export async function lastLives(q: Queryable, templateId: string, assetId: string, lives: number, beforeNs: bigint): Promise<Episode[]> {
  const { rows } = await q.query<Parameters<typeof toEpisode>[0]>(
    `${EPISODE_SELECT} WHERE e.tx_to IS NULL AND e.episode_id IN (
        SELECT a.episode_id FROM episode_asset a
         WHERE a.asset_id = $1 AND a.template_id = $2 AND a.state = 'closed' AND a.start_ns < $3
         GROUP BY a.start_ns, a.episode_id ORDER BY a.start_ns DESC LIMIT $4)
      ORDER BY e.start_ns, e.episode_id`, [assetId, templateId, beforeNs, lives]);
  return rows.map(toEpisode);
}
