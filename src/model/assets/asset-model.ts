// The asset model as a service part: the model database plus the in-memory caches that
// keep reads cheap (the current asset tree, a few as-of trees, view membership). It is
// also what authorization asks where an asset sits (it fits auth's ScopeResolver by shape,
// so the model never imports from auth, which sits above it).
//
// Coherence: every model change commits through modelTransaction, whose commit feed
// (onModelCommit) reaches this process synchronously before the writer's response; asset
// events carry the asset's new state and are applied to the current tree in place,
// view events drop the view cache, attribute and binding events drop their asset's
// cached attributes, template events all of them. The caches assume one service process per model
// database, which is the deployment the architecture describes.
import type { Db } from '../db.js';
import { onModelCommit, type ModelEvent } from '../tx-log.js';
import type { ReadTx } from '../versions/history.js';
import { AssetTree, type AssetState } from './asset-tree.js';
import { ViewMembership } from '../views/view-membership.js';
import { CurrentAttributeCache } from '../resolve/attribute-cache.js';

/** As-of trees kept for repeated historical reads (dashboards replaying one instant). */
const AS_OF_TREES_KEPT = 4;

declare module '../../service-context.js' {
  interface ServiceParts {
    model: AssetModel;
  }
}

export class AssetModel {
  private current: AssetTree | null = null;
  private loading: Promise<AssetTree> | null = null;
  /** Set when a change commits while the current tree is loading: the load is retried. */
  private changedDuringLoad = false;
  private readonly asOf = new Map<bigint, Promise<AssetTree>>();
  private views: Promise<ViewMembership> | null = null;
  private readonly unsubscribe: () => void;
  /** Current attributes per asset for resolve, invalidated by the same commit feed. */
  readonly attributes: CurrentAttributeCache;

  constructor(readonly db: Db) {
    this.attributes = new CurrentAttributeCache(db);
    this.unsubscribe = onModelCommit((tx) => this.applyCommit(tx.tx_id, tx.events));
  }

  close(): void {
    this.unsubscribe();
  }

  /** The asset tree at a read transaction (null: current). */
  async tree(tx: ReadTx = null): Promise<AssetTree> {
    if (tx !== null) return this.treeAsOf(tx);
    if (this.current) return this.current;
    this.loading ??= (async () => {
      for (;;) {
        this.changedDuringLoad = false;
        const t = await AssetTree.load(this.db, null);
        if (!this.changedDuringLoad) { this.current = t; return t; }
      }
    })().finally(() => { this.loading = null; });
    return this.loading;
  }

  private treeAsOf(tx: bigint): Promise<AssetTree> {
    let p = this.asOf.get(tx);
    if (p) {
      this.asOf.delete(tx);
      this.asOf.set(tx, p); // most recently used last
      return p;
    }
    p = AssetTree.load(this.db, tx);
    p.catch(() => this.asOf.delete(tx));
    this.asOf.set(tx, p);
    while (this.asOf.size > AS_OF_TREES_KEPT) this.asOf.delete(this.asOf.keys().next().value as bigint);
    return p;
  }

  viewMembership(): Promise<ViewMembership> {
    this.views ??= ViewMembership.load(this.db);
    this.views.catch(() => { this.views = null; });
    return this.views;
  }

  private applyCommit(txId: bigint, events: ModelEvent[]): void {
    for (const e of events) {
      if (e.entity_kind === 'view') this.views = null;
      else if (e.entity_kind === 'attribute' || e.entity_kind === 'binding') {
        const assetId = e.details.asset_id;
        if (typeof assetId === 'string') this.attributes.dropAsset(assetId); else this.attributes.clear();
      } else if (e.entity_kind === 'template') this.attributes.clear();
      else if (e.entity_kind === 'asset') {
        if (this.loading) this.changedDuringLoad = true;
        const state = e.details.state as Omit<AssetState, 'tx_id'> | undefined;
        if (!this.current) continue;
        if (!state || typeof state.asset_id !== 'string') { this.current = null; continue; } // unknown writer: reload
        this.current.apply({ ...state, tx_id: txId });
      }
    }
  }

  // ScopeResolver ----------------------------------------------------------------------

  async assetAncestors(assetId: string): Promise<string[] | null> {
    const t = await this.tree();
    const n = t.get(assetId);
    return n ? t.ancestry(n) : null;
  }

  async viewsContainingAsset(assetId: string): Promise<string[]> {
    const ancestors = await this.assetAncestors(assetId);
    if (!ancestors) return [];
    return (await this.viewMembership()).viewsContainingAny(ancestors);
  }
}
