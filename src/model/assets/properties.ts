// Asset properties: key/value facts about an asset (manufacturer, rated power, shift
// calendar...). Effective properties are inherited down the tree: an asset sees its own
// rows plus each ancestor's keys it does not set itself, the nearest one winning.
import { randomUUID } from 'node:crypto';
import { type Queryable, jsonbParam, sqlTextArray } from '../db.js';
import { modelTransaction, type EventSink, type Who } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { SqlArgs, validAt, endCurrentVersion, type ReadTx } from '../versions/history.js';
import { checkName } from '../versions/names.js';
import { nowNs } from '../../clock.js';
import { currentAssetRow } from './assets.js';
import type { AssetModel } from './asset-model.js';

export interface OwnProperty { property_id: string; asset_id: string; key: string; value: unknown; tx_id: bigint; valid_from_ns: bigint }
export interface EffectiveProperty { key: string; source_asset: string; value: unknown }

interface PropertyRow { property_id: string; asset_id: string; key: string; value: unknown; valid_from_ns: bigint; tx_from: bigint }
const toOwn = (r: PropertyRow): OwnProperty => ({ property_id: r.property_id, asset_id: r.asset_id, key: r.key, value: r.value, tx_id: r.tx_from, valid_from_ns: r.valid_from_ns });

export async function propertiesOf(q: Queryable, tx: ReadTx, assetIds: string[]): Promise<OwnProperty[]> {
  const args = new SqlArgs();
  const { rows } = await q.query<PropertyRow>(
    `SELECT property_id, asset_id, key, value, valid_from_ns, tx_from FROM asset_property_version p
      WHERE ${validAt('p', tx, args)} AND p.asset_id = ANY(${args.add(sqlTextArray(assetIds))}::uuid[]) ORDER BY key`, args.values);
  return rows.map(toOwn);
}

/** ancestry: the asset then its ancestors, nearest first. */
export async function effectiveProperties(q: Queryable, tx: ReadTx, ancestry: string[]): Promise<EffectiveProperty[]> {
  const rows = await propertiesOf(q, tx, ancestry);
  const rank = new Map(ancestry.map((id, i) => [id, i]));
  const best = new Map<string, OwnProperty>();
  for (const r of rows) {
    const b = best.get(r.key);
    if (!b || (rank.get(r.asset_id) as number) < (rank.get(b.asset_id) as number)) best.set(r.key, r);
  }
  return [...best.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((r) => ({ key: r.key, source_asset: r.asset_id, value: r.value }));
}

/** Sets an asset's own property inside the caller's model transaction. */
export async function putPropertyIn(q: Queryable, txId: bigint, events: EventSink, assetId: string, key: string, value: unknown, validFromNs?: bigint): Promise<OwnProperty> {
  checkName('key', key);
  if (!(await currentAssetRow(q, assetId))) throw new ServiceError('not-found', `asset ${assetId} not found`);
  const prev = await endCurrentVersion<PropertyRow>(q, 'asset_property_version', { asset_id: assetId, key }, txId);
  const row: PropertyRow = { property_id: prev?.property_id ?? randomUUID(), asset_id: assetId, key, value, valid_from_ns: validFromNs ?? nowNs(), tx_from: txId };
  await q.query('INSERT INTO asset_property_version (property_id, asset_id, key, value, valid_from_ns, tx_from) VALUES ($1, $2, $3, $4::jsonb, $5, $6)',
    [row.property_id, assetId, key, jsonbParam(value), row.valid_from_ns, txId]);
  events.emit('property', row.property_id, prev ? 'updated' : 'created', { asset_id: assetId, key });
  return toOwn(row);
}

export async function putProperty(model: AssetModel, who: Who, assetId: string, key: string, value: unknown, validFromNs?: bigint): Promise<{ property: OwnProperty; txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => putPropertyIn(q, txId, events, assetId, key, value, validFromNs));
  return { property: c.result, txId: c.txId };
}

/** Removes an asset's own property inside the caller's model transaction. */
export async function deletePropertyIn(q: Queryable, txId: bigint, events: EventSink, assetId: string, key: string): Promise<void> {
  const prev = await endCurrentVersion<PropertyRow>(q, 'asset_property_version', { asset_id: assetId, key }, txId);
  if (!prev) throw new ServiceError('not-found', `asset ${assetId} has no property "${key}"`);
  events.emit('property', prev.property_id, 'deleted', { asset_id: assetId, key });
}

export async function deleteProperty(model: AssetModel, who: Who, assetId: string, key: string): Promise<{ txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => deletePropertyIn(q, txId, events, assetId, key));
  return { txId: c.txId };
}
