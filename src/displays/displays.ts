// Display documents: append-only versions plus a head row per display (its newest version
// and the published one), each write one model transaction. The document is stored as
// `json` text written by src/json (member order and integers of any size kept) and read
// back through the model's exact JSON parser, so an `x` bag round-trips as written.
//
// Publishing: `display_head.published_version` is what readers without display-author or
// display-publish see; NULL means the display is not visible to them at all. Authors
// always see the newest version.
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../model/db.js';
import { modelTransaction, type Who } from '../model/tx-log.js';
import { stringifyJson } from '../json/json.js';
import { nowNs } from '../clock.js';
import { ServiceError } from '../errors.js';
import type { DisplayDocument } from './display-document.js';

export interface DisplayVersionRow {
  display_id: string;
  version: number;
  folder_id: string;
  name: string;
  kind: string;
  schema_version: string;
  document: DisplayDocument;
  author: string;
  committed_ns: bigint;
  tx_id: bigint;
}

export interface DisplayHead {
  display_id: string;
  current_version: number;
  published_version: number | null;
}

/** Which version a read takes: the newest, the published one, or a numbered one. */
export type VersionPick = 'current' | 'published' | number;

const VERSION_COLUMNS = 'v.display_id, v.version, v.folder_id, v.name, v.kind, v.schema_version, v.document, v.author, v.committed_ns, v.tx_id';

export async function displayHead(q: Queryable, id: string, lock = false): Promise<DisplayHead | null> {
  return (await q.query<DisplayHead>(`SELECT display_id, current_version, published_version FROM display_head WHERE display_id = $1${lock ? ' FOR UPDATE' : ''}`, [id])).rows[0] ?? null;
}

export async function displayVersion(q: Queryable, id: string, pick: VersionPick): Promise<DisplayVersionRow | null> {
  const join = pick === 'current' ? 'v.version = h.current_version' : pick === 'published' ? 'v.version = h.published_version' : 'v.version = $2';
  const params = typeof pick === 'number' ? [id, pick] : [id];
  const { rows } = await q.query<DisplayVersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM display_head h JOIN display_version v ON v.display_id = h.display_id AND ${join} WHERE h.display_id = $1`, params);
  return rows[0] ?? null;
}

export interface DisplayListing {
  /** Only the published version of published displays (readers); else the newest of every display (authors). */
  publishedOnly: boolean;
  folder?: string;
  kind?: string;
  /** Only ids sorting after this one. */
  after?: string;
  /** At most this many rows; undefined: all. */
  limit?: number;
}

/** Displays in id order (keyset paging on display_id). */
export async function listDisplays(q: Queryable, l: DisplayListing): Promise<DisplayVersionRow[]> {
  const params: unknown[] = [];
  const add = (v: unknown) => { params.push(v); return `$${params.length}`; };
  const pub = l.publishedOnly;
  const where: string[] = [pub ? 'h.published_version IS NOT NULL' : 'true'];
  if (l.folder !== undefined) where.push(`${pub ? 'h.published_folder' : 'h.folder_id'} = ${add(l.folder)}`);
  if (l.kind !== undefined) where.push(`${pub ? 'h.published_kind' : 'h.kind'} = ${add(l.kind)}`);
  if (l.after !== undefined) where.push(`h.display_id > ${add(l.after)}`);
  const limit = l.limit === undefined ? '' : ` LIMIT ${add(l.limit)}`;
  const { rows } = await q.query<DisplayVersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM display_head h JOIN display_version v ON v.display_id = h.display_id AND v.version = ${pub ? 'h.published_version' : 'h.current_version'}
      WHERE ${where.join(' AND ')} ORDER BY h.display_id${limit}`, params as never[]);
  return rows;
}

export interface VersionSummary { version: number; tx_id: bigint; committed_ns: bigint; author: string; name: string; folder_id: string }

export async function versionsOf(q: Queryable, id: string): Promise<VersionSummary[]> {
  return (await q.query<VersionSummary>(
    'SELECT version, tx_id, committed_ns, author, name, folder_id FROM display_version WHERE display_id = $1 ORDER BY version', [id])).rows;
}

/** Folders that hold a published display (readers see these folders and their ancestors). */
export async function foldersWithPublished(q: Queryable): Promise<Set<string>> {
  const { rows } = await q.query<{ f: string }>('SELECT DISTINCT published_folder AS f FROM display_head WHERE published_version IS NOT NULL');
  return new Set(rows.map((r) => r.f));
}

async function folderExists(q: Queryable, id: string): Promise<void> {
  const { rows } = await q.query('SELECT 1 FROM display_folder_version WHERE folder_id = $1 AND tx_to IS NULL', [id]);
  if (rows.length === 0) throw new ServiceError('invalid-request', `folder_id: no display folder ${id}`, { errors: [{ field: 'folder_id', problem: 'no such display folder' }] });
}

