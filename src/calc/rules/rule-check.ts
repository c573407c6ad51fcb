// Checks a rule against the model before it is saved: its fields, that its scope and
// output exist, its expressions (parse, types, units, references) through the expression
// checker, that no other rule writes the same output, and that it forms no cycle with the
// current rules (an output feeding its own input, directly or through other rules).
//
// Expressions are checked against the current model before the writing transaction (the
// asset tree and attribute caches live beside it); a concurrent model change between check
// and commit is caught by the engine, which refuses to plan a target whose references no
// longer resolve and reports it in the rule's status. The output and cycle checks run
// before it too, and the writing transaction verifies under one advisory lock that the rules
// it saw are still the current ones (verifyRuleGraphIn), so two rule saves that each look
// fine alone cannot commit a cycle or two writers of one output.
import type { Queryable } from '../../model/db.js';
import type { ServiceContext } from '../../service-context.js';
import { invalid, ServiceError } from '../../errors.js';
import { templatesAt } from '../../model/templates/templates.js';
import type { AssetNode, AssetTree } from '../../model/assets/asset-tree.js';
import type { CachedAttribute } from '../../model/resolve/attribute-cache.js';
import { checkExpression } from '../expression/index.js';
import { findRuleCycle, cycleError } from '../expression/rule-cycle.js';
import type { CheckedExpression, InputDescriptor, RuleEdges, UnitCheck } from '../expression/types.js';
import { checkRuleFields, evaluatedExpression, isTemplateScope, type EngineTrigger, type RuleDefinition } from './rule-definition.js';
import { RegistryView, RecordingScope, describeCached, describeDefinition, attributeFor, currentSeries } from './rule-scope.js';
import { isPathReference } from './reference-path.js';
import { rulesWithInputs } from './rule-store.js';

export interface CheckedRule {
  trigger: EngineTrigger;
  expression: CheckedExpression;
  when: CheckedExpression | null;
  edge: CheckedExpression | null;
  /** Every reference text the rule's expressions read. */
  inputRefs: string[];
  /** The current rules the output and cycle check saw (verifyRuleGraphIn; '' when not checked). */
  graphStamp: string;
  /** Assets of a template rule it cannot run on (a path that does not resolve from them, a failed check there), with why. */
  assetProblems: Map<string, string>;
  /**
   * The assets a template rule with path references was checked on (null: its check does not
   * depend on the asset). An asset created after the check is not among them: planning leaves
   * it for the re-plan its own model commit brings, rather than run it unchecked.
   */
  checkedAssets: ReadonlySet<string> | null;
}

/** Where a rule runs, read from the current model. */
export interface RulePlace {
  tree: AssetTree;
  assets: AssetNode[];
  attributes: Map<string, CachedAttribute[]>;
  /** The output attribute on an asset, or null when the asset lacks it. */
  output(asset: AssetNode): CachedAttribute | null;
  /** For template rules: definitions by name (plain references). */
  definitions: Map<string, { id: string; describe: (reg: RegistryView) => InputDescriptor }> | null;
  outputDescriptor(reg: RegistryView, seriesType: string | null): InputDescriptor;
}

function modelPart(service: ServiceContext) {
  const m = service.parts.model;
  if (!m) throw new ServiceError('model-unavailable', 'the asset model is not started');
  return m;
}

/** The assets a rule runs on and their attributes, or a 400 naming the scope field that is wrong. */
export async function placeOf(service: ServiceContext, q: Queryable, d: RuleDefinition): Promise<RulePlace> {
  const model = modelPart(service);
  const tree = await model.tree();
  const s = d.scope;
  if (isTemplateScope(s)) {
    const [template] = await templatesAt(q, null, [s.template_id]);
    if (!template) throw invalid('scope.template_id', `no template ${s.template_id}`);
    const def = template.attributes.find(([id]) => id === s.output_attr_def_id);
    if (!def) throw invalid('scope.output_attr_def_id', `template "${template.name}" has no attribute definition ${s.output_attr_def_id}`);
    const assets = [...tree.nodes.values()].filter((n) => n.template_id === s.template_id && !tree.effectivelyRetired(n));
    const attributes = await model.attributes.forAssets(assets.map((a) => a.asset_id));
    const definitions = new Map(template.attributes.map(([id, dd]) => [dd.name, { id, describe: (reg: RegistryView) => describeDefinition(dd.name, reg, dd) }]));
    return {
      tree, assets, attributes, definitions,
      output: (a) => attributes.get(a.asset_id)?.find((c) => c.effective.attr_def_id === s.output_attr_def_id && !c.effective.retired) ?? null,
      outputDescriptor: (reg) => describeDefinition('output', reg, def[1]),
    };
  }
  const node = tree.get(s.asset_id);
  if (!node || tree.effectivelyRetired(node)) throw invalid('scope.asset_id', `no current asset ${s.asset_id}`);
  const attributes = await model.attributes.forAssets([s.asset_id]);
  const out = attributes.get(s.asset_id)?.find((c) => c.effective.attribute_id === s.output_attribute_id && !c.effective.retired);
  if (!out) throw invalid('scope.output_attribute_id', `asset ${s.asset_id} has no attribute ${s.output_attribute_id}`);
  return {
    tree, assets: [node], attributes, definitions: null,
    output: () => out,
    outputDescriptor: (reg, seriesType) => describeCached('output', reg, out, seriesType),
  };
}

