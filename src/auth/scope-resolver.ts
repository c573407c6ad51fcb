// How authorization learns where an asset sits. Grants can be scoped to an asset
// subtree or a view; deciding whether asset X falls under them needs the asset tree,
// which the asset model (src/model, issue #6) owns. It plugs its resolver in with
// AuthAccessControl.useScopeResolver(resolver) at start.

export interface ScopeResolver {
  /**
   * The asset and all its ancestors, in any order (the asset itself included), or
   * null when the asset does not exist. A grant on any of them covers the asset.
   */
  assetAncestors(assetId: string): Promise<string[] | null>;
  /** Ids of the views whose membership includes the asset (directly or through an ancestor). */
  viewsContainingAsset(assetId: string): Promise<string[]>;
}

/**
 * Used until the asset model plugs its own in: an asset is only its own subtree and
 * belongs to no view. This never grants more than the real resolver would.
 */
export const FLAT_SCOPE_RESOLVER: ScopeResolver = {
  async assetAncestors(assetId) { return [assetId]; },
  async viewsContainingAsset() { return []; },
};
