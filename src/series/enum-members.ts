// The member names of an enum set, by ordinal, for readers that add a point's member name
// to its ordinal (GET /v1/series/{uuid}/raw rows, /snapshot). Read from the enum set's
// registry entry as it is now: a set whose members were renamed answers the new names
// for old points too, as the registry says what an ordinal means.
import type { Queryable } from '../model/db.js';
import { entryRow } from '../model/registries/registry-entries.js';

export type EnumMemberNames = Record<string, string>;

/** {ordinal: name} of the set's members; empty when the set is not in the registry. */
export async function enumMemberNames(q: Queryable, enumSetId: string): Promise<EnumMemberNames> {
  const row = await entryRow(q, 'enum-sets', enumSetId);
  const out: EnumMemberNames = {};
  const members = row?.members;
  if (!Array.isArray(members)) return out;
  for (const m of members as Array<{ ordinal?: unknown; name?: unknown }>) {
    if (m && (typeof m.ordinal === 'number' || typeof m.ordinal === 'bigint') && typeof m.name === 'string') out[String(m.ordinal)] = m.name;
  }
  return out;
}