/** Makes sure the attributes of the assets a path may reach are loaded (parents, siblings, children). */
export async function loadNeighbourhood(service: ServiceContext, place: RulePlace): Promise<void> {
  const ids = new Set<string>();
  for (const a of place.assets) {
    const p = a.parent;
    if (p) { ids.add(p.asset_id); for (const c of p.children) ids.add(c.asset_id); }
    for (const c of a.children) ids.add(c.asset_id);
  }
  const missing = [...ids].filter((id) => !place.attributes.has(id));
  if (missing.length === 0) return;
  for (const [id, list] of await modelPart(service).attributes.forAssets(missing)) place.attributes.set(id, list);
}

/**
 * A path reference of a template rule while the template has no assets: nothing to follow
 * it from, so it is taken as a float64 of unknown quantity kind (the expression is then
 * checked without units) and checked in full per asset once assets appear.
 */
function deferredPath(text: string): InputDescriptor {
  return { key: text, valueType: 'float64', quantityKind: null, unitId: null, unit: null, enumSet: null };
}

/**
 * A reference's descriptor for the rule's place; seriesTypes gives bound series' value
 * types when known. A path reference takes the first asset it resolves from (assets it
 * does not resolve from are reported per asset, see assetChecks).
 */
function resolver(place: RulePlace, reg: RegistryView, seriesTypes: Map<string, string>) {
  return (text: string): InputDescriptor | null => {
    if (!isPathReference(text) && place.definitions) return place.definitions.get(text)?.describe(reg) ?? null;
    if (place.definitions && place.assets.length === 0) return deferredPath(text);
    for (const a of place.assets) {
      const c = attributeFor(place.tree, a, text, place.attributes);
      if (!c) continue;
      const series = currentSeries(c);
      return describeCached(text, reg, c, series ? seriesTypes.get(series) ?? null : null);
    }
    return null;
  };
}

async function seriesTypesOf(service: ServiceContext, place: RulePlace, texts: Iterable<string>): Promise<Map<string, string>> {
  const ids = new Set<string>();
  for (const text of texts) {
    for (const a of place.assets) {
      const c = attributeFor(place.tree, a, text, place.attributes);
      const s = c ? currentSeries(c) : null;
      if (s) ids.add(s);
    }
  }
  for (const a of place.assets) { const o = place.output(a); const s = o ? currentSeries(o) : null; if (s) ids.add(s); }
  const out = new Map<string, string>();
  const catalogue = service.parts.series;
  if (!catalogue || ids.size === 0) return out;
  for (const [id, r] of await catalogue.getMany([...ids])) out.set(id, r.valueType);
  return out;
}

interface CheckedExpressions { expression: CheckedExpression; when: CheckedExpression | null; edge: CheckedExpression | null; inputRefs: string[] }

/** Checks the rule's expressions against one place (every asset of it, or one asset of a template). */
function checkExpressionsAt(d: RuleDefinition, trigger: EngineTrigger, place: RulePlace, reg: RegistryView, seriesTypes: Map<string, string>, unitCheck: UnitCheck): CheckedExpressions {
  const firstAsset = place.assets[0];
  const outAttr = firstAsset ? place.output(firstAsset) : null;
  const outSeries = outAttr ? currentSeries(outAttr) : null;
  const output = place.outputDescriptor(reg, outSeries ? seriesTypes.get(outSeries) ?? null : null);
  const scope = new RecordingScope(reg, resolver(place, reg, seriesTypes));
  const expression = checkExpression(evaluatedExpression(d, trigger), scope, { unitCheck, field: 'expression', output });
  const when = d.when ? checkExpression(d.when, scope, { unitCheck, field: 'when', expect: 'bool' }) : null;
  const edge = trigger.kind === 'edge' ? checkExpression(trigger.expr, scope, { unitCheck, field: 'trigger.expr', expect: 'bool' }) : null;
  return { expression, when, edge, inputRefs: [...scope.asked] };
}

/**
 * A template rule with path references, per asset: an asset the path does not resolve
 * from, or whose attributes there fail the check (units, types), gets a problem of its own
 * (shown in the rule's status) instead of refusing the rule. Assets whose path attributes
 * look alike (quantity kind, unit, enum set, series type) are checked once together.
 * Returns the check of the first asset that passes (null when none does) and the problems.
 */
