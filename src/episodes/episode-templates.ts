// Episode templates: what kind of episode a batch, an excursion or a shift is. A template
// names the roles assets play (with cardinality and required flags, each an episode-roles
// registry entry), the episode's attributes (entered by hand, or captured over the episode
// from the resolved attribute of the asset in a role), how episodes are named, which
// templates may be children, whether episodes may overlap, and an optional trigger.
// Templates keep every version: PUT writes version n+1 and episodes keep the version they
// were made with, so a rule change never rewrites what an old batch was measured against.
import { randomUUID } from 'node:crypto';
import { type Db, type Queryable, jsonbParam } from '../model/db.js';
import { modelTransaction, type Who } from '../model/tx-log.js';
import { SqlArgs, validAt, isUniqueViolation, type ReadTx } from '../model/versions/history.js';
import { checkName } from '../model/versions/names.js';
import type { RegistryKind } from '../model/registries/registry-entries.js';
import { ServiceError, invalid } from '../errors.js';
import { isUuid } from '../uuid.js';
import { parseCapture, type CaptureRule } from './capture-rules.js';

/** `allowed`, or no overlap in time between episodes of the template on one asset, or on one asset in one role. */
export const OVERLAP_RULES = ['allowed', 'forbidden-per-asset', 'forbidden-per-role'] as const;
export type OverlapRule = (typeof OVERLAP_RULES)[number];
export const CARDINALITIES = ['one', 'many'] as const;
export const ATTRIBUTE_CLASSES = ['number', 'integer', 'boolean', 'string', 'enum'] as const;
export type AttributeClass = (typeof ATTRIBUTE_CLASSES)[number];

export interface TemplateBody {
  name: string;
  family: string;
  overlap: string;
  retro_edit_approval: string;
  attributes?: Array<{ capture: string | null; class: string; enum_set: string | null; name: string; quantity_kind: string | null; unit: string | null }>;
  naming_pattern?: string | null;
  permitted_children?: string[];
  reason?: string;
  roles?: Array<{ cardinality: string; required: boolean; role: string }>;
  trigger?: { min_duration_ms: number | bigint; open_when: string } | null;
}

export interface TemplateRole { role: string; role_id: string; cardinality: 'one' | 'many'; required: boolean }
export interface TemplateAttribute {
  name: string;
  class: AttributeClass;
  capture: string | null;
  unit: string | null;
  unit_id: string | null;
  quantity_kind: string | null;
  quantity_kind_id: string | null;
  enum_set: string | null;
  enum_set_id: string | null;
}

/** A stored template version, as GET answers it. */
export interface EpisodeTemplate {
  id: string;
  version: number;
  name: string;
  family: string;
  overlap: OverlapRule;
  retro_edit_approval: 'none';
  roles: TemplateRole[];
  attributes: TemplateAttribute[];
  naming_pattern: string | null;
  permitted_children: string[];
  trigger: { open_when: string; min_duration_ms: bigint } | null;
  tx_id: bigint;
}

/** Checks a trigger expression; supplied by the part that evaluates triggers (null: triggers are refused). */
export type TriggerCheck = ((openWhen: string, roles: TemplateRole[]) => Promise<void>) | null;

type Definition = Omit<EpisodeTemplate, 'id' | 'version' | 'name' | 'family' | 'tx_id'>;
interface TemplateRow { template_id: string; version: number; name: string; family: string; definition: Definition & { trigger: { open_when: string; min_duration_ms: bigint | number } | null }; tx_from: bigint }

const toTemplate = (r: TemplateRow): EpisodeTemplate => ({
  id: r.template_id, version: Number(r.version), name: r.name, family: r.family,
  overlap: r.definition.overlap, retro_edit_approval: 'none', roles: r.definition.roles, attributes: r.definition.attributes,
  naming_pattern: r.definition.naming_pattern, permitted_children: r.definition.permitted_children,
  trigger: r.definition.trigger ? { open_when: r.definition.trigger.open_when, min_duration_ms: BigInt(r.definition.trigger.min_duration_ms) } : null,
  tx_id: r.tx_from,
});

const PLACEHOLDER = /\{([a-z]+)(?::([^{}]+))?\}/g;
const PLACEHOLDERS = new Set(['template', 'family', 'start', 'asset']);

/** A registry entry of the kind, named by id or by name; null when there is none. */
export async function registryEntryId(q: Queryable, kind: RegistryKind, ref: string): Promise<{ id: string; name: string } | null> {
  const byId = isUuid(ref);
  const { rows } = await q.query<{ entry_id: string; name: string }>(
    `SELECT entry_id, name FROM registry_entry_version WHERE kind = $1 AND tx_to IS NULL AND ${byId ? 'entry_id = $2::uuid' : 'name = $2'}`, [kind, ref]);
  return rows[0] ? { id: rows[0].entry_id, name: rows[0].name } : null;
}

