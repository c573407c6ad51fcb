// POST /v1/episodes/query: by template, asset (one, a subtree or a view), time overlap,
// state and attribute predicates, optionally as of an instant; keyset cursor in
// (start_ns, id) order. Scope "each result": episodes the caller may not read are left out,
// and the page reads on past them, so a page holds `limit` items whenever that many
// readable ones follow; the cursor resumes after the last episode examined.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { invalid, ServiceError } from '../../../errors.js';
import { encodeCursor, decodeCursor, cursorInt64 } from '../../../cursor.js';
import { isUuid } from '../../../uuid.js';
import { viewMembersAt } from '../../../model/views/views.js';
import type { AssetNode } from '../../../model/assets/asset-tree.js';
import { readTxFor, type ReadTx } from '../../../model/versions/history.js';
import type { Queryable } from '../../../model/db.js';
import { queryEpisodes, type EpisodeQuery, type PredicateOp } from '../../../episodes/episode-query.js';
import type { Episode, EpisodeState } from '../../../episodes/episode-store.js';
import { episodesOf, assetGate, assetsOf } from './episode-access.js';
import { QueryBody, QueryPage } from './schemas.js';

const LISTING = 'episodes';
const DEFAULT_LIMIT = 100;

export interface QueryMembersBody {
  template_ids?: string[];
  asset?: { kind: 'asset_id' | 'under' | 'view'; content: string };
  overlaps?: { start_ns: number | bigint; end_ns: number | bigint };
  states?: EpisodeState[];
  attributes?: Array<{ name: string; op: string; value: number | bigint | string | boolean }>;
  as_of_ns?: number | bigint;
}

/** The asset ids an asset filter stands for (a subtree or a view expanded on the current tree). */
async function assetIdsOf(ctx: HandlerContext, f: NonNullable<QueryMembersBody['asset']>, tx: ReadTx): Promise<string[]> {
  if (f.kind === 'asset_id') return [f.content];
  const model = ctx.service.parts.model;
  const tree = await model.tree(tx);
  const roots: AssetNode[] = [];
  if (f.kind === 'under') {
    const n = tree.get(f.content);
    if (!n) throw invalid('asset/content', `no asset ${f.content}`);
    roots.push(n);
  } else {
    const members = await viewMembersAt(model.db, tx, f.content);
    if (members.length === 0 && !(await ctx.can('read', { kind: 'view', id: f.content }))) throw invalid('asset/content', `no view ${f.content}`);
    for (const m of members) { const n = tree.get(m.asset_id); if (n) roots.push(n); }
  }
  const out: AssetNode[] = [];
  for (const r of roots) tree.collectSubtree(r, true, out);
  return [...new Set(out.map((n) => n.asset_id))];
}

/** The body's filter as the store's query (cursor and limit aside). */
export async function episodeQueryOf(ctx: HandlerContext, b: QueryMembersBody): Promise<Omit<EpisodeQuery, 'after' | 'limit'>> {
  const tx = await readTxFor(ctx.service.db, b.as_of_ns);
  let overlaps: EpisodeQuery['overlaps'] = null;
  if (b.overlaps) {
    overlaps = { startNs: BigInt(b.overlaps.start_ns), endNs: BigInt(b.overlaps.end_ns) };
    if (overlaps.endNs <= overlaps.startNs) throw invalid('overlaps/end_ns', 'must be after overlaps/start_ns');
  }
  return {
    templateIds: b.template_ids ?? null,
    assetIds: b.asset ? await assetIdsOf(ctx, b.asset, tx) : null,
    overlaps,
    states: b.states ?? ['open', 'closed'],
    attributes: (b.attributes ?? []).map((p) => ({ name: p.name, op: p.op as PredicateOp, value: p.value })),
    tx,
  };
}

/** Keeps the episodes the caller may read. */
export async function readable(ctx: HandlerContext, episodes: Episode[]): Promise<Episode[]> {
  const gate = assetGate(ctx, 'read');
  const out: Episode[] = [];
  for (const e of episodes) if (await gate(assetsOf(e))) out.push(e);
  return out;
}

/**
 * A page of `limit` readable episodes (fewer only at the end): reads on past the ones the
 * caller may not read, a store page at a time. `last` is the last episode examined, where
 * the next page resumes.
 */
export async function readablePage(ctx: HandlerContext, db: Queryable, filter: Omit<EpisodeQuery, 'after' | 'limit'>, after: EpisodeQuery['after'], limit: number):
  Promise<{ items: Episode[]; more: boolean; last: Episode | null }> {
  const items: Episode[] = [];
  let last: Episode | null = null;
  for (;;) {
    const page = await queryEpisodes(db, { ...filter, after, limit });
    const kept = new Set((await readable(ctx, page.items)).map((e) => e.id));
    for (let i = 0; i < page.items.length; i++) {
      last = page.items[i];
      if (!kept.has(last.id)) continue;
      items.push(last);
      if (items.length === limit) return { items, more: i + 1 < page.items.length || page.more, last };
    }
    if (!page.more || !last) return { items, more: false, last };
    after = { startNs: last.start_ns, id: last.id };
  }
}

export function queryRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'queryEpisodes', method: 'post', path: '/v1/episodes/query', area: 'Episodes',
      summary: 'Episodes by template, asset (or subtree, or view), time overlap, state and attribute predicates, in start order, paged',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      body: QueryBody, bodyOptional: true,
      response: { status: 200, schema: QueryPage },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const { db } = episodesOf(ctx);
        const limit = ctx.body.limit ?? DEFAULT_LIMIT;
        let after: EpisodeQuery['after'] = null;
        if (ctx.body.cursor !== undefined) {
          const [start, id] = decodeCursor(LISTING, ctx.body.cursor, 2);
          if (!isUuid(id)) throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued for this listing');
          after = { startNs: cursorInt64(start), id };
        }
        const page = await readablePage(ctx, db, await episodeQueryOf(ctx, ctx.body as QueryMembersBody), after, limit);
        return {
          body: {
            items: page.items,
            next_cursor: page.more && page.last ? encodeCursor(LISTING, [String(page.last.start_ns), page.last.id]) : null,
          },
        };
      },
    }),
  ];
}
