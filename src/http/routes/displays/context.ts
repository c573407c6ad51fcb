// What every Displays route needs: the model database, who is acting, and whether the
// caller is an author. Authors (display-author or display-publish held anywhere) see every
// folder and the newest version of every display; other readers see only published
// versions, and only the folders that lead to one (docs/decisions.md, "Displays").
import type { HandlerContext } from '../../route.js';
import type { Db } from '../../../model/db.js';
import type { Who } from '../../../model/tx-log.js';
import { ServiceError } from '../../../errors.js';
import { nowNs } from '../../../clock.js';
import { allFolders, type FolderRow } from '../../../displays/folders.js';
import { foldersWithPublished, type DisplayVersionRow } from '../../../displays/displays.js';
import { lintDocuments } from '../../../displays/lint.js';

export function dbOf(ctx: HandlerContext): Db {
  if (!ctx.service.parts.model) throw new ServiceError('model-unavailable', 'the asset model is not started');
  return ctx.service.db;
}

export function who(ctx: HandlerContext): Who {
  return { principal: ctx.principal?.subject ?? 'anonymous', reason: '' };
}

/** Whether the caller sees drafts: holds display-author or display-publish on any scope. */
export async function isAuthor(ctx: HandlerContext): Promise<boolean> {
  return (await ctx.can('display-author', { kind: 'anywhere' })) || (await ctx.can('display-publish', { kind: 'anywhere' }));
}

/** The folders the caller may read: all of them for authors; for readers, those on the way to a published display. */
export async function readableFolders(ctx: HandlerContext, author: boolean): Promise<FolderRow[]> {
  const db = dbOf(ctx);
  const folders = await allFolders(db);
  if (author) return folders;
  const byId = new Map(folders.map((f) => [f.folder_id, f]));
  const open = new Set<string>();
  for (const id of await foldersWithPublished(db)) {
    for (let at: string | null = id, hops = 0; at !== null && !open.has(at) && hops < 10_000; hops++) {
      open.add(at);
      at = byId.get(at)?.parent_id ?? null;
    }
  }
  return folders.filter((f) => open.has(f.folder_id));
}

export function folderView(f: FolderRow) {
  return { folder_id: f.folder_id, parent_id: f.parent_id, name: f.name, tx_id: f.tx_id };
}

/** Display document records (the spec's list item), linted together. */
export async function records(ctx: HandlerContext, rows: DisplayVersionRow[]) {
  const lint = await lintDocuments(dbOf(ctx), rows.map((r) => r.document), nowNs());
  return rows.map((r, i) => ({
    id: r.display_id, folder_id: r.folder_id, name: r.name, kind: r.kind, schema_version: r.schema_version, tx_id: r.tx_id,
    document: r.document, lint: lint[i],
  }));
}
