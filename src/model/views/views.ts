// Views: alternate hierarchies over the same assets (an operations view, a maintenance
// view...). A view is a name plus members; each member places an asset under another
// member of the same view, or at its top. Membership is replaced as a whole by PATCH.
import { randomUUID } from 'node:crypto';
import { type Queryable, sqlTextArray } from '../db.js';
import { modelTransaction, type EventSink, type Who } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { SqlArgs, validAt, endCurrentVersion, isUniqueViolation, checkExpectedTx, type ReadTx } from '../versions/history.js';
import { checkName } from '../versions/names.js';
import type { AssetModel } from '../assets/asset-model.js';

export interface View { view_id: string; name: string; retired: boolean; tx_id: bigint }
export interface ViewMember { asset_id: string; parent_asset_id: string | null }

export interface ViewPatch {
  expected_tx?: number | bigint;
  name?: string;
  retire?: boolean;
  unretire?: boolean;
  members?: ViewMember[];
}

interface ViewRow { view_id: string; name: string; retired: boolean; tx_from: bigint }
const toView = (r: ViewRow): View => ({ view_id: r.view_id, name: r.name, retired: r.retired, tx_id: r.tx_from });

function checkMembers(members: ViewMember[]): void {
  const byAsset = new Map<string, string | null>();
  members.forEach((m, i) => {
    if (byAsset.has(m.asset_id)) throw new ServiceError('invalid-request', `members[${i}].asset_id: ${m.asset_id} is placed twice`, { errors: [{ field: `members[${i}].asset_id`, problem: 'duplicate member' }] });
    byAsset.set(m.asset_id, m.parent_asset_id);
  });
  members.forEach((m, i) => {
    if (m.parent_asset_id !== null && !byAsset.has(m.parent_asset_id)) {
      throw new ServiceError('invalid-request', `members[${i}].parent_asset_id: ${m.parent_asset_id} is not a member of the view`, { errors: [{ field: `members[${i}].parent_asset_id`, problem: 'parent not a member' }] });
    }
    let steps = 0;
    for (let p = m.parent_asset_id; p !== null; p = byAsset.get(p) ?? null) {
      if (p === m.asset_id || ++steps > members.length) throw new ServiceError('invalid-request', `members[${i}]: the view hierarchy would contain a cycle`, { errors: [{ field: `members[${i}].parent_asset_id`, problem: 'cycle' }] });
    }
  });
}

async function writeMembers(q: Queryable, viewId: string, members: ViewMember[], txId: bigint): Promise<void> {
  const ids = members.map((m) => m.asset_id);
  if (ids.length > 0) {
    const { rows } = await q.query<{ asset_id: string }>('SELECT asset_id FROM asset_version WHERE tx_to IS NULL AND asset_id = ANY($1::uuid[])', [sqlTextArray(ids)]);
    const found = new Set(rows.map((r) => r.asset_id));
    const i = ids.findIndex((id) => !found.has(id));
    if (i >= 0) throw new ServiceError('invalid-request', `members[${i}].asset_id: no asset ${ids[i]}`, { errors: [{ field: `members[${i}].asset_id`, problem: 'no such asset' }] });
  }
  await q.query('UPDATE view_member_version SET tx_to = $2 WHERE view_id = $1 AND tx_to IS NULL', [viewId, txId]);
  await q.query('DELETE FROM view_member_version WHERE view_id = $1 AND tx_from = $2 AND tx_to = $2', [viewId, txId]);
  if (members.length === 0) return;
  await q.query(
    `INSERT INTO view_member_version (view_id, asset_id, parent_asset_id, ordinal, tx_from)
     SELECT $1, m.asset_id, m.parent_asset_id, m.ordinal, $2 FROM unnest($3::uuid[], $4::uuid[], $5::int[]) AS m(asset_id, parent_asset_id, ordinal)`,
    [viewId, txId, sqlTextArray(ids), sqlTextArray(members.map((m) => m.parent_asset_id)), sqlTextArray(members.map((_m, i) => i))]);
}

const viewNameConflict = (name: string) => new ServiceError('name-conflict', `a view named "${name}" already exists`, { name });

