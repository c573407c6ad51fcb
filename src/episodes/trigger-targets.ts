// Where a template's trigger runs. `open_when` is an expression of the calculation
// language (src/calc/expression) over attributes named plainly ('Temperature > 80'); it
// runs on every current asset that has an attribute of each name it reads, and the
// episodes it opens put that asset in the template's first role (which must take one
// asset). Each asset gets its own checked and compiled plan, since units and value types
// are the asset's own; plans are shared between assets whose inputs look alike.
import type { ServiceContext } from '../service-context.js';
import type { Queryable } from '../model/db.js';
import { sqlTextArray } from '../model/db.js';
import { invalid } from '../errors.js';
import { checkExpression, compileExpression, parseExpression, type CheckedExpression, type CompiledExpression, type InputDescriptor } from '../calc/expression/index.js';
import { RegistryView, RecordingScope, describeCached, currentSeries } from '../calc/rules/rule-scope.js';
import type { CachedAttribute } from '../model/resolve/attribute-cache.js';
import type { EpisodeTemplate, TemplateRole } from './episode-templates.js';

export interface TriggerTarget {
  /** `<template id>:<asset id>`. */
  key: string;
  template: EpisodeTemplate;
  assetId: string;
  role: string;
  checked: CheckedExpression;
  plan: CompiledExpression;
  /** Reference text → the series bound to it now (null: unbound). */
  seriesByRef: Map<string, string | null>;
  minDurationNs: bigint;
}

/** The attribute names an expression reads (its reference nodes), in order of appearance. */
export function referencesOf(text: string, field: string): string[] {
  const out: string[] = [];
  const walk = (n: unknown): void => {
    if (n === null || typeof n !== 'object') return;
    if (Array.isArray(n)) { for (const x of n) walk(x); return; }
    const node = n as { kind?: unknown; name?: unknown };
    if (node.kind === 'reference' && typeof node.name === 'string') { if (!out.includes(node.name)) out.push(node.name); return; }
    for (const v of Object.values(n)) walk(v);
  };
  walk(parseExpression(text, field));
  for (const r of out) if (r.includes('|') || r.includes('/')) throw invalid(field, `'${r}': a trigger names attributes of the asset plainly, without a path`);
  return out;
}

/** Current unretired assets that have an unretired attribute of every name. */
async function assetsWith(q: Queryable, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const { rows } = await q.query<{ asset_id: string }>(
    `SELECT a.asset_id FROM attribute_version a JOIN asset_version s ON s.asset_id = a.asset_id AND s.tx_to IS NULL AND NOT s.retired
      WHERE a.tx_to IS NULL AND NOT a.retired AND a.name = ANY($1::text[])
      GROUP BY a.asset_id HAVING count(DISTINCT a.name) = $2 ORDER BY a.asset_id`, [sqlTextArray(names), names.length]);
  return rows.map((r) => r.asset_id);
}

function seriesType(c: CachedAttribute, types: (series: string) => string | null): string | null {
  const s = currentSeries(c);
  return s === null ? null : types(s);
}

function check(text: string, field: string, reg: RegistryView, byName: Map<string, CachedAttribute>, types: (series: string) => string | null): CheckedExpression {
  const scope = new RecordingScope(reg, (ref): InputDescriptor | null => {
    const c = byName.get(ref);
    return c ? describeCached(ref, reg, c, seriesType(c, types)) : null;
  });
  return checkExpression(text, scope, { unitCheck: 'convert', field, expect: 'bool' });
}

const roleOf = (roles: TemplateRole[]): TemplateRole => {
  const r = roles[0];
  if (!r || r.cardinality !== 'one') throw invalid('trigger', 'a trigger opens episodes with the asset in the template\'s first role, so the template needs a first role of cardinality one');
  return r;
};

/**
 * Checks a trigger when its template is saved: a first role of cardinality one, an
 * expression that parses, names attributes some asset has, and is a condition.
 */
export async function checkTrigger(service: ServiceContext, openWhen: string, roles: TemplateRole[]): Promise<void> {
  roleOf(roles);
  const field = 'trigger/open_when';
  const refs = referencesOf(openWhen, field);
  if (refs.length === 0) throw invalid(field, 'the condition reads no attribute');
  const db = service.db;
  const assets = await assetsWith(db, refs);
  if (assets.length === 0) throw invalid(field, `no asset has attributes named ${refs.map((r) => `'${r}'`).join(', ')}`);
  const attrs = (await service.parts.model.attributes.forAssets([assets[0]])).get(assets[0]) ?? [];
  const byName = new Map(attrs.filter((a) => !a.effective.retired).map((a) => [a.effective.name, a]));
  check(openWhen, field, await RegistryView.load(db), byName, (s) => seriesTypeOf(service, s));
}

function seriesTypeOf(service: ServiceContext, seriesId: string): string | null {
  return service.parts.storage.meta(seriesId)?.type ?? null;
}

/** Every target of one triggered template (its plan per asset); assets whose inputs do not check are left out. */
export async function targetsOf(service: ServiceContext, t: EpisodeTemplate, reg: RegistryView): Promise<TriggerTarget[]> {
  if (!t.trigger) return [];
  const role = roleOf(t.roles).role;
  const field = 'trigger/open_when';
  const refs = referencesOf(t.trigger.open_when, field);
  const assets = await assetsWith(service.db, refs);
  const attributes = await service.parts.model.attributes.forAssets(assets);
  const plans = new Map<string, { checked: CheckedExpression; plan: CompiledExpression }>();
  const out: TriggerTarget[] = [];
  for (const assetId of assets) {
    const byName = new Map((attributes.get(assetId) ?? []).filter((a) => !a.effective.retired).map((a) => [a.effective.name, a]));
    const types = (s: string) => seriesTypeOf(service, s);
    const looks = refs.map((r) => { const c = byName.get(r); return c ? `${seriesType(c, types)}/${c.effective.display_unit_id}/${c.effective.enum_set_id}` : '-'; }).join('|');
    let p = plans.get(looks);
    if (!p) {
      try {
        const checked = check(t.trigger.open_when, field, reg, byName, types);
        p = { checked, plan: compileExpression(checked) };
      } catch {
        continue; // this asset's attributes do not fit the condition (another type or kind): no target
      }
      plans.set(looks, p);
    }
    const seriesByRef = new Map<string, string | null>();
    for (const r of refs) { const c = byName.get(r); seriesByRef.set(r, c ? currentSeries(c) : null); }
    out.push({ key: `${t.id}:${assetId}`, template: t, assetId, role, checked: p.checked, plan: p.plan, seriesByRef, minDurationNs: t.trigger.min_duration_ms * 1_000_000n });
  }
  return out;
}
