// Creating registry entries (through the dedupe gate, in one model transaction) and
// seeding the system entries at start.
import { randomUUID } from 'node:crypto';
import { type Db, type Queryable, jsonbParam, sqlTextArray } from '../db.js';
import { modelTransaction, type EventSink, type Who } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { checkName } from '../versions/names.js';
import { formatRatio, fromDouble, parseRatio } from './exact-ratio.js';
import { currentEntryRows, entryRow, toEntry, type EntryRow, type RegistryEntry, type RegistryKind } from './registry-entries.js';
import { findClashes, parseOverride, passGate, type Clash, type OverrideClaim } from './registry-gate.js';
import { SYSTEM_QUANTITY_KINDS, systemEntryId } from './system-seed.js';

export interface EntryInput {
  name: string;
  symbol?: string;
  kind_id?: string;
  to_canonical_factor?: number;
  to_canonical_offset?: number;
  canonical_unit_name?: string;
  canonical_unit_symbol?: string;
  integrates_to?: string;
  members?: unknown;
  encoding?: unknown;
  override?: unknown;
  rationale?: string;
}

type Field = Exclude<keyof EntryInput, 'name' | 'override' | 'rationale'>;

/** Which optional fields each kind accepts, and which it requires. */
const FIELDS: Record<RegistryKind, { allowed: Field[]; required: Field[] }> = {
  'units': { allowed: ['symbol', 'kind_id', 'to_canonical_factor', 'to_canonical_offset'], required: ['symbol', 'kind_id', 'to_canonical_factor'] },
  'quantity-kinds': { allowed: ['canonical_unit_name', 'canonical_unit_symbol', 'integrates_to'], required: ['canonical_unit_name', 'canonical_unit_symbol'] },
  'enum-sets': { allowed: ['members', 'encoding'], required: ['members'] },
  'enum-concepts': { allowed: ['encoding'], required: [] },
  'link-types': { allowed: [], required: [] },
  'annotation-tags': { allowed: [], required: [] },
  'episode-roles': { allowed: [], required: [] },
};
const ALL_FIELDS: Field[] = ['symbol', 'kind_id', 'to_canonical_factor', 'to_canonical_offset', 'canonical_unit_name', 'canonical_unit_symbol', 'integrates_to', 'members', 'encoding'];

const bad = (field: string, problem: string) => new ServiceError('invalid-request', `${field}: ${problem}`, { errors: [{ field, problem }] });

interface NewRow {
  entry_id: string; kind: RegistryKind; name: string; symbol?: string | null; kind_id?: string | null; canonical_unit_id?: string | null;
  integrates_to?: string | null; encoding?: unknown; members?: unknown; factor_exact?: string | null; offset_exact?: string | null;
  rationale?: string | null; override?: unknown; system?: boolean;
}

async function insertRow(q: Queryable, r: NewRow, txId: bigint, validFromNs: bigint, events: EventSink): Promise<void> {
  await q.query(
    `INSERT INTO registry_entry_version (entry_id, kind, name, symbol, kind_id, canonical_unit_id, integrates_to, encoding, members,
       factor_exact, offset_exact, rationale, override, system, valid_from_ns, tx_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11, $12, $13::jsonb, $14, $15, $16)`,
    [r.entry_id, r.kind, r.name, r.symbol ?? null, r.kind_id ?? null, r.canonical_unit_id ?? null, r.integrates_to ?? null,
      r.encoding === undefined ? null : jsonbParam(r.encoding), r.members === undefined ? null : jsonbParam(r.members),
      r.factor_exact ?? null, r.offset_exact ?? null, r.rationale ?? null, r.override === undefined ? null : jsonbParam(r.override),
      r.system ?? false, validFromNs, txId],
  );
  events.emit('registry-entry', r.entry_id, 'created', { kind: r.kind, name: r.name, system: r.system ?? false, ...(r.override ? { override: r.override } : {}) });
}

