// Reading registry entries: the stored row, its projection to the spec's Registry entry
// shape, listings in name order (keyset), and the exact unit scales conversions use.
import { type Queryable, sqlTextArray } from '../db.js';
import { SqlArgs, validAt, type ReadTx } from '../versions/history.js';
import { parseRatio, toDouble, type Ratio } from './exact-ratio.js';
import type { UnitScale } from './unit-conversion.js';

export const REGISTRY_KINDS = ['enum-concepts', 'enum-sets', 'quantity-kinds', 'units', 'link-types', 'annotation-tags', 'episode-roles'] as const;
export type RegistryKind = (typeof REGISTRY_KINDS)[number];

export interface EntryRow {
  entry_id: string;
  kind: RegistryKind;
  name: string;
  symbol: string | null;
  kind_id: string | null;
  canonical_unit_id: string | null;
  integrates_to: string | null;
  encoding: unknown;
  members: unknown;
  factor_exact: string | null;
  offset_exact: string | null;
  rationale: string | null;
  override: unknown;
  system: boolean;
  valid_from_ns: bigint;
  valid_to_ns: bigint | null;
  tx_from: bigint;
}

/** The spec's Registry entry; optional fields appear where the kind gives them meaning. */
export interface RegistryEntry {
  id: string;
  name: string;
  system: boolean;
  tx_id: bigint;
  valid_from_ns: bigint;
  valid_to_ns: bigint | null;
  symbol?: string;
  kind_id?: string;
  to_canonical_factor?: number;
  to_canonical_offset?: number;
  canonical_unit_id?: string;
  integrates_to?: string | null;
  members?: unknown;
  encoding?: unknown;
  rationale?: string;
}

export const ENTRY_COLUMNS = `entry_id, kind, name, symbol, kind_id, canonical_unit_id, integrates_to, encoding, members,
  factor_exact, offset_exact, rationale, override, system, valid_from_ns, valid_to_ns, tx_from`;

function exact(text: string | null, what: string): Ratio {
  const r = text === null ? null : parseRatio(text);
  if (!r) throw new Error(`BUG: registry ${what} "${String(text)}" is not an exact ratio`);
  return r;
}

export function toEntry(r: EntryRow): RegistryEntry {
  const e: RegistryEntry = {
    id: r.entry_id, name: r.name, system: r.system, tx_id: BigInt(r.tx_from),
    valid_from_ns: BigInt(r.valid_from_ns), valid_to_ns: r.valid_to_ns === null ? null : BigInt(r.valid_to_ns),
  };
  switch (r.kind) {
    case 'units':
      e.symbol = r.symbol ?? '';
      e.kind_id = r.kind_id ?? undefined;
      e.to_canonical_factor = toDouble(exact(r.factor_exact, 'factor'));
      e.to_canonical_offset = toDouble(exact(r.offset_exact, 'offset'));
      break;
    case 'quantity-kinds':
      if (r.canonical_unit_id) e.canonical_unit_id = r.canonical_unit_id;
      e.integrates_to = r.integrates_to;
      break;
    case 'enum-sets':
      e.members = r.members ?? [];
      if (r.encoding !== null && r.encoding !== undefined) e.encoding = r.encoding;
      break;
    default:
      if (r.encoding !== null && r.encoding !== undefined) e.encoding = r.encoding;
  }
  if (r.rationale !== null) e.rationale = r.rationale;
  return e;
}

export async function entryRow(q: Queryable, kind: RegistryKind | null, id: string, tx: ReadTx = null): Promise<EntryRow | null> {
  const args = new SqlArgs();
  const kindFilter = kind ? ` AND r.kind = ${args.add(kind)}` : '';
  const { rows } = await q.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM registry_entry_version r WHERE r.entry_id = ${args.add(id)}${kindFilter} AND ${validAt('r', tx, args)}`, args.values);
  return rows[0] ?? null;
}

export interface EntryPage { rows: EntryRow[]; more: boolean }

/** One page of a kind in (name, id) order, after the keyset position when given. */
export async function listEntryRows(q: Queryable, kind: RegistryKind, opts: { tx: ReadTx; limit: number; after?: { name: string; id: string }; system?: boolean }): Promise<EntryPage> {
  const args = new SqlArgs();
  const where = [`r.kind = ${args.add(kind)}`, validAt('r', opts.tx, args)];
  if (opts.system !== undefined) where.push(`r.system = ${args.add(opts.system)}`);
  if (opts.after) where.push(`(r.name, r.entry_id) > (${args.add(opts.after.name)}::text, ${args.add(opts.after.id)}::uuid)`);
  const { rows } = await q.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM registry_entry_version r WHERE ${where.join(' AND ')}
      ORDER BY r.name COLLATE "C", r.entry_id LIMIT ${args.add(opts.limit + 1)}`, args.values);
  return { rows: rows.slice(0, opts.limit), more: rows.length > opts.limit };
}

/** Every current entry of one kind (the dedupe gate compares against all of them). */
export async function currentEntryRows(q: Queryable, kind: RegistryKind): Promise<EntryRow[]> {
  const { rows } = await q.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM registry_entry_version r WHERE r.kind = $1 AND r.tx_to IS NULL ORDER BY r.name, r.entry_id`, [kind]);
  return rows;
}

export function unitScaleOf(r: EntryRow): UnitScale {
  if (r.kind !== 'units' || !r.kind_id) throw new Error(`BUG: registry entry ${r.entry_id} is not a unit`);
  return { id: r.entry_id, kindId: r.kind_id, factor: exact(r.factor_exact, 'factor'), offset: exact(r.offset_exact, 'offset') };
}

/** Current unit scales by id (all of them when ids is omitted). */
export async function unitScales(q: Queryable, ids?: string[]): Promise<Map<string, UnitScale>> {
  const args = new SqlArgs();
  const filter = ids ? ` AND r.entry_id = ANY(${args.add(sqlTextArray(ids))}::uuid[])` : '';
  const { rows } = await q.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM registry_entry_version r WHERE r.kind = 'units' AND r.tx_to IS NULL${filter}`, args.values);
  return new Map(rows.map((r) => [r.entry_id, unitScaleOf(r)]));
}