function assetChecks(d: RuleDefinition, trigger: EngineTrigger, place: RulePlace, reg: RegistryView, seriesTypes: Map<string, string>, unitCheck: UnitCheck, pathRefs: readonly string[]):
  { passed: CheckedExpressions | null; firstError: ServiceError | null; problems: Map<string, string> } {
  const problems = new Map<string, string>();
  const groups = new Map<string, AssetNode[]>();
  for (const a of place.assets) {
    const sig: string[] = [];
    let missing: string | null = null;
    for (const r of pathRefs) {
      const c = attributeFor(place.tree, a, r, place.attributes);
      if (!c) { missing = r; break; }
      const series = currentSeries(c);
      const e = c.effective;
      sig.push(`${e.quantity_kind_id}|${e.display_unit_id}|${e.enum_set_id}|${series ? seriesTypes.get(series) ?? '' : ''}`);
    }
    if (missing !== null) { problems.set(a.asset_id, `reference "${missing}" does not resolve from this asset`); continue; }
    const key = sig.join(',');
    const g = groups.get(key);
    if (g) g.push(a); else groups.set(key, [a]);
  }
  let passed: CheckedExpressions | null = null;
  let firstError: ServiceError | null = null;
  for (const assets of groups.values()) {
    try {
      const r = checkExpressionsAt(d, trigger, { ...place, assets: [assets[0]] }, reg, seriesTypes, unitCheck);
      passed ??= r;
    } catch (e) {
      if (!(e instanceof ServiceError)) throw e;
      firstError ??= e;
      for (const a of assets) problems.set(a.asset_id, `${e.message}`);
    }
  }
  return { passed, firstError, problems };
}

/**
 * Checks every expression of the rule; returns them checked with the references they read.
 * A template rule's path references: while the template has no assets they are accepted and
 * checked without units (deferred to each asset); with assets, each asset is checked and one
 * that fails gets a problem in `assetProblems`. A save (forSave) is refused only when assets
 * exist and none passes; the engine (planning) never refuses for one asset's sake.
 */
export async function checkRule(service: ServiceContext, q: Queryable, d: RuleDefinition, ruleId: string | null, opts: { cycles: boolean } = { cycles: true }): Promise<CheckedRule> {
  const trigger = checkRuleFields(d);
  const reg = await RegistryView.load(q);
  const place = await placeOf(service, q, d);
  await loadNeighbourhood(service, place);
  const unitCheck = d.unit_check as UnitCheck;
  // A rollup aggregates numbers: its own expression is checked as one first (errors point into what the user wrote).
  const texts: Array<[string, string, 'number' | 'bool' | undefined]> = [['expression', d.expression as string, d.tier === 'rollup' ? 'number' : undefined]];
  if (d.when) texts.push(['when', d.when, 'bool']);
  if (trigger.kind === 'edge') texts.push(['trigger.expr', trigger.expr, 'bool']);
  // First pass (units off: path references may not be known yet): which references are read;
  // second pass: checked with the bound series' value types and the rule's unit_check.
  const first = new RecordingScope(reg, resolver(place, reg, new Map()));
  for (const [field, text, expect] of texts) checkExpression(text, first, { unitCheck: 'off', field, expect });
  const seriesTypes = await seriesTypesOf(service, place, first.asked);
  const pathRefs = place.definitions ? [...first.asked].filter(isPathReference) : [];
  let checked: CheckedExpressions;
  const assetProblems = new Map<string, string>();
  if (pathRefs.length === 0) checked = checkExpressionsAt(d, trigger, place, reg, seriesTypes, unitCheck);
  else if (place.assets.length === 0) checked = checkExpressionsAt(d, trigger, place, reg, seriesTypes, 'off');
  else {
    const r = assetChecks(d, trigger, place, reg, seriesTypes, unitCheck, pathRefs);
    for (const [a, why] of r.problems) assetProblems.set(a, why);
    if (r.passed) checked = r.passed;
    else if (opts.cycles) throw r.firstError ?? new ServiceError('unknown-reference', `expression: no asset of the template resolves ${pathRefs.map((x) => `"${x}"`).join(', ')}`, { field: 'expression', reference: pathRefs[0] });
    // Planning: no asset can run it now; compiled as if it had none, with every asset's problem reported.
    else checked = checkExpressionsAt(d, trigger, { ...place, assets: [] }, reg, seriesTypes, 'off');
  }
  const graphStamp = opts.cycles ? await checkOutputAndCycles(service, q, d, ruleId, place, checked.inputRefs) : '';
  const checkedAssets = pathRefs.length === 0 ? null : new Set(place.assets.map((a) => a.asset_id));
  return { trigger, ...checked, graphStamp, assetProblems, checkedAssets };
}

