// The asset tree held in memory: one node per asset, parent and children links, so that
// paths, effective time zones, ancestry (authorization) and subtrees (resolve) cost a
// pointer walk instead of a recursive query. A snapshot is either the current tree,
// kept up to date by applying committed changes, or the tree as of one transaction.
import type { Queryable } from '../db.js';
import { SqlArgs, validAt, type ReadTx } from '../versions/history.js';

export const DEFAULT_TIMEZONE = 'UTC';

export interface AssetState {
  asset_id: string;
  parent_id: string | null;
  name: string;
  template_id: string | null;
  timezone: string | null;
  retired: boolean;
  tx_id: bigint;
}

export interface AssetNode extends AssetState {
  parent: AssetNode | null;
  children: AssetNode[];
}

export interface AssetProjection extends AssetState {
  path: string | null;
  effective_timezone: string;
  timezone_source_asset: string | null;
}

export class AssetTree {
  readonly nodes = new Map<string, AssetNode>();
  readonly roots: AssetNode[] = [];

  constructor(readonly tx: ReadTx) {}

  static async load(q: Queryable, tx: ReadTx): Promise<AssetTree> {
    const args = new SqlArgs();
    const { rows } = await q.query<{ asset_id: string; parent_id: string | null; name: string; template_id: string | null; timezone: string | null; retired: boolean; tx_from: bigint }>(
      `SELECT asset_id, parent_id, name, template_id, timezone, retired, tx_from FROM asset_version a WHERE ${validAt('a', tx, args)}`, args.values);
    const tree = new AssetTree(tx);
    for (const r of rows) {
      tree.nodes.set(r.asset_id, { asset_id: r.asset_id, parent_id: r.parent_id, name: r.name, template_id: r.template_id, timezone: r.timezone, retired: r.retired, tx_id: r.tx_from, parent: null, children: [] });
    }
    for (const n of tree.nodes.values()) tree.link(n);
    return tree;
  }

  private link(n: AssetNode): void {
    const p = n.parent_id === null ? null : this.nodes.get(n.parent_id) ?? null;
    n.parent = p;
    (p ? p.children : this.roots).push(n);
  }

  private unlink(n: AssetNode): void {
    const list = n.parent ? n.parent.children : this.roots;
    const i = list.indexOf(n);
    if (i >= 0) list.splice(i, 1);
    n.parent = null;
  }

  /** Applies a committed version of one asset (create or any change) to a current tree. */
  apply(s: AssetState): void {
    const n = this.nodes.get(s.asset_id);
    if (!n) {
      const node: AssetNode = { ...s, parent: null, children: [] };
      this.nodes.set(s.asset_id, node);
      this.link(node);
      // Children committed before their parent was seen (never through our routes) attach now.
      const orphans = this.roots.filter((o) => o.parent_id === s.asset_id);
      for (const o of orphans) { this.unlink(o); this.link(o); }
      return;
    }
    const moved = n.parent_id !== s.parent_id;
    if (moved) this.unlink(n);
    n.parent_id = s.parent_id; n.name = s.name; n.template_id = s.template_id;
    n.timezone = s.timezone; n.retired = s.retired; n.tx_id = s.tx_id;
    if (moved) this.link(n);
  }

  get(id: string): AssetNode | undefined { return this.nodes.get(id); }

  path(n: AssetNode): string {
    const names: string[] = [];
    for (let c: AssetNode | null = n; c; c = c.parent) names.push(c.name);
    let out = '';
    for (let i = names.length - 1; i >= 0; i--) out += '/' + names[i];
    return out;
  }

  /** The asset and its ancestors, nearest first. */
  ancestry(n: AssetNode): string[] {
    const out: string[] = [];
    for (let c: AssetNode | null = n; c; c = c.parent) out.push(c.asset_id);
    return out;
  }

  /** Whether the asset or one of its ancestors is retired (a retired asset retires its subtree from reads). */
  effectivelyRetired(n: AssetNode): boolean {
    for (let c: AssetNode | null = n; c; c = c.parent) if (c.retired) return true;
    return false;
  }

  projection(n: AssetNode): AssetProjection {
    let source: AssetNode | null = null;
    for (let c: AssetNode | null = n; c; c = c.parent) if (c.timezone !== null) { source = c; break; }
    return {
      asset_id: n.asset_id, parent_id: n.parent_id, name: n.name, template_id: n.template_id, retired: n.retired,
      tx_id: n.tx_id, path: this.path(n), timezone: n.timezone,
      effective_timezone: source?.timezone ?? DEFAULT_TIMEZONE, timezone_source_asset: source?.asset_id ?? null,
    };
  }

  /** Finds an asset by its path ("/Plant/Area 1"); names are compared exactly. */
  byPath(path: string): AssetNode | undefined {
    const parts = splitPath(path);
    if (!parts) return undefined;
    let level = this.roots;
    let found: AssetNode | undefined;
    for (const name of parts) {
      found = level.find((c) => c.name === name);
      if (!found) return undefined;
      level = found.children;
    }
    return found;
  }

  /**
   * Collects the subtree under root (root included) into out, depth first. Retired
   * assets and everything under them are skipped unless includeRetired.
   */
  collectSubtree(root: AssetNode, includeRetired: boolean, out: AssetNode[], maxDepth = Infinity): void {
    if (!includeRetired && this.effectivelyRetired(root)) return;
    const stack: AssetNode[] = [root];
    const depth: number[] = [0];
    while (stack.length > 0) {
      const n = stack.pop() as AssetNode;
      const d = depth.pop() as number;
      out.push(n);
      if (d >= maxDepth) continue;
      for (let i = n.children.length - 1; i >= 0; i--) {
        const c = n.children[i];
        if (!includeRetired && c.retired) continue;
        stack.push(c);
        depth.push(d + 1);
      }
    }
  }
}

/** Splits "/a/b" into names; null when the path is not absolute or has an empty segment. */
/**
 * The one notation for an attribute's path: its asset's path, "|", its name
 * (/Site/Area/Pump-101|Flow), as PI writes \\Site\Area\Pump-101|Flow. "|" and not "/": an
 * asset may have a child asset and an attribute of the same name, and names may contain
 * neither character (names.ts). resolve, resolve-path, lints and every other emitter use it.
 */
export function attributePath(assetPath: string, attributeName: string): string {
  return `${assetPath}|${attributeName}`;
}

/** An attribute path split at its "|" into the asset path and the attribute name; null for an asset path. */
export function splitAttributePath(path: string): { assetPath: string; name: string } | null {
  const bar = path.indexOf('|');
  if (bar < 0) return null;
  return { assetPath: path.slice(0, bar), name: path.slice(bar + 1) };
}

export function splitPath(path: string): string[] | null {
  if (!path.startsWith('/') || path === '/') return null;
  const parts = path.slice(1).split('/');
  return parts.every((p) => p.length > 0) ? parts : null;
}
