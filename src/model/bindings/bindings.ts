// Bindings put a series behind an attribute for a stretch of valid time [from_ns, to_ns).
// The bindings of one attribute never overlap, and a series is behind at most one
// attribute at any instant (so a series has one owning asset). Binding an attribute that
// has an open binding starting earlier closes that binding at the new from_ns; binding
// to series null only closes it (unbinding). Nothing is deleted: the history stays.
import { randomUUID } from 'node:crypto';
import { type Queryable, sqlTextArray } from '../db.js';
import { modelTransaction, type EventSink, type Who } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { SqlArgs, validAt, endCurrentVersion, type ReadTx } from '../versions/history.js';
import type { AssetModel } from '../assets/asset-model.js';
import { ATTRIBUTE_COLUMNS, effectiveAttributes, type AttributeRow, type EffectiveAttribute } from '../attributes/effective.js';
import { entryRow } from '../registries/registry-entries.js';

export interface Binding {
  binding_id: string;
  attribute_id: string;
  series_id: string;
  from_ns: bigint;
  to_ns: bigint | null;
  tx_id: bigint;
}

interface BindingRow { binding_id: string; attribute_id: string; series_id: string; from_ns: bigint; to_ns: bigint | null; tx_from: bigint }

export interface NewBinding {
  attribute_id: string;
  /** null: close the attribute's open binding at from_ns without a successor. */
  series_id: string | null;
  from_ns: bigint;
  to_ns?: bigint | null;
}

const toBinding = (r: BindingRow): Binding => ({ binding_id: r.binding_id, attribute_id: r.attribute_id, series_id: r.series_id, from_ns: r.from_ns, to_ns: r.to_ns, tx_id: r.tx_from });

/** Serialises binding changes of one series (its overlap check must see every writer). */
const SERIES_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('binding:' || $1))";

const overlaps = (aFrom: bigint, aTo: bigint | null, bFrom: bigint, bTo: bigint | null) =>
  (bTo === null || aFrom < bTo) && (aTo === null || bFrom < aTo);

interface SeriesTypeRow { value_type: string; enum_set_id: string | null }

const NUMERIC_TYPES = new Set(['float64', 'int64']);

async function entryName(q: Queryable, id: string): Promise<string> {
  const e = await entryRow(q, null, id);
  return e ? `"${e.name}" (${id})` : id;
}

/**
 * Refuses a series whose values cannot be the attribute's: an attribute with an enum set
 * takes enum series of that set; one that measures a quantity takes float64 or int64
 * series. An attribute with neither takes any series. The lints (binding-value-type,
 * binding-enum-set-differs) keep reporting bindings that a later definition change made
 * wrong; this check keeps new bindings from starting wrong.
 */
async function checkSeriesServes(q: Queryable, a: EffectiveAttribute, seriesId: string, s: SeriesTypeRow): Promise<void> {
  let needs: string | null = null;
  if (a.enum_set_id !== null) {
    if (s.value_type !== 'enum' || s.enum_set_id !== a.enum_set_id) needs = `enum values of enum set ${await entryName(q, a.enum_set_id)}`;
  } else if (a.quantity_kind_id !== null && !NUMERIC_TYPES.has(s.value_type)) {
    needs = `numbers (float64 or int64) of quantity kind ${await entryName(q, a.quantity_kind_id)}`;
  }
  if (needs === null) return;
  const holds = s.value_type === 'enum' ? `enum values of enum set ${await entryName(q, s.enum_set_id as string)}` : `${s.value_type} values`;
  throw new ServiceError('invalid-request', `series_id: series ${seriesId} holds ${holds}; attribute "${a.name}" (${a.attribute_id}) takes ${needs}`, {
    errors: [{ field: 'series_id', problem: 'value type cannot serve the attribute' }],
    series_value_type: s.value_type, series_enum_set_id: s.enum_set_id,
    attribute_quantity_kind_id: a.quantity_kind_id, attribute_enum_set_id: a.enum_set_id,
  });
}

/** What a bind did: the new binding (null for an unbinding) and the bindings it closed. */
export interface BindOutcome { binding: Binding | null; closed: string[] }

/**
 * Binds (or unbinds) inside the caller's model transaction. Bulk work calls it once per
 * attribute so every binding goes through the same overlap and ownership checks.
 */
