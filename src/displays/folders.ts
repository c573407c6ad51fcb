// Display folders: a tree of names kept as history (tx_from/tx_to, as the asset model),
// each change one model transaction. Names are unique among current siblings; a move that
// would put a folder under itself is refused (400 naming parent_id: the request can never
// succeed as asked, whatever else changes).
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../model/db.js';
import { modelTransaction, type Who } from '../model/tx-log.js';
import { endCurrentVersion, isUniqueViolation, checkExpectedTx } from '../model/versions/history.js';
import { ServiceError, invalid } from '../errors.js';

export interface FolderRow {
  folder_id: string;
  parent_id: string | null;
  name: string;
  tx_id: bigint;
}

const SELECT = 'SELECT folder_id, parent_id, name, tx_from AS tx_id FROM display_folder_version WHERE tx_to IS NULL';

export async function folderById(q: Queryable, id: string): Promise<FolderRow | null> {
  return (await q.query<FolderRow>(`${SELECT} AND folder_id = $1`, [id])).rows[0] ?? null;
}

/** Every current folder (folders number in the hundreds or thousands: one query, filtered in memory). */
export async function allFolders(q: Queryable): Promise<FolderRow[]> {
  return (await q.query<FolderRow>(`${SELECT} ORDER BY name, folder_id`)).rows;
}

/** Runs a folder write, turning a clash on the sibling-name index into 409 name-conflict. */
async function siblingNameChecked<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (isUniqueViolation(e, 'display_folder_sibling_name')) throw new ServiceError('name-conflict', `a folder named "${name}" already exists there`, { name });
    throw e;
  }
}

async function checkParent(q: Queryable, parentId: string | null, movingId: string | null): Promise<void> {
  if (parentId === null) return;
  // Walk up from the new parent: meeting the folder itself means the move makes a cycle.
  let at: string | null = parentId;
  for (let hops = 0; at !== null; hops++) {
    if (at === movingId) throw invalid('parent_id', 'would put the folder inside itself (a cycle)');
    const row = await folderById(q, at);
    if (!row) {
      if (at === parentId) throw invalid('parent_id', `no display folder ${parentId}`);
      throw new ServiceError('internal', `BUG: display folder ${at} has a missing parent`);
    }
    if (hops > 10_000) throw new ServiceError('internal', 'BUG: display folders form a cycle');
    at = row.parent_id;
  }
}

export async function createFolder(db: Db, who: Who, input: { name: string; parent_id?: string | null }): Promise<FolderRow> {
  const id = randomUUID();
  const parent = input.parent_id ?? null;
  return siblingNameChecked(input.name, async () => {
    const { result } = await modelTransaction(db, who, async (tx, txId, events) => {
      await checkParent(tx, parent, null);
      await tx.query('INSERT INTO display_folder_version (folder_id, parent_id, name, tx_from) VALUES ($1, $2, $3, $4)', [id, parent, input.name, txId]);
      events.emit('display-folder', id, 'created', { parent_id: parent, name: input.name });
      return { folder_id: id, parent_id: parent, name: input.name, tx_id: txId };
    });
    return result;
  });
}

/** Renames and/or moves a folder (a new version); unchanged input is a no-op answering the current row. */
export async function putFolder(db: Db, who: Who, id: string, input: { name: string; parent_id: string | null; expected_tx?: number | bigint }): Promise<FolderRow> {
  return siblingNameChecked(input.name, async () => {
    const { result } = await modelTransaction(db, who, async (tx, txId, events) => {
      const current = await tx.query<FolderRow>(`${SELECT} AND folder_id = $1 FOR UPDATE`, [id]);
      const row = current.rows[0];
      if (!row) throw new ServiceError('not-found', `display folder ${id} not found`);
      checkExpectedTx('the folder', input.expected_tx, row.tx_id);
      if (row.name === input.name && row.parent_id === input.parent_id) return row;
      await checkParent(tx, input.parent_id, id);
      await endCurrentVersion(tx, 'display_folder_version', { folder_id: id }, txId);
      await tx.query('INSERT INTO display_folder_version (folder_id, parent_id, name, tx_from) VALUES ($1, $2, $3, $4)', [id, input.parent_id, input.name, txId]);
      events.emit('display-folder', id, 'updated', { parent_id: input.parent_id, name: input.name });
      return { folder_id: id, parent_id: input.parent_id, name: input.name, tx_id: txId };
    });
    return result;
  });
}

/** The folder at a path of names from the top ("Plant/Operators"), or null. */
export function folderAtPath(folders: FolderRow[], names: string[]): FolderRow | null {
  let parent: string | null = null;
  let found: FolderRow | null = null;
  for (const n of names) {
    found = folders.find((f) => f.parent_id === parent && f.name === n) ?? null;
    if (!found) return null;
    parent = found.folder_id;
  }
  return found;
}

/** The names from the top down to the folder. */
export function folderPath(byId: Map<string, FolderRow>, id: string): string[] {
  const names: string[] = [];
  for (let at: string | null = id, hops = 0; at !== null && hops < 10_000; hops++) {
    const f = byId.get(at);
    if (!f) break;
    names.unshift(f.name);
    at = f.parent_id;
  }
  return names;
}
