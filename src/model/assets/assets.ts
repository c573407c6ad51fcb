// Asset changes: create, rename, move (cycle-free), retire and unretire, time zone.
// Each emits one 'asset' event whose details carry the asset's new state, which is what
// keeps the in-memory tree current (asset-model.ts). The *In functions run inside a
// model transaction the caller opened (jobs, change sets: many changes, one tx); the
// plain ones open their own.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.js';
import { modelTransaction, type EventSink, type Who } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { endCurrentVersion, isUniqueViolation, checkExpectedTx } from '../versions/history.js';
import { checkName } from '../versions/names.js';
import { checkTimezone } from './timezones.js';
import { currentTemplate } from '../templates/templates.js';
import { instantiateTemplateIn } from '../attributes/attributes.js';
import type { AssetModel } from './asset-model.js';

/** Serialises moves so that two crossing moves can never build a cycle between them. */
const MOVE_LOCK = 7_304_2030;

interface AssetRow {
  asset_id: string; parent_id: string | null; name: string; template_id: string | null;
  timezone: string | null; retired: boolean; tx_from: bigint;
}

export interface NewAsset {
  name: string;
  parent?: string | null;
  template_id?: string | null;
  timezone?: string | null;
}

export interface AssetPatch {
  expected_tx?: number | bigint;
  /** Present: move under this parent (null: to the top level). */
  move?: string | null;
  rename?: string;
  retire?: boolean;
  unretire?: boolean;
  /** Present: set (a zone) or clear (null, inherit) the asset's own time zone. */
  timezone?: string | null;
}

function emitState(events: EventSink, r: Omit<AssetRow, 'tx_from'>, action: string, extra: Record<string, unknown> = {}): void {
  const state = { asset_id: r.asset_id, parent_id: r.parent_id, name: r.name, template_id: r.template_id, timezone: r.timezone, retired: r.retired };
  events.emit('asset', r.asset_id, action, { asset_id: r.asset_id, state, ...extra });
}

export async function currentAssetRow(q: Queryable, id: string, lock = false): Promise<AssetRow | null> {
  const { rows } = await q.query<AssetRow>(
    `SELECT asset_id, parent_id, name, template_id, timezone, retired, tx_from FROM asset_version WHERE asset_id = $1 AND tx_to IS NULL${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0] ?? null;
}

/** Refuses a child whose template the parent's template does not permit (empty list: any child). */
async function checkPermittedChild(q: Queryable, parent: AssetRow | null, templateId: string | null, field: string): Promise<void> {
  if (!parent?.template_id) return;
  const pt = await currentTemplate(q, parent.template_id);
  if (!pt || pt.permitted_children.length === 0) return;
  if (templateId === null || !pt.permitted_children.includes(templateId)) {
    throw new ServiceError('invalid-request', `${field}: template "${pt.name}" of the parent does not permit this child's template`, {
      errors: [{ field, problem: 'child template not permitted by the parent template' }], permitted_children: pt.permitted_children,
    });
  }
}

function nameConflict(name: string, parent: string | null): ServiceError {
  return new ServiceError('name-conflict', `an asset named "${name}" already exists ${parent ? `under ${parent}` : 'at the top level'}`, { name, parent_id: parent });
}

async function insertVersion(q: Queryable, r: Omit<AssetRow, 'tx_from'>, txId: bigint): Promise<void> {
  await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, template_id, timezone, retired, tx_from) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [r.asset_id, r.parent_id, r.name, r.template_id, r.timezone, r.retired, txId]);
}

/**
 * Creates an asset inside the caller's model transaction (bulk work composes many of
 * these into one). The in-memory tree learns of it from the 'asset' event when that
 * transaction commits.
 */
export async function createAssetIn(q: Queryable, txId: bigint, events: EventSink, a: NewAsset, assetId: string = randomUUID()): Promise<string> {
  checkName('name', a.name, { pathSegment: true });
  const timezone = a.timezone == null ? null : checkTimezone('timezone', a.timezone);
  const parent = a.parent ? await currentAssetRow(q, a.parent) : null;
  if (a.parent && !parent) throw new ServiceError('invalid-request', `parent: no asset ${a.parent}`, { errors: [{ field: 'parent', problem: 'no such asset' }] });
  const templateId = a.template_id ?? null;
  if (templateId && !(await currentTemplate(q, templateId))) throw new ServiceError('invalid-request', `template_id: no template ${templateId}`, { errors: [{ field: 'template_id', problem: 'no such template' }] });
  await checkPermittedChild(q, parent, templateId, 'template_id');
  const row = { asset_id: assetId, parent_id: parent?.asset_id ?? null, name: a.name, template_id: templateId, timezone, retired: false };
  try {
    await insertVersion(q, row, txId);
  } catch (e) {
    if (isUniqueViolation(e, 'asset_sibling_name')) throw nameConflict(a.name, a.parent ?? null);
    throw e;
  }
  emitState(events, row, 'created');
  return assetId;
}

