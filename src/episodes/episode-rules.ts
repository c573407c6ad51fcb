// The rules a template sets for its episodes, checked inside the episode's model
// transaction: roles and their cardinality, permitted children, entered attribute values
// against their class, the overlap rule, and the name from the naming pattern. A broken
// rule is a ServiceError naming it (details.rule) and the member at fault (details.field).
import type { Queryable } from '../model/db.js';
import { currentAssetRow } from '../model/assets/assets.js';
import { ServiceError, invalid } from '../errors.js';
import type { EpisodeTemplate, TemplateAttribute } from './episode-templates.js';

export interface EpisodeAsset { role: string; asset_id: string }

/** An episode attribute's value: entered by a person, or captured at close (with no_value when the data had none). */
export interface EpisodeValue {
  value: unknown;
  source: 'entered' | 'captured';
  no_value?: string;
}

export const ruleBroken = (rule: string, field: string, message: string, extra: Record<string, unknown> = {}) =>
  new ServiceError('episode-rule', `${field}: ${message} (rule ${rule})`, { rule, field, errors: [{ field, problem: message }], ...extra });

/**
 * Checks the assets in roles against the template: every role known, cardinality `one`
 * at most one asset, required roles filled, each asset existing. Returns them with the
 * role written by its registry name.
 */
export async function checkRoles(q: Queryable, t: EpisodeTemplate, assets: EpisodeAsset[]): Promise<EpisodeAsset[]> {
  const out: EpisodeAsset[] = [];
  const seen = new Set<string>();
  for (const [i, a] of assets.entries()) {
    const role = t.roles.find((r) => r.role === a.role || r.role_id === a.role);
    if (!role) throw ruleBroken('role-unknown', `assets/${i}/role`, `"${a.role}" is not a role of template ${t.name}`);
    const key = `${role.role}\u0000${a.asset_id}`;
    if (seen.has(key)) throw invalid(`assets/${i}`, `asset ${a.asset_id} is already in role ${role.role}`);
    seen.add(key);
    const row = await currentAssetRow(q, a.asset_id);
    if (!row) throw invalid(`assets/${i}/asset_id`, `no asset ${a.asset_id}`);
    out.push({ role: role.role, asset_id: a.asset_id });
  }
  for (const r of t.roles) {
    const n = out.filter((a) => a.role === r.role).length;
    if (r.cardinality === 'one' && n > 1) throw ruleBroken('role-cardinality', 'assets', `role ${r.role} takes one asset, ${n} were given`);
    if (r.required && n === 0) throw ruleBroken('role-required', 'assets', `role ${r.role} is required`);
  }
  return out;
}

/** The parent must exist, not be void, and its template must permit this template as a child. */
export async function checkParent(q: Queryable, t: EpisodeTemplate, parentId: string | null, selfId: string): Promise<void> {
  if (parentId === null) return;
  if (parentId === selfId) throw invalid('parent_id', 'an episode cannot be its own parent');
  const { rows } = await q.query<{ state: string; permitted: string[]; parent_id: string | null }>(
    `SELECT e.state, e.parent_id, COALESCE(ARRAY(SELECT jsonb_array_elements_text(t.definition->'permitted_children')), '{}') AS permitted
       FROM episode_version e JOIN episode_template_version t ON t.template_id = e.template_id AND t.version = e.template_version
      WHERE e.episode_id = $1 AND e.tx_to IS NULL`, [parentId]);
  const p = rows[0];
  if (!p) throw invalid('parent_id', `no episode ${parentId}`);
  if (p.state === 'void') throw invalid('parent_id', `episode ${parentId} is void`);
  if (!p.permitted.includes(t.id) && !p.permitted.includes(t.name)) {
    throw ruleBroken('permitted-children', 'parent_id', `the parent's template does not permit children of template ${t.name}`);
  }
  // a parent chain that comes back to this episode would make it its own ancestor
  let up = p.parent_id;
  for (let hops = 0; up !== null && hops < 1000; hops++) {
    if (up === selfId) throw invalid('parent_id', 'the parent is a descendant of this episode');
    const r = await q.query<{ parent_id: string | null }>('SELECT parent_id FROM episode_version WHERE episode_id = $1 AND tx_to IS NULL', [up]);
    up = r.rows[0]?.parent_id ?? null;
  }
}

