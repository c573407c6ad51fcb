// Finding annotations: by attributes, asset subtree, episode, time overlap, tags, author
// and text, in (start_ns, annotation_id) order with keyset paging; and the per-attribute
// lookup the resolved reads attach (include_annotations).
//
// Time overlap: an annotation [start, end] (end inclusive, = start for an instant) overlaps
// a window [ws, we) when start < we and end >= ws, so a range that began before the window
// is found. With a target, the candidates come from annotation_target one span class at a
// time (migration 0100): each class c is an index range scan of starts in (ws - 2^c, we).
import type { Queryable } from '../model/db.js';
import { sqlTextArray } from '../model/db.js';
import { VIEW_COLUMNS, toView, type AnnotationView } from './annotation-store.js';

export interface AnnotationFilter {
  attributes?: string[];
  /** An asset id: annotations on it, on its descendants and on their attributes. */
  assetSubtree?: string;
  episode?: string;
  window?: { startNs: bigint; endNs: bigint };
  tags?: string[];
  tagsMatch?: 'all' | 'any';
  author?: string;
  /** Full-text search (english stemming, web-search syntax: words, "phrases", -not, or). */
  text?: string;
  includeRedacted?: boolean;
}

export interface Page { after?: { startNs: bigint; id: string }; limit: number }

/** Builds numbered SQL parameters. */
class Params {
  readonly values: Array<string | bigint | number | null> = [];
  add(v: string | bigint | number | null): string { this.values.push(v); return `$${this.values.length}`; }
}

/** The descendants of an asset (itself included) in the current model. */
async function subtreeOf(q: Queryable, assetId: string): Promise<string[]> {
  const { rows } = await q.query<{ asset_id: string }>(
    `WITH RECURSIVE sub(asset_id) AS (
       SELECT asset_id FROM asset_version WHERE asset_id = $1 AND tx_to IS NULL
       UNION SELECT a.asset_id FROM asset_version a JOIN sub ON a.parent_id = sub.asset_id WHERE a.tx_to IS NULL)
     SELECT asset_id FROM sub`, [assetId]);
  return rows.map((r) => r.asset_id);
}

/** A condition on annotation_target rows `t` for each target filter given. */
async function targetConditions(q: Queryable, f: AnnotationFilter, p: Params): Promise<string[] | null> {
  const out: string[] = [];
  if (f.attributes) out.push(`t.target_id = ANY(${p.add(sqlTextArray(f.attributes))}::uuid[])`);
  if (f.episode) out.push(`t.target_id = ${p.add(f.episode)}::uuid`);
  if (f.assetSubtree) {
    const assets = await subtreeOf(q, f.assetSubtree);
    if (assets.length === 0) return null; // no such asset: nothing can match
    out.push(`t.asset_id = ANY(${p.add(sqlTextArray(assets))}::uuid[])`);
  }
  return out;
}

/** One page of matching annotations (not yet filtered by who may read them) and whether more follow. */
export async function queryAnnotations(q: Queryable, f: AnnotationFilter, page: Page): Promise<{ items: AnnotationView[]; more: boolean }> {
  const p = new Params();
  const targets = await targetConditions(q, f, p);
  if (targets === null) return { items: [], more: false };
  const where: string[] = [];
  let from = 'annotation a';
  if (f.window) {
    const ws = p.add(f.window.startNs), we = p.add(f.window.endNs);
    where.push(`a.start_ns < ${we}`, `a.end_ns >= ${ws}`);
    if (targets.length > 0) {
      // the first target condition drives the span-class scans; the others are checked per row
      const [first, ...rest] = targets;
      from = `(SELECT DISTINCT t.annotation_id FROM annotation_span_class c CROSS JOIN LATERAL (
          SELECT t.annotation_id FROM annotation_target t
           WHERE ${first} AND t.span_class = c.span_class
             AND t.start_ns > GREATEST(${ws}::numeric - 2::numeric ^ c.span_class, -9223372036854775808)::bigint
             AND t.start_ns < ${we} AND t.end_ns >= ${ws}) t) cand JOIN annotation a ON a.annotation_id = cand.annotation_id`;
      for (const r of rest) where.push(`EXISTS (SELECT 1 FROM annotation_target t WHERE t.annotation_id = a.annotation_id AND ${r})`);
    }
  } else {
    for (const r of targets) where.push(`EXISTS (SELECT 1 FROM annotation_target t WHERE t.annotation_id = a.annotation_id AND ${r})`);
  }
  if (f.tags && f.tags.length > 0) {
    const ids = `(SELECT array_agg(entry_id) FROM registry_entry_version WHERE kind = 'annotation-tags' AND tx_to IS NULL AND name = ANY(${p.add(sqlTextArray(f.tags))}::text[]))`;
    // 'all' with a tag name that does not exist matches nothing: the count of known ids must be the count asked
    where.push(f.tagsMatch === 'any' ? `a.tag_ids && COALESCE(${ids}, '{}')` : `a.tag_ids @> ${ids} AND cardinality(${ids}) = ${p.add(new Set(f.tags).size)}`);
  }
  if (f.author !== undefined) where.push(`a.author = ${p.add(f.author)}`);
  if (f.text !== undefined) where.push(`a.search @@ websearch_to_tsquery('english', ${p.add(f.text)})`);
  if (f.includeRedacted === false) where.push('a.redacted_ns IS NULL');
  if (page.after) where.push(`(a.start_ns, a.annotation_id) > (${p.add(page.after.startNs)}, ${p.add(page.after.id)}::uuid)`);
  const sql = `SELECT ${VIEW_COLUMNS} FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
    ORDER BY a.start_ns, a.annotation_id LIMIT ${p.add(page.limit + 1)}`;
  const { rows } = await q.query<Parameters<typeof toView>[0]>(sql, p.values);
  const more = rows.length > page.limit;
  return { items: rows.slice(0, page.limit).map(toView), more };
}

/** An annotation as a read attaches it, with the attribute (or asset) it was found through. */
export interface AnnotationOnAttribute { targetId: string; view: AnnotationView }

/**
 * The annotations over the window on each of the attributes, or on their assets (an asset
 * note shows on every attribute of the asset), in start order.
 */
export async function annotationsOnAttributes(q: Queryable, attributeIds: string[], assetIds: string[], window: { startNs: bigint; endNs: bigint }): Promise<AnnotationOnAttribute[]> {
  if (attributeIds.length === 0) return [];
  const ids = [...new Set([...attributeIds, ...assetIds])];
  const { rows } = await q.query<Parameters<typeof toView>[0] & { found_on: string }>(
    `SELECT cand.target_id AS found_on, ${VIEW_COLUMNS}
       FROM annotation_span_class c CROSS JOIN LATERAL (
         SELECT t.target_id, t.annotation_id FROM annotation_target t
          WHERE t.target_id = ANY($1::uuid[]) AND t.span_class = c.span_class
            AND t.start_ns > GREATEST($2::numeric - 2::numeric ^ c.span_class, -9223372036854775808)::bigint
            AND t.start_ns < $3 AND t.end_ns >= $2) cand
       JOIN annotation a ON a.annotation_id = cand.annotation_id
      ORDER BY a.start_ns, a.annotation_id`,
    [sqlTextArray(ids), window.startNs, window.endNs]);
  return rows.map((r) => ({ targetId: r.found_on, view: toView(r) }));
}