/** The advisory lock every rule write takes before it commits (an arbitrary constant). */
const RULE_GRAPH_LOCK = 2_704_270_427;

/** The current rules as the graph check saw them: each rule's id and version transaction. */
function graphStamp(rules: ReadonlyArray<{ rule: { rule_id: string; tx_id: bigint } }>): string {
  return rules.map((r) => `${r.rule.rule_id}@${r.rule.tx_id}`).sort().join(',');
}

/** The graph check's rules changed before the write could commit: the caller checks again. */
export class RuleGraphMoved extends Error {
  constructor() { super('another rule was saved meanwhile'); this.name = 'RuleGraphMoved'; }
}

/**
 * Inside a rule write's transaction: waits for any other rule write to commit (every rule
 * write takes the lock), then makes sure the current rules are still the ones the output
 * and cycle check saw. If another save committed meanwhile, RuleGraphMoved rolls the write
 * back and the caller checks again against the new rules; so two saves that each look fine
 * alone cannot commit a cycle or two writers of one output together. The check itself runs
 * before the transaction because it reads the model's caches, which on PGlite (one
 * connection) would wait for the transaction.
 */
export async function verifyRuleGraphIn(q: Queryable, stamp: string): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock($1)', [RULE_GRAPH_LOCK]);
  if (graphStamp(await rulesWithInputs(q)) !== stamp) throw new RuleGraphMoved();
}

/** Attribute keys for cycle checks: the attribute's path, readable in the error. */
function attributeKey(place: RulePlace, c: CachedAttribute): string {
  const a = place.tree.get(c.effective.asset_id);
  return a ? `${place.tree.path(a)}|${c.effective.name}` : c.effective.attribute_id;
}

/** Edges of one rule: per asset, its input attributes → its output attribute; for templates, definitions too. */
function edgesOf(ruleId: string, place: RulePlace, inputRefs: readonly string[], out: RuleEdges[]): void {
  for (const a of place.assets) {
    const o = place.output(a);
    if (!o) continue;
    const inputKeys: string[] = [];
    for (const text of inputRefs) {
      const c = attributeFor(place.tree, a, text, place.attributes);
      if (c) inputKeys.push(attributeKey(place, c));
    }
    out.push({ ruleId, outputKey: attributeKey(place, o), inputKeys });
  }
}

/** Checks the output and cycles against the current rules; returns their stamp. */
async function checkOutputAndCycles(service: ServiceContext, q: Queryable, d: RuleDefinition, ruleId: string | null, place: RulePlace, inputRefs: string[]): Promise<string> {
  const current = await rulesWithInputs(q);
  const others = current.filter((r) => r.rule.rule_id !== ruleId);
  const outputId = isTemplateScope(d.scope) ? d.scope.output_attr_def_id : d.scope.output_attribute_id;
  const clash = others.find((r) => (isTemplateScope(r.rule.scope) ? r.rule.scope.output_attr_def_id : r.rule.scope.output_attribute_id) === outputId);
  if (clash) throw new ServiceError('invalid-request', `scope: rule ${clash.rule.rule_id} ("${clash.rule.name}") already writes that output; one rule per output`, { errors: [{ field: 'scope', problem: 'output already written by another rule' }], rule_id: clash.rule.rule_id });
  const self = ruleId ?? 'new rule';
  const edges: RuleEdges[] = [];
  edgesOf(self, place, inputRefs, edges);
  // Template-level edges catch a cycle among a template's definitions before any asset exists.
  if (place.definitions && isTemplateScope(d.scope)) {
    const defs = place.definitions;
    const tpl = d.scope;
    const defKeys = (refs: readonly string[]) => refs.filter((t) => !isPathReference(t)).map((t) => defs.get(t)?.id).filter((x): x is string => !!x).map((id) => `definition ${id}`);
    edges.push({ ruleId: self, outputKey: `definition ${tpl.output_attr_def_id}`, inputKeys: defKeys(inputRefs) });
    for (const r of others) {
      if (isTemplateScope(r.rule.scope) && r.rule.scope.template_id === tpl.template_id) {
        edges.push({ ruleId: r.rule.rule_id, outputKey: `definition ${r.rule.scope.output_attr_def_id}`, inputKeys: defKeys(r.inputRefs) });
      }
    }
  }
  for (const r of others) {
    let p: RulePlace;
    try { p = await placeOf(service, q, r.rule); } catch { continue; } // a rule whose scope is gone writes nothing
    await loadNeighbourhood(service, p);
    edgesOf(r.rule.rule_id, p, r.inputRefs, edges);
  }
  const cycle = findRuleCycle(edges);
  if (cycle) throw cycleError(cycle);
  return graphStamp(current);
}