/**
 * Validates a template body. `checkTrigger` 'checked': the trigger was checked already, by
 * a call outside the model transaction (the trigger check reads the model through the
 * service's own connections, which inside a transaction on single-connection PGlite would
 * wait for the transaction itself).
 */
async function checkDefinition(q: Queryable, b: TemplateBody, checkTrigger: TriggerCheck | 'checked'): Promise<Definition> {
  checkName('name', b.name);
  checkName('family', b.family);
  if (b.retro_edit_approval !== 'none') throw invalid('retro_edit_approval', 'only "none" is accepted');
  if (!(OVERLAP_RULES as readonly string[]).includes(b.overlap)) throw invalid('overlap', `must be one of ${OVERLAP_RULES.join(', ')}`);

  const roles: TemplateRole[] = [];
  for (const [i, r] of (b.roles ?? []).entries()) {
    const field = `roles/${i}`;
    if (!(CARDINALITIES as readonly string[]).includes(r.cardinality)) throw invalid(`${field}/cardinality`, `must be one of ${CARDINALITIES.join(', ')}`);
    const entry = await registryEntryId(q, 'episode-roles', r.role);
    if (!entry) throw invalid(`${field}/role`, `no episode-roles registry entry named or numbered "${r.role}"`);
    if (roles.some((x) => x.role_id === entry.id)) throw invalid(`${field}/role`, `role "${entry.name}" is listed twice`);
    roles.push({ role: entry.name, role_id: entry.id, cardinality: r.cardinality as 'one' | 'many', required: r.required });
  }

  const attributes: TemplateAttribute[] = [];
  for (const [i, a] of (b.attributes ?? []).entries()) {
    const field = `attributes/${i}`;
    checkName(`${field}/name`, a.name, { pathSegment: true });
    if (attributes.some((x) => x.name === a.name)) throw invalid(`${field}/name`, `attribute "${a.name}" is listed twice`);
    if (!(ATTRIBUTE_CLASSES as readonly string[]).includes(a.class)) throw invalid(`${field}/class`, `must be one of ${ATTRIBUTE_CLASSES.join(', ')}`);
    const cls = a.class as AttributeClass;
    let rule: CaptureRule | null = null;
    if (a.capture !== null) {
      rule = parseCapture(`${field}/capture`, a.capture);
      const role = roles.find((r) => r.role === rule!.role || r.role_id === rule!.role);
      if (!role) throw invalid(`${field}/capture`, `role "${rule.role}" is not a role of this template`);
      if (role.cardinality !== 'one') throw invalid(`${field}/capture`, `role "${rule.role}" may hold many assets; a capture reads the one asset in a role of cardinality one`);
      if (rule.statistic !== 'at-open' && rule.statistic !== 'at-close' && cls !== 'number' && cls !== 'integer') {
        throw invalid(`${field}/capture`, `${rule.statistic} needs a number or integer attribute, not ${cls}`);
      }
    }
    const lookup = async (kind: RegistryKind, member: 'unit' | 'quantity_kind' | 'enum_set'): Promise<string | null> => {
      const ref = a[member];
      if (ref === null || ref === undefined) return null;
      const e = await registryEntryId(q, kind, ref);
      if (!e) throw invalid(`${field}/${member}`, `no ${kind} registry entry named or numbered "${ref}"`);
      return e.id;
    };
    const unitId = await lookup('units', 'unit');
    const kindId = await lookup('quantity-kinds', 'quantity_kind');
    const enumSetId = await lookup('enum-sets', 'enum_set');
    if (cls === 'enum' && enumSetId === null) throw invalid(`${field}/enum_set`, 'an enum attribute names its enum set');
    if (cls !== 'enum' && enumSetId !== null) throw invalid(`${field}/enum_set`, 'only an enum attribute has an enum set');
    attributes.push({ name: a.name, class: cls, capture: rule === null ? null : rule.text, unit: a.unit ?? null, unit_id: unitId, quantity_kind: a.quantity_kind ?? null, quantity_kind_id: kindId, enum_set: a.enum_set ?? null, enum_set_id: enumSetId });
  }

  const pattern = b.naming_pattern ?? null;
  if (pattern !== null) {
    if (pattern.trim() === '') throw invalid('naming_pattern', 'must not be blank');
    for (const m of pattern.matchAll(PLACEHOLDER)) {
      if (!PLACEHOLDERS.has(m[1])) throw invalid('naming_pattern', `unknown placeholder {${m[1]}}: use {template}, {family}, {start} or {asset:<role>}`);
      if (m[1] === 'asset' && !roles.some((r) => r.role === m[2])) throw invalid('naming_pattern', `{asset:${m[2] ?? ''}} names no role of this template`);
    }
  }

  const children = b.permitted_children ?? [];
  for (const [i, c] of children.entries()) checkName(`permitted_children/${i}`, c);

  let trigger: Definition['trigger'] = null;
  if (b.trigger) {
    const ms = BigInt(b.trigger.min_duration_ms);
    if (ms < 0n) throw invalid('trigger/min_duration_ms', 'must not be negative');
    if (b.trigger.open_when.trim() === '') throw invalid('trigger/open_when', 'must not be blank');
    if (!checkTrigger) throw invalid('trigger', 'episode triggers are not available in this version of the service');
    if (checkTrigger !== 'checked') await checkTrigger(b.trigger.open_when, roles);
    trigger = { open_when: b.trigger.open_when, min_duration_ms: ms };
  }
  return { overlap: b.overlap as OverlapRule, retro_edit_approval: 'none', roles, attributes, naming_pattern: pattern, permitted_children: children, trigger };
}

