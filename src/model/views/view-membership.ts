// Which current, unretired views place which assets: the index authorization uses for
// view-scoped grants. A view member covers the member asset and its composition
// subtree, so an asset belongs to every view that places it or one of its ancestors.
import type { Queryable } from '../db.js';

export class ViewMembership {
  private readonly byAsset = new Map<string, string[]>();

  static async load(q: Queryable): Promise<ViewMembership> {
    const { rows } = await q.query<{ view_id: string; asset_id: string }>(
      `SELECT m.view_id, m.asset_id FROM view_member_version m
         JOIN view_version v ON v.view_id = m.view_id AND v.tx_to IS NULL AND NOT v.retired
        WHERE m.tx_to IS NULL`);
    const out = new ViewMembership();
    for (const r of rows) {
      const list = out.byAsset.get(r.asset_id);
      if (list) list.push(r.view_id); else out.byAsset.set(r.asset_id, [r.view_id]);
    }
    return out;
  }

  /** Views placing any of the given assets (an asset and its ancestors), without repeats. */
  viewsContainingAny(assetIds: string[]): string[] {
    const out = new Set<string>();
    for (const a of assetIds) for (const v of this.byAsset.get(a) ?? []) out.add(v);
    return [...out];
  }
}