function valueFits(a: TemplateAttribute, v: unknown): boolean {
  if (v === null) return true;
  switch (a.class) {
    case 'number': return typeof v === 'number' || typeof v === 'bigint';
    case 'integer': return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
    case 'boolean': return typeof v === 'boolean';
    case 'string': return typeof v === 'string';
    case 'enum': return typeof v === 'string' || typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
  }
}

/** Entered values: each names a template attribute and fits its class (null clears an entered value). */
export function checkEntered(t: EpisodeTemplate, values: Record<string, unknown>): Record<string, EpisodeValue | null> {
  const out: Record<string, EpisodeValue | null> = {};
  for (const [name, v] of Object.entries(values)) {
    const a = t.attributes.find((x) => x.name === name);
    if (!a) throw ruleBroken('attribute-unknown', `attributes/${name}`, `template ${t.name} has no attribute "${name}"`);
    if (!valueFits(a, v)) throw invalid(`attributes/${name}`, `expected a ${a.class} value`);
    out[name] = v === null ? null : { value: v, source: 'entered' };
  }
  return out;
}

/**
 * The overlap rule: under forbidden-per-asset no other unvoided episode of the template
 * may share an asset with this one at an overlapping time; under forbidden-per-role, the
 * same asset in the same role. The caller holds the template's advisory lock, so two
 * writers cannot both pass the check.
 */
export async function checkOverlap(q: Queryable, t: EpisodeTemplate, selfId: string, assets: EpisodeAsset[], startNs: bigint, endNs: bigint | null): Promise<void> {
  if (t.overlap === 'allowed' || assets.length === 0) return;
  const perRole = t.overlap === 'forbidden-per-role';
  for (const a of assets) {
    const { rows } = await q.query<{ episode_id: string }>(
      `SELECT episode_id FROM episode_asset
        WHERE asset_id = $1 AND template_id = $2 AND state <> 'void' AND episode_id <> $3
          ${perRole ? 'AND role = $6' : ''}
          AND start_ns < COALESCE($5::bigint, 9223372036854775807) AND (end_ns IS NULL OR end_ns > $4)
        LIMIT 1`,
      perRole ? [a.asset_id, t.id, selfId, startNs, endNs, a.role] : [a.asset_id, t.id, selfId, startNs, endNs]);
    if (rows[0]) {
      throw new ServiceError('episode-overlap', `episode ${rows[0].episode_id} of template ${t.name} already covers asset ${a.asset_id}${perRole ? ` in role ${a.role}` : ''} in this time (overlap ${t.overlap})`,
        { rule: t.overlap, episode_id: rows[0].episode_id, asset_id: a.asset_id });
    }
  }
}

/** The name from the template's naming pattern, or "<template> <start>" without one. */
export async function episodeName(q: Queryable, t: EpisodeTemplate, assets: EpisodeAsset[], startNs: bigint): Promise<string> {
  const iso = new Date(Number(startNs / 1_000_000n)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (t.naming_pattern === null) return `${t.name} ${iso}`;
  let out = '';
  let last = 0;
  for (const m of t.naming_pattern.matchAll(/\{([a-z]+)(?::([^{}]+))?\}/g)) {
    out += t.naming_pattern.slice(last, m.index);
    last = (m.index ?? 0) + m[0].length;
    if (m[1] === 'template') out += t.name;
    else if (m[1] === 'family') out += t.family;
    else if (m[1] === 'start') out += iso;
    else {
      const a = assets.find((x) => x.role === m[2]);
      out += a ? ((await currentAssetRow(q, a.asset_id))?.name ?? a.asset_id) : '';
    }
  }
  return (out + t.naming_pattern.slice(last)).trim() || `${t.name} ${iso}`;
}