async function insertVersion(q: Queryable, id: string, version: number, b: TemplateBody, def: Definition, txId: bigint): Promise<void> {
  try {
    await q.query(
      `INSERT INTO episode_template_version (template_id, version, name, family, definition, tx_from) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
      [id, version, b.name, b.family, jsonbParam(def), txId]);
  } catch (e) {
    if (isUniqueViolation(e, 'episode_template_name_current')) throw new ServiceError('name-conflict', `name: an episode template named "${b.name}" exists`, { errors: [{ field: 'name', problem: 'taken' }] });
    throw e;
  }
}

export async function createEpisodeTemplate(db: Db, who: Who, b: TemplateBody, checkTrigger: TriggerCheck): Promise<{ id: string; version: number; txId: bigint }> {
  if (b.trigger) await checkDefinition(db, b, checkTrigger);
  const c = await modelTransaction(db, who, async (q, txId, events) => {
    const def = await checkDefinition(q, b, b.trigger ? 'checked' : checkTrigger);
    const id = randomUUID();
    await insertVersion(q, id, 1, b, def, txId);
    events.emit('episode-template', id, 'created', { version: 1, name: b.name });
    return id;
  });
  return { id: c.result, version: 1, txId: c.txId };
}

/** Writes the next version of a template (404 when it does not exist). */
export async function replaceEpisodeTemplate(db: Db, who: Who, id: string, b: TemplateBody, checkTrigger: TriggerCheck): Promise<{ id: string; version: number; txId: bigint }> {
  if (b.trigger) await checkDefinition(db, b, checkTrigger);
  const c = await modelTransaction(db, who, async (q, txId, events) => {
    const { rows } = await q.query<{ version: number }>('SELECT version FROM episode_template_version WHERE template_id = $1 AND tx_to IS NULL FOR UPDATE', [id]);
    if (!rows[0]) throw new ServiceError('not-found', `episode template ${id} not found`);
    const def = await checkDefinition(q, b, b.trigger ? 'checked' : checkTrigger);
    const version = Number(rows[0].version) + 1;
    await q.query('UPDATE episode_template_version SET tx_to = $2 WHERE template_id = $1 AND tx_to IS NULL', [id, txId]);
    await insertVersion(q, id, version, b, def, txId);
    events.emit('episode-template', id, 'replaced', { version, name: b.name });
    return version;
  });
  return { id, version: c.result, txId: c.txId };
}

const COLUMNS = 'template_id, version, name, family, definition, tx_from';

/** The template valid at the read transaction, or one named version of it. */
export async function episodeTemplateAt(q: Queryable, tx: ReadTx, id: string, version?: number): Promise<EpisodeTemplate | null> {
  if (version !== undefined) {
    const { rows } = await q.query<TemplateRow>(`SELECT ${COLUMNS} FROM episode_template_version WHERE template_id = $1 AND version = $2`, [id, version]);
    return rows[0] ? toTemplate(rows[0]) : null;
  }
  const args = new SqlArgs();
  const { rows } = await q.query<TemplateRow>(`SELECT ${COLUMNS} FROM episode_template_version t WHERE ${validAt('t', tx, args)} AND t.template_id = ${args.add(id)}`, args.values);
  return rows[0] ? toTemplate(rows[0]) : null;
}

/** Every template valid at the read transaction, by name; optionally one family. */
export async function episodeTemplatesAt(q: Queryable, tx: ReadTx, family?: string): Promise<EpisodeTemplate[]> {
  const args = new SqlArgs();
  const fam = family === undefined ? '' : ` AND t.family = ${args.add(family)}`;
  const { rows } = await q.query<TemplateRow>(`SELECT ${COLUMNS} FROM episode_template_version t WHERE ${validAt('t', tx, args)}${fam} ORDER BY t.name COLLATE "C"`, args.values);
  return rows.map(toTemplate);
}

/** Current templates that carry a trigger (the trigger part watches these). */
export async function triggeredTemplates(q: Queryable): Promise<EpisodeTemplate[]> {
  const { rows } = await q.query<TemplateRow>(`SELECT ${COLUMNS} FROM episode_template_version WHERE tx_to IS NULL AND definition->'trigger' IS NOT NULL AND jsonb_typeof(definition->'trigger') = 'object'`);
  return rows.map(toTemplate);
}