/** Creates a view inside the caller's model transaction; returns its id. */
export async function createViewIn(q: Queryable, txId: bigint, events: EventSink, v: { name: string; members?: ViewMember[] }, viewId: string = randomUUID()): Promise<string> {
  checkName('name', v.name);
  checkMembers(v.members ?? []);
  try {
    await q.query('INSERT INTO view_version (view_id, name, retired, tx_from) VALUES ($1, $2, false, $3)', [viewId, v.name, txId]);
  } catch (e) {
    if (isUniqueViolation(e, 'view_name_current')) throw viewNameConflict(v.name);
    throw e;
  }
  await writeMembers(q, viewId, v.members ?? [], txId);
  events.emit('view', viewId, 'created', { name: v.name, members: (v.members ?? []).length });
  return viewId;
}

export async function createView(model: AssetModel, who: Who, v: { name: string; members?: ViewMember[] }): Promise<{ viewId: string; txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => createViewIn(q, txId, events, v));
  return { viewId: c.result, txId: c.txId };
}

/** Renames, retires, unretires or re-members a view inside the caller's model transaction. */
export async function patchViewIn(q: Queryable, txId: bigint, events: EventSink, viewId: string, p: ViewPatch): Promise<void> {
  if (p.retire && p.unretire) throw new ServiceError('invalid-request', 'retire, unretire: only one of them at a time', { errors: [{ field: 'unretire', problem: 'conflicts with retire' }] });
  if (p.name === undefined && !p.retire && !p.unretire && p.members === undefined) throw new ServiceError('invalid-request', 'patch: nothing to change (give name, retire, unretire or members)', { errors: [{ field: 'body', problem: 'empty patch' }] });
  if (p.name !== undefined) checkName('name', p.name);
  if (p.members) checkMembers(p.members);
  const { rows } = await q.query<ViewRow>('SELECT view_id, name, retired, tx_from FROM view_version WHERE view_id = $1 AND tx_to IS NULL FOR UPDATE', [viewId]);
  const cur = rows[0];
  if (!cur) throw new ServiceError('not-found', `view ${viewId} not found`);
  checkExpectedTx(`view ${viewId}`, p.expected_tx, cur.tx_from);
  if (p.retire && cur.retired) throw new ServiceError('conflict', `view ${viewId} is already retired`);
  if (p.unretire && !cur.retired) throw new ServiceError('conflict', `view ${viewId} is not retired`);
  const name = p.name ?? cur.name;
  const retired = p.retire ? true : p.unretire ? false : cur.retired;
  await endCurrentVersion(q, 'view_version', { view_id: viewId }, txId);
  try {
    await q.query('INSERT INTO view_version (view_id, name, retired, tx_from) VALUES ($1, $2, $3, $4)', [viewId, name, retired, txId]);
  } catch (e) {
    if (isUniqueViolation(e, 'view_name_current')) throw viewNameConflict(name);
    throw e;
  }
  if (p.members) await writeMembers(q, viewId, p.members, txId);
  const changes = [p.name !== undefined && 'renamed', p.retire && 'retired', p.unretire && 'unretired', p.members && 'members-changed'].filter((x): x is string => typeof x === 'string');
  events.emit('view', viewId, changes.length === 1 ? changes[0] : 'updated', { name, retired, changes });
}

export async function patchView(model: AssetModel, who: Who, viewId: string, p: ViewPatch): Promise<{ txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => patchViewIn(q, txId, events, viewId, p));
  return { txId: c.txId };
}

export async function viewsAt(q: Queryable, tx: ReadTx, opts: { id?: string; includeRetired?: boolean }): Promise<View[]> {
  const args = new SqlArgs();
  let where = validAt('v', tx, args);
  if (opts.id) where += ` AND v.view_id = ${args.add(opts.id)}`;
  if (!opts.includeRetired && !opts.id) where += ' AND NOT v.retired';
  const { rows } = await q.query<ViewRow>(`SELECT view_id, name, retired, tx_from FROM view_version v WHERE ${where} ORDER BY name`, args.values);
  return rows.map(toView);
}

export async function viewMembersAt(q: Queryable, tx: ReadTx, viewId: string): Promise<ViewMember[]> {
  const args = new SqlArgs();
  const { rows } = await q.query<ViewMember>(
    `SELECT asset_id, parent_asset_id FROM view_member_version m WHERE ${validAt('m', tx, args)} AND m.view_id = ${args.add(viewId)} ORDER BY ordinal`, args.values);
  return rows;
}