function checkFields(kind: RegistryKind, input: EntryInput): void {
  const spec = FIELDS[kind];
  for (const f of ALL_FIELDS) {
    if (input[f] !== undefined && !spec.allowed.includes(f)) throw bad(f, `not a field of ${kind} entries`);
  }
  for (const f of spec.required) if (input[f] === undefined) throw bad(f, `required for ${kind} entries`);
  checkName('name', input.name);
  if (input.symbol !== undefined) checkName('symbol', input.symbol);
  if (input.canonical_unit_name !== undefined) checkName('canonical_unit_name', input.canonical_unit_name);
  if (input.canonical_unit_symbol !== undefined) checkName('canonical_unit_symbol', input.canonical_unit_symbol);
  if (input.to_canonical_factor !== undefined && (!Number.isFinite(input.to_canonical_factor) || input.to_canonical_factor === 0)) {
    throw bad('to_canonical_factor', 'must be a finite, non-zero number');
  }
  if (input.to_canonical_offset !== undefined && !Number.isFinite(input.to_canonical_offset)) throw bad('to_canonical_offset', 'must be a finite number');
  if (input.rationale !== undefined && input.rationale.length > 2000) throw bad('rationale', 'longer than 2000 characters');
}

/** Enum set members: [{ordinal, name, concept_id?}], ordinals and names unique. */
async function checkMembers(q: Queryable, members: unknown): Promise<Array<{ ordinal: number; name: string; concept_id?: string }>> {
  if (!Array.isArray(members)) throw bad('members', 'must be an array of {ordinal, name, concept_id?}');
  const ordinals = new Set<number>();
  const names = new Set<string>();
  const out: Array<{ ordinal: number; name: string; concept_id?: string }> = [];
  for (const [i, m] of members.entries()) {
    const f = `members[${i}]`;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw bad(f, 'must be an object {ordinal, name, concept_id?}');
    const { ordinal, name, concept_id, ...rest } = m as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw bad(`${f}.${extra}`, 'unknown field');
    if (typeof ordinal !== 'number' || !Number.isSafeInteger(ordinal) || ordinal < 0) throw bad(`${f}.ordinal`, 'must be an integer >= 0');
    if (typeof name !== 'string') throw bad(`${f}.name`, 'must be a string');
    checkName(`${f}.name`, name);
    if (ordinals.has(ordinal)) throw bad(`${f}.ordinal`, `ordinal ${ordinal} appears twice`);
    if (names.has(name.toLowerCase())) throw bad(`${f}.name`, `"${name}" appears twice`);
    ordinals.add(ordinal); names.add(name.toLowerCase());
    if (concept_id !== undefined) {
      if (typeof concept_id !== 'string' || !(await entryRow(q, 'enum-concepts', concept_id).catch(() => null))) throw bad(`${f}.concept_id`, 'not an enum concept');
      out.push({ ordinal, name, concept_id });
    } else out.push({ ordinal, name });
  }
  return out;
}

async function requireEntry(q: Queryable, kind: RegistryKind, id: string, field: string): Promise<EntryRow> {
  const r = await entryRow(q, kind, id);
  if (!r) throw bad(field, `no current ${kind} entry ${id}`);
  return r;
}

/** Record of an override: the claim, who made it, and each clash it let through. */
function overrideRecord(claim: OverrideClaim | null, clashes: Clash[], principal: string): unknown {
  if (!claim || clashes.length === 0) return undefined;
  return { rationale: claim.rationale, principal, overrides: clashes.map((c) => ({ entry_id: c.row.entry_id, name: c.row.name, kind: c.row.kind, variant: c.variant, field: c.field })) };
}

/** Serialises gate checks of one kind (two concurrent variants must not both pass). */
const lockKind = (q: Queryable, kind: string) => q.query('SELECT pg_advisory_xact_lock(73042050, hashtext($1))', [kind]);

