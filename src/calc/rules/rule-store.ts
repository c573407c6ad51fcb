// Calculation rules in the model database, versioned like templates: every create, PUT
// and retire is one model transaction writing a new version row (calc_rule_version), so
// GET /v1/model/events shows it and `as_of_ns` reads the rule as it was.
import { randomUUID } from 'node:crypto';
import { sqlTextArray, type Queryable } from '../../model/db.js';
import type { EventSink } from '../../model/tx-log.js';
import { SqlArgs, validAt, endCurrentVersion, type ReadTx } from '../../model/versions/history.js';
import { ServiceError } from '../../errors.js';
import { isTemplateScope, type RuleDefinition, type StoredRule } from './rule-definition.js';

interface RuleRow {
  rule_id: string;
  version: number;
  definition: RuleDefinition;
  retired: boolean;
  valid_from_ns: bigint;
  tx_from: bigint;
}

const COLUMNS = 'r.rule_id, r.version, r.definition, r.retired, r.valid_from_ns, r.tx_from';

function toStored(r: RuleRow): StoredRule {
  return { ...r.definition, rule_id: r.rule_id, version: Number(r.version), retired: r.retired, tx_id: BigInt(r.tx_from), valid_from_ns: BigInt(r.valid_from_ns) };
}

export interface RuleFilter { templateId?: string; assetId?: string }

/** Rules valid at the read transaction (retired ones too: they say so), oldest first. */
export async function rulesAt(q: Queryable, tx: ReadTx, f: RuleFilter = {}): Promise<StoredRule[]> {
  const args = new SqlArgs();
  const conds = [validAt('r', tx, args)];
  if (f.templateId) conds.push(`r.template_id = ${args.add(f.templateId)}`);
  if (f.assetId) conds.push(`r.asset_id = ${args.add(f.assetId)}`);
  const { rows } = await q.query<RuleRow>(`SELECT ${COLUMNS} FROM calc_rule_version r WHERE ${conds.join(' AND ')} ORDER BY r.name, r.rule_id`, args.values);
  return rows.map(toStored);
}

export async function ruleAt(q: Queryable, tx: ReadTx, ruleId: string): Promise<StoredRule | null> {
  const args = new SqlArgs();
  const { rows } = await q.query<RuleRow>(`SELECT ${COLUMNS} FROM calc_rule_version r WHERE ${validAt('r', tx, args)} AND r.rule_id = ${args.add(ruleId)}`, args.values);
  return rows[0] ? toStored(rows[0]) : null;
}

/** Every version of a rule, oldest first (a retirement is a version of its own). */
export async function ruleVersions(q: Queryable, ruleId: string): Promise<StoredRule[]> {
  const { rows } = await q.query<RuleRow>(`SELECT ${COLUMNS} FROM calc_rule_version r WHERE r.rule_id = $1 ORDER BY r.tx_from`, [ruleId]);
  return rows.map(toStored);
}

/** One version of a rule by number (lineage and traces name versions). */
export async function ruleVersion(q: Queryable, ruleId: string, version: number): Promise<StoredRule | null> {
  const { rows } = await q.query<RuleRow>(`SELECT ${COLUMNS} FROM calc_rule_version r WHERE r.rule_id = $1 AND r.version = $2 ORDER BY r.tx_from DESC LIMIT 1`, [ruleId, version]);
  return rows[0] ? toStored(rows[0]) : null;
}

function scopeColumns(d: RuleDefinition): [string | null, string | null, string] {
  return isTemplateScope(d.scope) ? [d.scope.template_id, null, d.scope.output_attr_def_id] : [null, d.scope.asset_id, d.scope.output_attribute_id];
}

async function insertVersion(q: Queryable, ruleId: string, version: number, d: RuleDefinition, inputRefs: readonly string[], retired: boolean, recompute: string | null, validFromNs: bigint, txId: bigint): Promise<void> {
  const [templateId, assetId, outputId] = scopeColumns(d);
  await q.query(
    `INSERT INTO calc_rule_version (rule_id, version, name, template_id, asset_id, output_id, definition, input_refs, retired, recompute, valid_from_ns, tx_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9, $10, $11, $12)`,
    [ruleId, version, d.name, templateId, assetId, outputId, d as unknown as Record<string, unknown>, sqlTextArray(inputRefs), retired, recompute, validFromNs, txId]);
}