/**
 * Creates an asset in a transaction of its own; an asset made from a template gets the
 * template's attributes in the same transaction (as a PI element made from a template
 * does). Bulk work calls createAssetIn and instantiates with ids of its own choosing.
 */
export async function createAsset(model: AssetModel, who: Who, a: NewAsset): Promise<{ assetId: string; attributeIds: string[]; txId: bigint }> {
  const c = await modelTransaction(model.db, who, async (q, txId, events) => {
    const assetId = await createAssetIn(q, txId, events, a);
    const attributeIds = a.template_id ? await instantiateTemplateIn(q, txId, events, assetId) : [];
    return { assetId, attributeIds };
  });
  return { ...c.result, txId: c.txId };
}

/**
 * Changes an asset inside the caller's model transaction; returns what changed (empty
 * when the patch matches the current state: nothing is written).
 */
export async function patchAssetIn(q: Queryable, txId: bigint, events: EventSink, assetId: string, p: AssetPatch): Promise<string[]> {
  const moving = p.move !== undefined;
  if (p.retire && p.unretire) throw new ServiceError('invalid-request', 'retire, unretire: only one of them at a time', { errors: [{ field: 'unretire', problem: 'conflicts with retire' }] });
  if (!moving && p.rename === undefined && !p.retire && !p.unretire && p.timezone === undefined) {
    throw new ServiceError('invalid-request', 'patch: nothing to change (give move, rename, retire, unretire or timezone)', { errors: [{ field: 'body', problem: 'empty patch' }] });
  }
  if (p.rename !== undefined) checkName('rename', p.rename, { pathSegment: true });
  if (p.timezone != null) checkTimezone('timezone', p.timezone);
  if (moving) await q.query('SELECT pg_advisory_xact_lock($1)', [MOVE_LOCK]);
  const cur = await currentAssetRow(q, assetId, true);
  if (!cur) throw new ServiceError('not-found', `asset ${assetId} not found`);
  checkExpectedTx(`asset ${assetId}`, p.expected_tx, cur.tx_from);
  if (p.retire && cur.retired) throw new ServiceError('conflict', `asset ${assetId} is already retired`);
  if (p.unretire && !cur.retired) throw new ServiceError('conflict', `asset ${assetId} is not retired`);
  const next = { ...cur };
  const changes: string[] = [];
  if (moving && p.move !== cur.parent_id) {
    const target = p.move ?? null;
    if (target !== null) {
      if (target === assetId) throw new ServiceError('invalid-request', 'move: an asset cannot be its own parent', { errors: [{ field: 'move', problem: 'cycle' }] });
      const parent = await currentAssetRow(q, target);
      if (!parent) throw new ServiceError('invalid-request', `move: no asset ${target}`, { errors: [{ field: 'move', problem: 'no such asset' }] });
      const { rows } = await q.query<{ found: boolean }>(
        `WITH RECURSIVE up(asset_id, parent_id) AS (
           SELECT asset_id, parent_id FROM asset_version WHERE asset_id = $1 AND tx_to IS NULL
           UNION SELECT a.asset_id, a.parent_id FROM asset_version a JOIN up ON a.asset_id = up.parent_id AND a.tx_to IS NULL)
         SELECT EXISTS (SELECT 1 FROM up WHERE asset_id = $2) AS found`, [target, assetId]);
      if (rows[0].found) throw new ServiceError('invalid-request', `move: ${target} is inside the subtree of ${assetId}; the move would make a cycle`, { errors: [{ field: 'move', problem: 'cycle' }] });
      await checkPermittedChild(q, parent, cur.template_id, 'move');
    }
    next.parent_id = target;
    changes.push('moved');
  }
  if (p.rename !== undefined && p.rename !== cur.name) { next.name = p.rename; changes.push('renamed'); }
  if (p.retire) { next.retired = true; changes.push('retired'); }
  if (p.unretire) { next.retired = false; changes.push('unretired'); }
  if (p.timezone !== undefined && p.timezone !== cur.timezone) { next.timezone = p.timezone; changes.push('timezone-changed'); }
  if (changes.length === 0) return changes; // nothing differs: the tx records the (empty) intent
  await endCurrentVersion(q, 'asset_version', { asset_id: assetId }, txId);
  try {
    await insertVersion(q, next, txId);
  } catch (e) {
    if (isUniqueViolation(e, 'asset_sibling_name')) throw nameConflict(next.name, next.parent_id);
    throw e;
  }
  emitState(events, next, changes.length === 1 ? changes[0] : 'updated', {
    changes, ...(changes.includes('moved') ? { from_parent_id: cur.parent_id } : {}), ...(changes.includes('renamed') ? { from_name: cur.name } : {}),
  });
  return changes;
}

export async function patchAsset(model: AssetModel, who: Who, assetId: string, p: AssetPatch): Promise<{ txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => patchAssetIn(q, txId, events, assetId, p));
  return { txId: c.txId };
}
