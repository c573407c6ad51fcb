// Links: typed, directed edges between assets (a pump feeds a tank, a line supplies a
// cell), the graph that resolve's downstream_of / upstream_of walk. The type is a
// link-types registry entry, given by name or uuid; until that registry exists (issue
// #7) the type is recorded as given (a non-empty string), and walks match it exactly.
import { randomUUID } from 'node:crypto';
import { type Queryable, sqlTextArray } from '../db.js';
import { modelTransaction, type EventSink, type Who } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { SqlArgs, validAt, endCurrentVersion, checkExpectedTx, type ReadTx } from '../versions/history.js';
import { checkName } from '../versions/names.js';
import { currentAssetRow } from '../assets/assets.js';
import type { AssetModel } from '../assets/asset-model.js';

export interface Link { link_id: string; from_asset: string; to_asset: string; link_type: string; retired: boolean; tx_id: bigint }
interface LinkRow { link_id: string; from_asset: string; to_asset: string; link_type: string; retired: boolean; tx_from: bigint }
const toLink = (r: LinkRow): Link => ({ link_id: r.link_id, from_asset: r.from_asset, to_asset: r.to_asset, link_type: r.link_type, retired: r.retired, tx_id: r.tx_from });
const LINK_COLUMNS = 'link_id, from_asset, to_asset, link_type, retired, tx_from';

/** Creates a link inside the caller's model transaction. */
export async function createLinkIn(q: Queryable, txId: bigint, events: EventSink, l: { from_asset: string; to_asset: string; link_type: string }): Promise<Link> {
  checkName('link_type', l.link_type);
  if (l.from_asset === l.to_asset) throw new ServiceError('invalid-request', 'to_asset: a link joins two different assets', { errors: [{ field: 'to_asset', problem: 'same as from_asset' }] });
  for (const field of ['from_asset', 'to_asset'] as const) {
    if (!(await currentAssetRow(q, l[field]))) throw new ServiceError('invalid-request', `${field}: no asset ${l[field]}`, { errors: [{ field, problem: 'no such asset' }] });
  }
  const row: LinkRow = { link_id: randomUUID(), from_asset: l.from_asset, to_asset: l.to_asset, link_type: l.link_type, retired: false, tx_from: txId };
  await q.query(`INSERT INTO link_version (${LINK_COLUMNS}) VALUES ($1, $2, $3, $4, false, $5)`, [row.link_id, row.from_asset, row.to_asset, row.link_type, txId]);
  events.emit('link', row.link_id, 'created', { asset_id: row.from_asset, from_asset: row.from_asset, to_asset: row.to_asset, link_type: row.link_type });
  return toLink(row);
}

export async function createLink(model: AssetModel, who: Who, l: { from_asset: string; to_asset: string; link_type: string }): Promise<{ link: Link; txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => createLinkIn(q, txId, events, l));
  return { link: c.result, txId: c.txId };
}

export interface LinkPatch { retire?: boolean; restore?: boolean; expected_tx?: number | bigint }

/** Retires or restores a link inside the caller's model transaction. */
export async function patchLinkIn(q: Queryable, txId: bigint, events: EventSink, linkId: string, p: LinkPatch): Promise<Link> {
  if (p.retire === p.restore || (!p.retire && !p.restore)) {
    throw new ServiceError('invalid-request', 'retire, restore: give exactly one of them', { errors: [{ field: 'body', problem: 'exactly one of retire and restore' }] });
  }
  const { rows } = await q.query<LinkRow>(`SELECT ${LINK_COLUMNS} FROM link_version WHERE link_id = $1 AND tx_to IS NULL FOR UPDATE`, [linkId]);
  const cur = rows[0];
  if (!cur) throw new ServiceError('not-found', `link ${linkId} not found`);
  checkExpectedTx(`link ${linkId}`, p.expected_tx, cur.tx_from);
  if (p.retire && cur.retired) throw new ServiceError('conflict', `link ${linkId} is already retired`);
  if (p.restore && !cur.retired) throw new ServiceError('conflict', `link ${linkId} is not retired`);
  const next = { ...cur, retired: !!p.retire, tx_from: txId };
  await endCurrentVersion(q, 'link_version', { link_id: linkId }, txId);
  await q.query(`INSERT INTO link_version (${LINK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`, [next.link_id, next.from_asset, next.to_asset, next.link_type, next.retired, txId]);
  events.emit('link', linkId, p.retire ? 'retired' : 'restored', { asset_id: next.from_asset, from_asset: next.from_asset, to_asset: next.to_asset, link_type: next.link_type });
  return toLink(next);
}

export async function patchLink(model: AssetModel, who: Who, linkId: string, p: LinkPatch): Promise<{ link: Link; txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => patchLinkIn(q, txId, events, linkId, p));
  return { link: c.result, txId: c.txId };
}

export async function linksOfAsset(q: Queryable, tx: ReadTx, assetId: string, direction: 'out' | 'in' | 'both', includeRetired: boolean): Promise<Link[]> {
  const args = new SqlArgs();
  const valid = validAt('l', tx, args);
  const a = args.add(assetId);
  const dir = direction === 'out' ? `l.from_asset = ${a}` : direction === 'in' ? `l.to_asset = ${a}` : `(l.from_asset = ${a} OR l.to_asset = ${a})`;
  const { rows } = await q.query<LinkRow>(`SELECT ${LINK_COLUMNS} FROM link_version l WHERE ${valid} AND ${dir}${includeRetired ? '' : ' AND NOT l.retired'} ORDER BY link_type, link_id`, args.values);
  return rows.map(toLink);
}

export async function linkAt(q: Queryable, tx: ReadTx, linkId: string): Promise<Link | null> {
  const args = new SqlArgs();
  const { rows } = await q.query<LinkRow>(`SELECT ${LINK_COLUMNS} FROM link_version l WHERE ${validAt('l', tx, args)} AND l.link_id = ${args.add(linkId)}`, args.values);
  return rows[0] ? toLink(rows[0]) : null;
}

/**
 * Assets reachable from start along unretired links of the given types (any type when
 * via is empty), following links forward (downstream) or backward (upstream), at most
 * depth hops (unbounded when undefined). The start asset is included (hop 0). One query
 * per hop over the frontier; cycles in the graph end at assets already reached.
 */
export async function walkLinks(q: Queryable, tx: ReadTx, start: string, direction: 'downstream' | 'upstream', via: string[], depth?: number): Promise<Set<string>> {
  const reached = new Set<string>([start]);
  let frontier = [start];
  const [near, far] = direction === 'downstream' ? ['from_asset', 'to_asset'] : ['to_asset', 'from_asset'];
  for (let hop = 0; frontier.length > 0 && (depth === undefined || hop < depth); hop++) {
    const args = new SqlArgs();
    const valid = validAt('l', tx, args);
    const typeFilter = via.length > 0 ? ` AND l.link_type = ANY(${args.add(sqlTextArray(via))}::text[])` : '';
    const { rows } = await q.query<{ next: string }>(
      `SELECT DISTINCT l.${far} AS next FROM link_version l WHERE ${valid} AND NOT l.retired AND l.${near} = ANY(${args.add(sqlTextArray(frontier))}::uuid[])${typeFilter}`, args.values);
    frontier = [];
    for (const r of rows) if (!reached.has(r.next)) { reached.add(r.next); frontier.push(r.next); }
  }
  return reached;
}
