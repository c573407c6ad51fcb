// Series records in the model: the uuid, where the points come from, the value type,
// the enum set, the writable class and when the series was created. Plain SQL over a
// Queryable so that callers compose it into their own model transaction.
import { sqlTextArray, type Queryable } from '../model/db.js';
import type { ValueType } from '../storage/encoding/chunk-types.js';

export const VALUE_TYPES: readonly ValueType[] = ['float64', 'int64', 'boolean', 'string', 'enum'];

/** Longest source name accepted (ingest stream names, manual entry names). */
export const SOURCE_NAME_MAX = 512;

export interface SeriesRecord {
  id: string;
  sourceName: string;
  valueType: ValueType;
  enumSetId: string | null;
  writableClass: string;
  createdTx: bigint;
  createdNs: bigint;
  updatedTx: bigint;
}

interface Row {
  series_id: string;
  source_name: string;
  value_type: ValueType;
  enum_set_id: string | null;
  writable_class: string;
  created_tx: bigint;
  created_ns: bigint;
  updated_tx: bigint;
}

const COLUMNS = 'series_id, source_name, value_type, enum_set_id, writable_class, created_tx, created_ns, updated_tx';

function toRecord(r: Row): SeriesRecord {
  return {
    id: r.series_id,
    sourceName: r.source_name,
    valueType: r.value_type,
    enumSetId: r.enum_set_id,
    writableClass: r.writable_class,
    createdTx: BigInt(r.created_tx),
    createdNs: BigInt(r.created_ns),
    updatedTx: BigInt(r.updated_tx),
  };
}

export interface NewSeriesRow {
  id: string;
  sourceName: string;
  valueType: ValueType;
  enumSetId: string | null;
  writableClass: string;
  createdNs: bigint;
}

/** Inserts a record; returns null when the source name is taken (the caller decides what that means). */
export async function insertSeriesRow(q: Queryable, txId: bigint, s: NewSeriesRow): Promise<SeriesRecord | null> {
  const { rows } = await q.query<Row>(
    `INSERT INTO series (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $6)
     ON CONFLICT (source_name) DO NOTHING RETURNING ${COLUMNS}`,
    [s.id, s.sourceName, s.valueType, s.enumSetId, s.writableClass, txId, s.createdNs],
  );
  return rows.length ? toRecord(rows[0]) : null;
}

/**
 * Inserts many records in one statement (arrays unnested: one round trip and a fixed
 * number of parameters whatever the count), all stamped with txId. Rows whose source name
 * is taken are skipped; returns the records inserted (the caller looks the others up).
 */
export async function insertSeriesRows(q: Queryable, txId: bigint, rows: readonly NewSeriesRow[]): Promise<SeriesRecord[]> {
  if (rows.length === 0) return [];
  const { rows: out } = await q.query<Row>(
    `INSERT INTO series (${COLUMNS})
     SELECT u.id, u.name, u.vt, u.es, u.wc, $1::bigint, u.cns, $1::bigint
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[], $6::text[], $7::bigint[]) AS u(id, name, vt, es, wc, cns)
     ON CONFLICT (source_name) DO NOTHING RETURNING ${COLUMNS}`,
    [txId, sqlTextArray(rows.map((r) => r.id)), sqlTextArray(rows.map((r) => r.sourceName)), sqlTextArray(rows.map((r) => r.valueType)),
      sqlTextArray(rows.map((r) => r.enumSetId)), sqlTextArray(rows.map((r) => r.writableClass)), sqlTextArray(rows.map((r) => r.createdNs))],
  );
  return out.map(toRecord);
}

/** The records with these source names (any order; absent names are simply missing). */
export async function seriesBySourceNames(q: Queryable, names: readonly string[]): Promise<SeriesRecord[]> {
  if (names.length === 0) return [];
  // a join with the unnested names: about 4x faster than `= ANY($1)` for 5,000 names on PGlite
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM unnest($1::text[]) AS n(name) JOIN series ON source_name = n.name`, [sqlTextArray(names)]);
  return rows.map(toRecord);
}

/** The records with these ids (any order; absent ids are simply missing). */
export async function seriesByIds(q: Queryable, ids: readonly string[]): Promise<SeriesRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM unnest($1::uuid[]) AS n(id) JOIN series ON series_id = n.id`, [sqlTextArray(ids)]);
  return rows.map(toRecord);
}

export async function seriesById(q: Queryable, id: string): Promise<SeriesRecord | null> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM series WHERE series_id = $1`, [id]);
  return rows.length ? toRecord(rows[0]) : null;
}

export async function seriesBySourceName(q: Queryable, sourceName: string): Promise<SeriesRecord | null> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM series WHERE source_name = $1`, [sourceName]);
  return rows.length ? toRecord(rows[0]) : null;
}

export async function updateWritableClassRow(q: Queryable, txId: bigint, id: string, writableClass: string): Promise<SeriesRecord | null> {
  const { rows } = await q.query<Row>(
    `UPDATE series SET writable_class = $2, updated_tx = $3 WHERE series_id = $1 RETURNING ${COLUMNS}`,
    [id, writableClass, txId],
  );
  return rows.length ? toRecord(rows[0]) : null;
}

export interface SeriesRowFilter {
  /** Source names starting with this text (byte-wise). */
  namePrefix?: string;
  /** Source names containing this text anywhere, ignoring case (trigram index, migration 0022). */
  nameContains?: string;
  valueType?: ValueType;
  /** Keyset: only names strictly after this one (source names are unique). */
  afterName?: string;
  limit: number;
}

/** Escapes LIKE metacharacters so a prefix is matched literally. */
const escapeLike = (p: string) => p.replace(/[\\%_]/g, (c) => `\\${c}`);
const likePrefix = (p: string) => `${escapeLike(p)}%`;

/** One page in source-name order (byte order: the column is COLLATE "C"). */
export async function listSeriesRows(q: Queryable, f: SeriesRowFilter): Promise<SeriesRecord[]> {
  const where: string[] = [];
  const params: Array<string | number> = [];
  if (f.namePrefix !== undefined && f.namePrefix !== '') { params.push(likePrefix(f.namePrefix)); where.push(`source_name LIKE $${params.length}`); }
  if (f.nameContains !== undefined && f.nameContains !== '') { params.push(`%${escapeLike(f.nameContains)}%`); where.push(`source_name ILIKE $${params.length}`); }
  if (f.valueType !== undefined) { params.push(f.valueType); where.push(`value_type = $${params.length}`); }
  if (f.afterName !== undefined) { params.push(f.afterName); where.push(`source_name > $${params.length}`); }
  params.push(f.limit);
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS} FROM series ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY source_name LIMIT $${params.length}`,
    params,
  );
  return rows.map(toRecord);
}
