// Assets: create, read (the Asset projection), patch (rename, move, retire, unretire,
// time zone), the tree, path lookup and template instantiation.
import { sqlTextArray } from '../../../model/db.js';
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { readTxFor } from '../../../model/versions/history.js';
import { createAsset, patchAsset } from '../../../model/assets/assets.js';
import { instantiateTemplate } from '../../../model/attributes/attributes.js';
import { attributesWhere, effectiveAttributes } from '../../../model/attributes/effective.js';
import { attributePath, splitAttributePath, type AssetNode, type AssetTree } from '../../../model/assets/asset-tree.js';
import { bindingsCovering } from '../../../model/bindings/bindings.js';
import { nowNs } from '../../../clock.js';
import { modelOf, who, assetReader } from './context.js';
import {
  UuidParams, AsOfQuery, AssetProjection, CreateAssetBody, PatchAssetBody, TreeQuery, TreeResponse, ResolvePathQuery,
  InstantiateBody, InstantiateResponse, ResolvePathResponse, type TreeNodeShape,
} from './schemas.js';

const AREA = 'Model';

async function projectionOf(ctx: HandlerContext, id: string, asOfNs?: number | bigint) {
  const model = modelOf(ctx);
  const tree = await model.tree(await readTxFor(model.db, asOfNs));
  const n = tree.get(id);
  if (!n) throw new ServiceError('not-found', `asset ${id} not found${asOfNs !== undefined ? ' at that time' : ''}`);
  return tree.projection(n);
}

/** Builds the nested tree under the given roots, down to depth, showing only readable assets. */
async function nestedTree(ctx: HandlerContext, tree: AssetTree, roots: AssetNode[], depth: number, includeRetired: boolean): Promise<{ roots: TreeNodeShape[]; count: number }> {
  const reader = await assetReader(ctx);
  let count = 0;
  // Readability is inherited down the tree (subtree and view grants both cover descendants),
  // so a node is checked only when its parent was not readable.
  const build = async (n: AssetNode, path: string, d: number, parentReadable: boolean, out: TreeNodeShape[]): Promise<void> => {
    if (!includeRetired && n.retired) return;
    const readable = parentReadable || await reader.asset(n.asset_id);
    let children: TreeNodeShape[] = out;
    if (readable) {
      const node: TreeNodeShape = { asset_id: n.asset_id, name: n.name, path, template_id: n.template_id, retired: n.retired, tx_id: n.tx_id, children: [] };
      out.push(node);
      count++;
      children = node.children;
      if (d >= depth) return;
    }
    for (const c of n.children) await build(c, `${path}/${c.name}`, readable ? d + 1 : d, readable, children);
  };
  const out: TreeNodeShape[] = [];
  for (const r of roots) await build(r, tree.path(r), 0, false, out);
  return { roots: out, count };
}

