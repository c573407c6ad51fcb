// The dedupe gate: before an entry is written, it is compared with every current entry
// of its kind (and, for units, their symbols). A byte-identical name or symbol is never
// allowed (name-conflict). A variant (case, spacing, punctuation, compatibility form of
// a symbol, or opposite polarity where the kind is two-sided) is refused with
// duplicate-entry and the clashing entry, unless the request carries an override claim
// with a rationale; the claim and what it overrode are recorded on the new entry.
import { ServiceError } from '../../errors.js';
import { nameVariant, symbolKey, POLARITY_KINDS, type VariantKind } from './dedupe.js';
import { toEntry, type EntryRow, type RegistryKind } from './registry-entries.js';
import { UUID_RE } from '../../uuid.js';

export interface Candidate {
  kind: RegistryKind;
  name: string;
  symbol?: string;
}

export interface Clash {
  variant: VariantKind;
  field: 'name' | 'symbol';
  row: EntryRow;
}

export interface OverrideClaim {
  rationale: string;
  /** When given, the claim overrides only the clash with this entry. */
  entryId: string | null;
}

const RATIONALE_MAX = 2000;

function rejected(field: string, problem: string): ServiceError {
  return new ServiceError('invalid-request', `${field}: rejected override claim: ${problem}`, { errors: [{ field, problem }] });
}

/**
 * Reads the claim: `override: true` with a top-level `rationale`, or
 * `override: {rationale, entry_id?}`. Null when no override was sent.
 */
export function parseOverride(override: unknown, rationale: string | undefined): OverrideClaim | null {
  if (override === undefined || override === null || override === false) return null;
  let text = rationale;
  let entryId: string | null = null;
  if (override !== true) {
    if (typeof override !== 'object' || Array.isArray(override)) throw rejected('override', 'must be true or an object {rationale, entry_id}');
    for (const [k, v] of Object.entries(override as Record<string, unknown>)) {
      if (k === 'rationale') {
        if (typeof v !== 'string') throw rejected('override.rationale', 'must be a string');
        text = v;
      } else if (k === 'entry_id') {
        if (typeof v !== 'string' || !UUID_RE.test(v)) throw rejected('override.entry_id', 'must be a uuid');
        entryId = v.toLowerCase();
      } else throw rejected(`override.${k}`, 'unknown field (rationale, entry_id)');
    }
  }
  if (text === undefined || text.trim().length === 0) throw rejected('override.rationale', 'an override needs a non-blank rationale');
  if (text.length > RATIONALE_MAX) throw rejected('override.rationale', `longer than ${RATIONALE_MAX} characters`);
  return { rationale: text, entryId };
}

/** Every current entry the candidate varies, strongest first. */
export function findClashes(c: Candidate, existing: EntryRow[]): Clash[] {
  const polarity = POLARITY_KINDS.has(c.kind);
  const out: Clash[] = [];
  const candidateSymbol = c.symbol === undefined ? null : symbolKey(c.symbol);
  for (const row of existing) {
    if (row.kind !== c.kind) continue;
    const v = nameVariant(c.name, row.name, polarity);
    if (v) { out.push({ variant: v, field: 'name', row }); continue; }
    if (candidateSymbol !== null && row.symbol !== null) {
      if (c.symbol === row.symbol) out.push({ variant: 'identical', field: 'symbol', row });
      else if (candidateSymbol === symbolKey(row.symbol)) out.push({ variant: 'symbol', field: 'symbol', row });
    }
  }
  out.sort((a, b) => Number(b.variant === 'identical') - Number(a.variant === 'identical'));
  return out;
}

function clashBody(c: Clash) {
  return { variant: c.variant, field: c.field, kind: c.row.kind, entry: toEntry(c.row) };
}

/**
 * Applies the gate: throws on an identical name or symbol, or on a variant the claim
 * does not cover. Returns the clashes the claim overrode (empty when there were none).
 */
export function passGate(c: Candidate, clashes: Clash[], claim: OverrideClaim | null): Clash[] {
  const identical = clashes.find((x) => x.variant === 'identical');
  if (identical) {
    throw new ServiceError('name-conflict', `${c.kind}: an entry with the ${identical.field} "${identical.field === 'name' ? c.name : c.symbol}" already exists`, clashBody(identical));
  }
  if (clashes.length === 0) return [];
  if (claim?.entryId) {
    const uncovered = clashes.find((x) => x.row.entry_id !== claim.entryId);
    if (!clashes.some((x) => x.row.entry_id === claim.entryId)) {
      throw rejected('override.entry_id', `entry ${claim.entryId} is not an entry this one clashes with`);
    }
    if (uncovered) throw duplicate(c, uncovered);
    return clashes;
  }
  if (!claim) throw duplicate(c, clashes[0], clashes);
  return clashes;
}

function duplicate(c: Candidate, first: Clash, all: Clash[] = [first]): ServiceError {
  const what = first.field === 'name' ? `"${c.name}" is a ${first.variant} variant of "${first.row.name}"` : `symbol "${c.symbol}" is a variant of "${first.row.symbol}" (${first.row.name})`;
  return new ServiceError('duplicate-entry', `${c.kind}: ${what}; send an override with a rationale to add it anyway`, {
    ...clashBody(first),
    clashes: all.map(clashBody),
  });
}
