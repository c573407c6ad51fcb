// What the series env costs on disk. LMDB never shrinks its file: pages freed by deleted
// head segments and rewritten records go to its free list and are reused by later
// commits, so the file size is a high-water mark. "Live" bytes are the pages the trees
// use now (all tables, LMDB's own free-list tree and its two meta pages); the difference
// is free pages. `SeriesStore.compactCopy` writes a copy that holds the live pages only.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SeriesEnv } from './series-env.js';

export interface DiskUsage {
  /** Size of data.mdb. */
  fileBytes: number;
  /** Pages up to LMDB's last used page number (the high-water mark) x page size. */
  usedToHighWaterBytes: number;
  /** Pages the tables, the free list tree and the meta pages occupy x page size. */
  liveBytes: number;
  /** Per table: pages x page size. */
  tables: Record<string, number>;
  /** Per table: its pages by kind and its entries (where the bytes of `tables` go). */
  tablePages: Record<string, TablePages>;
  pageSize: number;
}

export interface TablePages { branch: number; leaf: number; overflow: number; entries: number }

interface TreeStat { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number; entryCount: number }
interface RootStats extends TreeStat { free: TreeStat; lastPageNumber: number }

const pagesOf = (s: TreeStat): number => s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;

export async function measureDisk(env: SeriesEnv): Promise<DiskUsage> {
  const root = env.root.getStats() as RootStats;
  const pageSize = root.pageSize;
  const tables: Record<string, number> = {};
  const tablePages: Record<string, TablePages> = {};
  let live = pagesOf(root) + pagesOf(root.free) + 2;
  const named = { chunks: env.chunks, heads: env.heads, 'head-segments': env.segments, audit: env.audit, rollups: env.rollups, meta: env.meta, 'tail-packs': env.tailPacks };
  for (const [name, db] of Object.entries(named)) {
    const st = db.getStats() as TreeStat;
    const pages = pagesOf(st);
    tables[name] = pages * pageSize;
    tablePages[name] = { branch: st.treeBranchPageCount, leaf: st.treeLeafPageCount, overflow: st.overflowPages, entries: st.entryCount };
    live += pages;
  }
  const fileBytes = (await stat(join(env.path, 'data.mdb'))).size;
  return { fileBytes, usedToHighWaterBytes: (root.lastPageNumber + 1) * pageSize, liveBytes: live * pageSize, tables, tablePages, pageSize };
}