/** Current, unretired rules with the references their expressions read (cycle checks, the engine). */
export async function rulesWithInputs(q: Queryable): Promise<Array<{ rule: StoredRule; inputRefs: string[]; recompute: string | null }>> {
  const { rows } = await q.query<RuleRow & { input_refs: string[]; recompute: string | null }>(
    `SELECT ${COLUMNS}, r.input_refs, r.recompute FROM calc_rule_version r WHERE r.tx_to IS NULL AND NOT r.retired ORDER BY r.rule_id`);
  return rows.map((r) => ({ rule: toStored(r), inputRefs: r.input_refs, recompute: r.recompute }));
}

/** Writes version 1 of a new rule inside the caller's model transaction. */
export async function createRuleIn(q: Queryable, txId: bigint, events: EventSink, d: RuleDefinition, inputRefs: readonly string[], validFromNs: bigint, ruleId: string = randomUUID()): Promise<string> {
  await insertVersion(q, ruleId, 1, d, inputRefs, false, null, validFromNs, txId);
  events.emit('calc-rule', ruleId, 'created', { name: d.name, version: 1 });
  return ruleId;
}

async function lockedCurrent(q: Queryable, ruleId: string): Promise<RuleRow> {
  const { rows } = await q.query<RuleRow>(`SELECT ${COLUMNS} FROM calc_rule_version r WHERE r.rule_id = $1 AND r.tx_to IS NULL FOR UPDATE`, [ruleId]);
  if (!rows[0]) throw new ServiceError('not-found', `calculation rule ${ruleId} not found`);
  return rows[0];
}

/** Writes the next version of a rule (PUT); a retired rule stays retired only until replaced. */
export async function replaceRuleIn(q: Queryable, txId: bigint, events: EventSink, ruleId: string, d: RuleDefinition, inputRefs: readonly string[], recompute: string, validFromNs: bigint): Promise<number> {
  const cur = await lockedCurrent(q, ruleId);
  const version = Number(cur.version) + 1;
  await endCurrentVersion(q, 'calc_rule_version', { rule_id: ruleId }, txId);
  await insertVersion(q, ruleId, version, d, inputRefs, false, recompute, validFromNs, txId);
  events.emit('calc-rule', ruleId, 'updated', { name: d.name, version, recompute });
  return version;
}

/** Retires a rule: a new version with retired true; the engine stops evaluating it. */
export async function retireRuleIn(q: Queryable, txId: bigint, events: EventSink, ruleId: string, validFromNs: bigint): Promise<number> {
  const cur = await lockedCurrent(q, ruleId);
  const { rows: refs } = await q.query<{ input_refs: string[] }>('SELECT input_refs FROM calc_rule_version WHERE rule_id = $1 AND tx_to IS NULL', [ruleId]);
  if (cur.retired) throw new ServiceError('conflict', `calculation rule ${ruleId} is already retired`, { state: 'retired' });
  const version = Number(cur.version) + 1;
  await endCurrentVersion(q, 'calc_rule_version', { rule_id: ruleId }, txId);
  await insertVersion(q, ruleId, version, cur.definition, refs[0]?.input_refs ?? [], true, null, validFromNs, txId);
  events.emit('calc-rule', ruleId, 'retired', { name: cur.definition.name, version });
  return version;
}

/** The current rule of a scope's output (one rule per output: two writers of one series would fight). */
export async function ruleWritingOutput(q: Queryable, outputId: string, except: string | null): Promise<string | null> {
  const { rows } = await q.query<{ rule_id: string }>(
    'SELECT rule_id FROM calc_rule_version WHERE output_id = $1 AND tx_to IS NULL AND NOT retired AND ($2::uuid IS NULL OR rule_id <> $2::uuid) LIMIT 1', [outputId, except]);
  return rows[0]?.rule_id ?? null;
}