export function assetRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createAsset', method: 'post', path: '/v1/model/assets', area: AREA,
      summary: 'Create an asset under a parent (or at the top level); its name must be unique among its siblings. With template_id, the template\'s attributes are created in the same transaction',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' },
      body: CreateAssetBody,
      response: { status: 200, schema: AssetProjection },
      errors: [400, 401, 403, 409, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        await ctx.authorize('model-edit', b.parent ? { kind: 'asset', id: b.parent } : { kind: 'global' });
        const { assetId } = await createAsset(modelOf(ctx), who(ctx, b.reason), b);
        return { body: await projectionOf(ctx, assetId) };
      },
    }),
    defineRoute({
      operationId: 'getAsset', method: 'get', path: '/v1/model/assets/{uuid}', area: AREA,
      summary: 'The Asset projection: path, effective time zone and its source, retired, tx_id',
      access: { kind: 'capability', capability: 'read', scope: 'path-asset' },
      params: UuidParams, query: AsOfQuery,
      response: { status: 200, schema: AssetProjection },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: await projectionOf(ctx, ctx.params.uuid, ctx.query.as_of_ns) }),
    }),
    defineRoute({
      operationId: 'patchAsset', method: 'patch', path: '/v1/model/assets/{uuid}', area: AREA,
      summary: 'Rename, move (never into its own subtree), retire, unretire, or set the time zone of an asset',
      access: { kind: 'capability', capability: 'model-edit', scope: 'path-asset' },
      params: UuidParams, body: PatchAssetBody,
      response: { status: 200, schema: AssetProjection },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        if (b.move !== undefined) await ctx.authorize('model-edit', b.move === null ? { kind: 'global' } : { kind: 'asset', id: b.move });
        await patchAsset(modelOf(ctx), who(ctx, b.reason), ctx.params.uuid, b);
        return { body: await projectionOf(ctx, ctx.params.uuid) };
      },
    }),
    defineRoute({
      operationId: 'getTree', method: 'get', path: '/v1/model/tree', area: AREA,
      summary: 'The asset tree (or the subtree under root), to a depth, optionally as of a time and with retired assets',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      query: TreeQuery,
      response: { status: 200, schema: TreeResponse },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const q = ctx.query;
        const model = modelOf(ctx);
        const tx = await readTxFor(model.db, q.as_of_ns);
        const tree = await model.tree(tx);
        let roots = tree.roots;
        if (q.root) {
          const r = tree.get(q.root);
          if (!r || !(await ctx.can('read', { kind: 'asset', id: q.root }))) throw new ServiceError('not-found', `asset ${q.root} not found`);
          roots = [r];
        }
        const built = await nestedTree(ctx, tree, roots, q.depth ?? Number.MAX_SAFE_INTEGER, q.include_retired ?? false);
        const modelTx = tx ?? (await model.db.query<{ tx: bigint | null }>('SELECT max(tx_id) AS tx FROM model_tx')).rows[0].tx ?? 0n;
        return { body: { model_tx: modelTx, roots: built.roots, node_count: built.count } };
      },
    }),
    defineRoute({
      operationId: 'resolvePath', method: 'get', path: '/v1/model/resolve-path', area: AREA,
      summary: 'The asset at a path such as /Plant/Area 1/Pump 3 (its Asset projection), or the attribute at /Plant/Area 1/Pump 3|Flow (the attribute as resolve answers it, with the bindings covering as_of_ns or now)',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      query: ResolvePathQuery,
      response: { status: 200, schema: ResolvePathResponse },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        const tx = await readTxFor(model.db, ctx.query.as_of_ns);
        const tree = await model.tree(tx);
        const attr = splitAttributePath(ctx.query.path);
        const n = tree.byPath(attr ? attr.assetPath : ctx.query.path);
        if (!n || !(await ctx.can('read', { kind: 'asset', id: n.asset_id }))) throw new ServiceError('not-found', `no asset at path ${attr ? attr.assetPath : ctx.query.path}`);
        if (!attr) return { body: tree.projection(n) };
        const rows = await attributesWhere(model.db, tx, (a) => `a.asset_id = ${a.add(n.asset_id)} AND a.name = ${a.add(attr.name)}`);
        if (rows.length === 0) throw new ServiceError('not-found', `asset ${tree.path(n)} has no attribute named "${attr.name}"`);
        const [e] = await effectiveAttributes(model.db, tx, rows);
        const at = ctx.query.as_of_ns !== undefined ? BigInt(ctx.query.as_of_ns) : nowNs();
        const bindings = (await bindingsCovering(model.db, tx, [e.attribute_id], at, null)).get(e.attribute_id) ?? [];
        const assetPath = tree.path(n);
        return { body: { ...e, path: attributePath(assetPath, e.name), asset_path: assetPath, bindings } };
      },
    }),
    defineRoute({
      operationId: 'instantiateAsset', method: 'post', path: '/v1/model/assets/{uuid}/instantiate', area: AREA,
      summary: 'Create on the asset one attribute for each definition of its template that it does not have yet (after the template gained definitions); the body is optional',
      access: { kind: 'capability', capability: 'model-edit', scope: 'path-asset' },
      params: UuidParams, body: InstantiateBody, bodyOptional: true,
      response: { status: 200, schema: InstantiateResponse },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        const { created, txId } = await instantiateTemplate(model, who(ctx, ctx.body.reason), ctx.params.uuid);
        const rows = created.length === 0 ? [] : await attributesWhere(model.db, null, (a) => `a.attribute_id = ANY(${a.add(sqlTextArray(created))}::uuid[])`);
        return { body: { asset: await projectionOf(ctx, ctx.params.uuid), attributes: await effectiveAttributes(model.db, null, rows), tx_id: txId } };
      },
    }),
  ];
}
