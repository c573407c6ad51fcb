// Plans a rule for the engine: checks and compiles its expressions once per rule version
// (never eval of user text: the compiler builds a plan over typed arrays from the checked
// tree), and maps it onto each asset it runs on: which series each reference reads there,
// and which series the output attribute is bound to.
//
// An output attribute with no open binding gets a series of its own (writable class
// `calculation`, source name calc/<rule>/<asset>) bound from the epoch on, so a rule
// writes as soon as it is saved and a backfill can reach any past instant. Series are
// created in batches and bound in one model transaction per plan.
import type { ServiceContext } from '../../service-context.js';
import type { ValueType } from '../../storage/encoding/chunk-types.js';
import { modelTransaction } from '../../model/tx-log.js';
import { bindIn } from '../../model/bindings/bindings.js';
import { planOf } from '../expression/index.js';
import type { CheckedExpression } from '../expression/types.js';
import { checkRule, placeOf, type CheckedRule } from '../rules/rule-check.js';
import { attributeFor, currentSeries } from '../rules/rule-scope.js';
import type { StoredRule } from '../rules/rule-definition.js';
import { compiledRuleOf, type CompiledRule, type Target } from './pool-windows.js';

export const ENGINE_PRINCIPAL = 'calculation-engine';

export interface RulePlan {
  rule: StoredRule;
  compiled: CompiledRule;
  targets: Target[];
  /** Assets the rule could not run on, with why (shown in its status). */
  problems: Map<string, string>;
}

function maxBig(a: bigint, b: bigint): bigint { return a > b ? a : b; }

export function compileChecked(rule: StoredRule, c: CheckedRule): CompiledRule {
  const all: CheckedExpression[] = [c.expression, ...(c.when ? [c.when] : []), ...(c.edge ? [c.edge] : [])];
  let lookbackNs = 0n, lookbackPoints = 1;
  for (const e of all) { lookbackNs = maxBig(lookbackNs, e.lookbackNs); lookbackPoints = Math.max(lookbackPoints, e.lookbackPoints); }
  // The plain plan goes to the read pool's workers; the evaluators built here serve this thread.
  return compiledRuleOf({
    ruleId: rule.rule_id, version: rule.version, trigger: c.trigger,
    provisional: rule.provisional === 'block' ? 'block' : 'emit',
    expression: planOf(c.expression), when: c.when ? planOf(c.when) : null, edge: c.edge ? planOf(c.edge) : null,
    inputRefs: c.inputRefs, lookbackNs, lookbackPoints,
  });
}

/** The value type of series the engine creates for an output. */
function outputTypeOf(c: CheckedRule): ValueType {
  return c.expression.resultType === 'bool' ? 'boolean' : 'float64';
}

/** Plans in this process bind outputs one at a time (the engine and a backfill may plan one rule together). */
let bindingChain: Promise<unknown> = Promise.resolve();
function bindingOutputs<T>(fn: () => Promise<T>): Promise<T> {
  const run = bindingChain.then(fn);
  bindingChain = run.catch(() => undefined);
  return run;
}

export async function planRule(service: ServiceContext, rule: StoredRule): Promise<RulePlan> {
  const db = service.db;
  const checked = await checkRule(service, db, rule, rule.rule_id, { cycles: false });
  const compiled = compileChecked(rule, checked);
  const place = await placeOf(service, db, rule);
  // Assets a template rule's path references do not resolve from (or fail the check from) do not run it; their status says why.
  const problems = new Map<string, string>(checked.assetProblems);
  const unbound: Array<{ assetId: string; attributeId: string }> = [];
  // Read after the check: an asset created in between waits for the re-plan its commit brings.
  if (checked.checkedAssets) { const seen = checked.checkedAssets; place.assets = place.assets.filter((a) => seen.has(a.asset_id)); }
  for (const a of place.assets) {
    if (problems.has(a.asset_id)) continue;
    const o = place.output(a);
    if (!o) { problems.set(a.asset_id, 'the asset has no output attribute'); continue; }
    if (currentSeries(o) === null) unbound.push({ assetId: a.asset_id, attributeId: o.effective.attribute_id });
  }
  const created = new Map<string, string>();
  if (unbound.length > 0) {
    const catalogue = service.parts.series;
    const who = { principal: ENGINE_PRINCIPAL, reason: `outputs of calculation rule ${rule.rule_id}` };
    const outcomes = await catalogue.ensureManyForSource(unbound.map((u) => ({ sourceName: `calc/${rule.rule_id}/${u.assetId}`, valueType: outputTypeOf(checked), writableClass: 'calculation' })), who);
    await bindingOutputs(async () => modelTransaction(db, who, async (q, txId, events) => {
      for (const [i, u] of unbound.entries()) {
        const r = outcomes[i];
        if (!r.record) { problems.set(u.assetId, `no output series: ${r.error.message}`); continue; }
        // Another plan (the engine's, a backfill's) may have bound it meanwhile: keep that binding.
        await q.query('SELECT 1 FROM attribute_version WHERE attribute_id = $1 AND tx_to IS NULL FOR UPDATE', [u.attributeId]);
        const { rows } = await q.query<{ series_id: string }>('SELECT series_id FROM binding_version WHERE attribute_id = $1 AND tx_to IS NULL AND to_ns IS NULL LIMIT 1', [u.attributeId]);
        if (rows[0]) { created.set(u.attributeId, rows[0].series_id); continue; }
        await bindIn(q, txId, events, { attribute_id: u.attributeId, series_id: r.record.id, from_ns: 0n });
        created.set(u.attributeId, r.record.id);
      }
    }));
    // The bindings just made are new to the attribute cache (it dropped those assets on commit).
    for (const [id, list] of await service.parts.model.attributes.forAssets(unbound.map((u) => u.assetId))) place.attributes.set(id, list);
  }
  const seriesIds = new Set<string>();
  const pending: Array<{ assetId: string; byRef: Map<string, string | null>; output: string }> = [];
  for (const a of place.assets) {
    if (problems.has(a.asset_id)) continue;
    const o = place.output(a);
    const output = o ? currentSeries(o) ?? created.get(o.effective.attribute_id) ?? null : null;
    if (!output) { problems.set(a.asset_id, 'the output attribute is not bound to a series'); continue; }
    const byRef = new Map<string, string | null>();
    for (const ref of compiled.inputRefs) {
      const c = attributeFor(place.tree, a, ref, place.attributes);
      byRef.set(ref, c ? currentSeries(c) : null);
    }
    seriesIds.add(output);
    pending.push({ assetId: a.asset_id, byRef, output });
  }
  const records = await service.parts.series.getMany([...seriesIds]);
  const targets: Target[] = [];
  for (const p of pending) {
    const rec = records.get(p.output);
    if (!rec) { problems.set(p.assetId, `output series ${p.output} not found`); continue; }
    if ([...p.byRef.values()].includes(p.output)) { problems.set(p.assetId, 'the output series is also an input'); continue; }
    targets.push({ rule: compiled, assetId: p.assetId, seriesByRef: p.byRef, outputSeries: p.output, outputType: rec.valueType });
  }
  return { rule, compiled, targets, problems };
}