export async function createEntry(db: Db, who: Who, kind: RegistryKind, input: EntryInput): Promise<RegistryEntry> {
  checkFields(kind, input);
  const claim = parseOverride(input.override, input.rationale);
  const c = await modelTransaction(db, { principal: who.principal, reason: who.reason ?? input.rationale }, async (q, txId, events) => {
    await lockKind(q, kind);
    if (kind === 'quantity-kinds') await lockKind(q, 'units');
    const principal = who.principal;
    const { rows: [{ now_ns: validFromNs }] } = await q.query<{ now_ns: bigint }>('SELECT committed_ns AS now_ns FROM model_tx WHERE tx_id = $1', [txId]);
    const id = randomUUID();
    const overridden: Clash[] = [];
    const gate = async (k: RegistryKind, name: string, symbol?: string) => {
      overridden.push(...passGate({ kind: k, name, symbol }, findClashes({ kind: k, name, symbol }, await currentEntryRows(q, k)), claim));
    };
    const base = { entry_id: id, kind, name: input.name, rationale: input.rationale ?? claim?.rationale ?? null };
    switch (kind) {
      case 'units': {
        await requireEntry(q, 'quantity-kinds', input.kind_id as string, 'kind_id');
        await gate('units', input.name, input.symbol);
        await insertRow(q, { ...base, symbol: input.symbol, kind_id: input.kind_id, factor_exact: formatRatio(fromDouble(input.to_canonical_factor as number)),
          offset_exact: formatRatio(fromDouble(input.to_canonical_offset ?? 0)), override: overrideRecord(claim, overridden, principal) }, txId, validFromNs, events);
        break;
      }
      case 'quantity-kinds': {
        if (input.integrates_to !== undefined) await requireEntry(q, 'quantity-kinds', input.integrates_to, 'integrates_to');
        await gate('quantity-kinds', input.name);
        await gate('units', input.canonical_unit_name as string, input.canonical_unit_symbol);
        const unitId = randomUUID();
        const override = overrideRecord(claim, overridden, principal);
        await insertRow(q, { ...base, canonical_unit_id: unitId, integrates_to: input.integrates_to ?? null, override }, txId, validFromNs, events);
        await insertRow(q, { entry_id: unitId, kind: 'units', name: input.canonical_unit_name as string, symbol: input.canonical_unit_symbol, kind_id: id,
          factor_exact: '1', offset_exact: '0', rationale: null }, txId, validFromNs, events);
        break;
      }
      case 'enum-sets': {
        const members = await checkMembers(q, input.members);
        await gate(kind, input.name);
        await insertRow(q, { ...base, members, encoding: input.encoding, override: overrideRecord(claim, overridden, principal) }, txId, validFromNs, events);
        break;
      }
      default:
        await gate(kind, input.name);
        await insertRow(q, { ...base, encoding: input.encoding, override: overrideRecord(claim, overridden, principal) }, txId, validFromNs, events);
    }
    return (await entryRow(q, kind, id)) as EntryRow;
  });
  return toEntry(c.result);
}

/** Adds the system entries an installation lacks (all of them on first start), in one transaction. */
export async function seedSystemRegistries(db: Db): Promise<number> {
  const wanted: NewRow[] = [];
  for (const qk of SYSTEM_QUANTITY_KINDS) {
    const qkId = systemEntryId('quantity-kinds', qk.name);
    const canonicalId = systemEntryId('units', qk.canonical.name);
    wanted.push({ entry_id: qkId, kind: 'quantity-kinds', name: qk.name, canonical_unit_id: canonicalId,
      integrates_to: qk.integratesTo ? systemEntryId('quantity-kinds', qk.integratesTo) : null, system: true });
    wanted.push({ entry_id: canonicalId, kind: 'units', name: qk.canonical.name, symbol: qk.canonical.symbol, kind_id: qkId, factor_exact: '1', offset_exact: '0', system: true });
    for (const u of qk.units) {
      const factor = parseRatio(u.factor);
      const offset = parseRatio(u.offset ?? '0');
      if (!factor || !offset) throw new Error(`BUG: system unit ${u.name} has a malformed factor or offset`);
      wanted.push({ entry_id: systemEntryId('units', u.name), kind: 'units', name: u.name, symbol: u.symbol, kind_id: qkId,
        factor_exact: formatRatio(factor), offset_exact: formatRatio(offset), system: true });
    }
  }
  const missing = async (q: Queryable) => {
    const { rows } = await q.query<{ entry_id: string }>('SELECT entry_id FROM registry_entry_version WHERE system AND entry_id = ANY($1::uuid[])', [sqlTextArray(wanted.map((w) => w.entry_id))]);
    const have = new Set(rows.map((r) => r.entry_id));
    return wanted.filter((w) => !have.has(w.entry_id));
  };
  if ((await missing(db)).length === 0) return 0;
  const c = await modelTransaction(db, { principal: 'system', reason: 'system registry entries' }, async (q, txId, events) => {
    await lockKind(q, 'system-seed');
    const todo = await missing(q);
    const { rows: [{ now_ns }] } = await q.query<{ now_ns: bigint }>('SELECT committed_ns AS now_ns FROM model_tx WHERE tx_id = $1', [txId]);
    for (const w of todo) await insertRow(q, w, txId, now_ns, events);
    return todo.length;
  });
  return c.result;
}