async function insertVersion(q: Queryable, txId: bigint, who: Who, id: string, version: number, folderId: string, doc: DisplayDocument): Promise<DisplayVersionRow> {
  const row: DisplayVersionRow = {
    display_id: id, version, folder_id: folderId, name: doc.meta.name, kind: doc.kind, schema_version: doc.service_display,
    document: doc, author: who.principal, committed_ns: nowNs(), tx_id: txId,
  };
  await q.query(
    `INSERT INTO display_version (display_id, version, folder_id, name, kind, schema_version, document, author, committed_ns, tx_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7::json, $8, $9, $10)`,
    [id, version, folderId, row.name, row.kind, row.schema_version, stringifyJson(doc), row.author, row.committed_ns, txId]);
  return row;
}

async function setPublished(q: Queryable, id: string, row: DisplayVersionRow | null, txId: bigint): Promise<void> {
  await q.query(
    'UPDATE display_head SET published_version = $2, published_folder = $3, published_kind = $4, published_tx = $5 WHERE display_id = $1',
    [id, row?.version ?? null, row?.folder_id ?? null, row?.kind ?? null, row ? txId : null]);
}

export async function createDisplay(db: Db, who: Who, input: { folderId: string; document: DisplayDocument }): Promise<DisplayVersionRow> {
  const id = randomUUID();
  const { result } = await modelTransaction(db, who, async (tx, txId, events) => {
    await folderExists(tx, input.folderId);
    await tx.query('INSERT INTO display_head (display_id, current_version, folder_id, kind) VALUES ($1, 1, $2, $3)', [id, input.folderId, input.document.kind]);
    const row = await insertVersion(tx, txId, who, id, 1, input.folderId, input.document);
    events.emit('display', id, 'created', { version: 1, folder_id: input.folderId });
    return row;
  });
  return result;
}

export interface DisplayUpdate {
  expectedTx: bigint;
  document?: DisplayDocument;
  folderId?: string;
}

/**
 * A new version with the document and/or the folder changed. The stale check compares
 * expectedTx with the newest version's tx_id: an edit made from an older version is
 * refused with 409 conflict. Unchanged input (same folder, no document) writes nothing.
 */
export async function updateDisplay(db: Db, who: Who, id: string, u: DisplayUpdate): Promise<DisplayVersionRow> {
  const { result } = await modelTransaction(db, who, async (tx, txId, events) => {
    const head = await displayHead(tx, id, true);
    if (!head) throw new ServiceError('not-found', `display ${id} not found`);
    let row = await displayVersion(tx, id, 'current') as DisplayVersionRow;
    if (row.tx_id !== u.expectedTx) {
      throw new ServiceError('conflict', `the display changed: expected tx ${u.expectedTx}, its newest version is tx ${row.tx_id}`, { expected_tx: String(u.expectedTx), current_tx: String(row.tx_id), current_version: row.version });
    }
    if (u.document !== undefined || (u.folderId !== undefined && u.folderId !== row.folder_id)) {
      const folderId = u.folderId ?? row.folder_id;
      if (folderId !== row.folder_id) await folderExists(tx, folderId);
      const doc = u.document ?? row.document;
      const version = head.current_version + 1;
      row = await insertVersion(tx, txId, who, id, version, folderId, doc);
      await tx.query('UPDATE display_head SET current_version = $2, folder_id = $3, kind = $4 WHERE display_id = $1', [id, version, folderId, doc.kind]);
      events.emit('display', id, 'updated', { version, folder_id: folderId });
    }
    return row;
  });
  return result;
}

export interface Publication { display_id: string; published_version: number | null; tx_id: bigint }

/** Makes `version` the one readers see (null: withdraws the display from them). */
export async function publishDisplay(db: Db, who: Who, id: string, version: number | null): Promise<Publication> {
  const { result } = await modelTransaction(db, who, async (tx, txId, events) => {
    const head = await displayHead(tx, id, true);
    if (!head) throw new ServiceError('not-found', `display ${id} not found`);
    if (version === null) {
      await setPublished(tx, id, null, txId);
      events.emit('display', id, 'withdrawn', { version: head.published_version });
    } else {
      const row = await displayVersion(tx, id, version);
      if (!row) throw new ServiceError('invalid-request', `version: display ${id} has no version ${version}`, { errors: [{ field: 'version', problem: `no version ${version} (the newest is ${head.current_version})` }] });
      await setPublished(tx, id, row, txId);
      events.emit('display', id, 'published', { version });
    }
    return { display_id: id, published_version: version, tx_id: txId };
  });
  return result;
}