export async function bindIn(q: Queryable, txId: bigint, events: EventSink, b: NewBinding): Promise<BindOutcome> {
  const to = b.to_ns ?? null;
  if (to !== null && to <= b.from_ns) throw new ServiceError('invalid-request', 'to_ns: must be after from_ns', { errors: [{ field: 'to_ns', problem: 'not after from_ns' }] });
  if (b.series_id === null && to !== null) throw new ServiceError('invalid-request', 'to_ns: an unbinding (series_id null) takes only from_ns', { errors: [{ field: 'to_ns', problem: 'not allowed when unbinding' }] });
  const attr = await q.query<AttributeRow>(`SELECT ${ATTRIBUTE_COLUMNS} FROM attribute_version a WHERE a.attribute_id = $1 AND a.tx_to IS NULL FOR UPDATE`, [b.attribute_id]);
  if (!attr.rows[0]) throw new ServiceError('invalid-request', `attribute_id: no attribute ${b.attribute_id}`, { errors: [{ field: 'attribute_id', problem: 'no such attribute' }] });
  const assetId = attr.rows[0].asset_id;
  if (b.series_id !== null) {
    const s = await q.query<SeriesTypeRow>('SELECT value_type, enum_set_id FROM series WHERE series_id = $1', [b.series_id]);
    if (!s.rows[0]) throw new ServiceError('invalid-request', `series_id: no series ${b.series_id}`, { errors: [{ field: 'series_id', problem: 'no such series' }] });
    const [effective] = await effectiveAttributes(q, null, attr.rows);
    await checkSeriesServes(q, effective, b.series_id, s.rows[0]);
    await q.query(SERIES_LOCK_SQL, [b.series_id]);
  }
  const { rows: mine } = await q.query<BindingRow>('SELECT binding_id, attribute_id, series_id, from_ns, to_ns, tx_from FROM binding_version WHERE attribute_id = $1 AND tx_to IS NULL', [b.attribute_id]);
  const closed: string[] = [];
  for (const r of mine) {
    if (r.to_ns === null && r.from_ns < b.from_ns) {
      await endCurrentVersion(q, 'binding_version', { binding_id: r.binding_id }, txId);
      await q.query('INSERT INTO binding_version (binding_id, attribute_id, series_id, from_ns, to_ns, tx_from) VALUES ($1, $2, $3, $4, $5, $6)',
        [r.binding_id, r.attribute_id, r.series_id, r.from_ns, b.from_ns, txId]);
      events.emit('binding', r.binding_id, 'closed', { asset_id: assetId, attribute_id: r.attribute_id, series_id: r.series_id, from_ns: r.from_ns, to_ns: b.from_ns });
      closed.push(r.binding_id);
    } else if (b.series_id !== null && overlaps(b.from_ns, to, r.from_ns, r.to_ns)) {
      throw new ServiceError('conflict', `attribute ${b.attribute_id} is already bound over part of that range (binding ${r.binding_id}, from ${r.from_ns}${r.to_ns === null ? '' : ` to ${r.to_ns}`})`, { binding_id: r.binding_id });
    }
  }
  if (b.series_id === null) {
    if (closed.length === 0) throw new ServiceError('conflict', `attribute ${b.attribute_id} has no open binding starting before ${b.from_ns} to close`);
    return { binding: null, closed };
  }
  const { rows: other } = await q.query<BindingRow>(
    `SELECT binding_id, attribute_id, series_id, from_ns, to_ns, tx_from FROM binding_version
      WHERE series_id = $1 AND tx_to IS NULL AND attribute_id <> $2 AND (to_ns IS NULL OR to_ns > $3) ${to === null ? '' : 'AND from_ns < $4'} LIMIT 1`,
    to === null ? [b.series_id, b.attribute_id, b.from_ns] : [b.series_id, b.attribute_id, b.from_ns, to]);
  if (other[0]) {
    throw new ServiceError('conflict', `series ${b.series_id} is already bound to attribute ${other[0].attribute_id} over part of that range; unbind it there first`, { binding_id: other[0].binding_id, attribute_id: other[0].attribute_id });
  }
  const row: BindingRow = { binding_id: randomUUID(), attribute_id: b.attribute_id, series_id: b.series_id, from_ns: b.from_ns, to_ns: to, tx_from: txId };
  await q.query('INSERT INTO binding_version (binding_id, attribute_id, series_id, from_ns, to_ns, tx_from) VALUES ($1, $2, $3, $4, $5, $6)',
    [row.binding_id, row.attribute_id, row.series_id, row.from_ns, row.to_ns, txId]);
  events.emit('binding', row.binding_id, 'created', { asset_id: assetId, attribute_id: row.attribute_id, series_id: row.series_id, from_ns: row.from_ns, to_ns: row.to_ns, closed });
  return { binding: toBinding(row), closed };
}

export async function bind(model: AssetModel, who: Who, b: NewBinding): Promise<BindOutcome & { txId: bigint }> {
  const c = await modelTransaction(model.db, who, (q, txId, events) => bindIn(q, txId, events, b));
  return { ...c.result, txId: c.txId };
}

/** The valid-time history of an attribute's bindings as the model knew it at the read. */
export async function bindingHistory(q: Queryable, tx: ReadTx, attributeId: string): Promise<Binding[]> {
  const args = new SqlArgs();
  const { rows } = await q.query<BindingRow>(
    `SELECT binding_id, attribute_id, series_id, from_ns, to_ns, tx_from FROM binding_version b
      WHERE ${validAt('b', tx, args)} AND b.attribute_id = ${args.add(attributeId)} ORDER BY from_ns`, args.values);
  return rows.map(toBinding);
}

/**
 * Bindings of the given attributes valid at the read that cover [start, end] (inclusive
 * instants), or that cover the instant `start` when end is null.
 */
export async function bindingsCovering(q: Queryable, tx: ReadTx, attributeIds: string[], start: bigint, end: bigint | null): Promise<Map<string, Binding[]>> {
  const out = new Map<string, Binding[]>();
  if (attributeIds.length === 0) return out;
  const args = new SqlArgs();
  const valid = validAt('b', tx, args);
  const ids = args.add(sqlTextArray(attributeIds));
  const s = args.add(start);
  const e = end === null ? s : args.add(end);
  const { rows } = await q.query<BindingRow>(
    `SELECT binding_id, attribute_id, series_id, from_ns, to_ns, tx_from FROM binding_version b
      WHERE ${valid} AND b.attribute_id = ANY(${ids}::uuid[]) AND b.from_ns <= ${e} AND (b.to_ns IS NULL OR b.to_ns > ${s})
      ORDER BY b.attribute_id, b.from_ns`, args.values);
  for (const r of rows) {
    const list = out.get(r.attribute_id);
    if (list) list.push(toBinding(r)); else out.set(r.attribute_id, [toBinding(r)]);
  }
  return out;
}
