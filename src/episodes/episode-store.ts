// Episodes as rows of the model database: each change (create, edit, close, void) is one
// model transaction writing a new version of the episode (the old one ends at that
// tx_id, so GET ?as_of_ns reads any earlier state) and rewriting its rows in
// episode_asset, the current index the query reads. Voided episodes stay: they are kept,
// auditable, and left out of queries unless asked for.
import { randomUUID } from 'node:crypto';
import { type Db, type Queryable, jsonbParam } from '../model/db.js';
import { modelTransaction, type Who } from '../model/tx-log.js';
import { SqlArgs, validAt, type ReadTx } from '../model/versions/history.js';
import { checkName } from '../model/versions/names.js';
import { ServiceError, invalid } from '../errors.js';
import { episodeTemplateAt, type EpisodeTemplate } from './episode-templates.js';
import { checkEntered, checkOverlap, checkParent, checkRoles, episodeName, type EpisodeAsset, type EpisodeValue } from './episode-rules.js';

export type EpisodeState = 'open' | 'closed' | 'void';

export interface Episode {
  id: string;
  template_id: string;
  template_version: number;
  template: string;
  name: string;
  state: EpisodeState;
  start_ns: bigint;
  end_ns: bigint | null;
  parent_id: string | null;
  assets: EpisodeAsset[];
  attributes: Record<string, EpisodeValue>;
  void_reason: string | null;
  origin: 'manual' | 'trigger';
  version: number;
  tx_id: bigint;
}

interface EpisodeRow {
  episode_id: string; version: number; template_id: string; template_version: number; template_name: string; name: string; state: EpisodeState;
  start_ns: bigint; end_ns: bigint | null; parent_id: string | null; assets: EpisodeAsset[]; attributes: Record<string, EpisodeValue>;
  void_reason: string | null; origin: 'manual' | 'trigger'; tx_from: bigint;
}

export const toEpisode = (r: EpisodeRow): Episode => ({
  id: r.episode_id, template_id: r.template_id, template_version: Number(r.template_version), template: r.template_name, name: r.name, state: r.state,
  start_ns: BigInt(r.start_ns), end_ns: r.end_ns === null ? null : BigInt(r.end_ns), parent_id: r.parent_id, assets: r.assets, attributes: r.attributes,
  void_reason: r.void_reason, origin: r.origin, version: Number(r.version), tx_id: r.tx_from,
});

export const EPISODE_SELECT = `SELECT e.episode_id, e.version, e.template_id, e.template_version, t.name AS template_name, e.name, e.state, e.start_ns, e.end_ns,
  e.parent_id, e.assets, e.attributes, e.void_reason, e.origin, e.tx_from
  FROM episode_version e JOIN episode_template_version t ON t.template_id = e.template_id AND t.version = e.template_version`;

export async function episodeAt(q: Queryable, tx: ReadTx, id: string): Promise<Episode | null> {
  const args = new SqlArgs();
  const { rows } = await q.query<EpisodeRow>(`${EPISODE_SELECT} WHERE ${validAt('e', tx, args)} AND e.episode_id = ${args.add(id)}`, args.values);
  return rows[0] ? toEpisode(rows[0]) : null;
}

/** Current episodes by id, in the order asked (missing ones left out). */
export async function episodesByIds(q: Queryable, ids: string[]): Promise<Episode[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<EpisodeRow>(`${EPISODE_SELECT} WHERE e.tx_to IS NULL AND e.episode_id = ANY($1::uuid[])`, [`{${ids.join(',')}}`]);
  const byId = new Map(rows.map((r) => [r.episode_id, toEpisode(r)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** What a change writes: the next full state of the episode. */
interface Next {
  id: string; version: number; template: EpisodeTemplate; name: string; state: EpisodeState; start_ns: bigint; end_ns: bigint | null;
  parent_id: string | null; assets: EpisodeAsset[]; attributes: Record<string, EpisodeValue>; void_reason: string | null; origin: 'manual' | 'trigger';
}

async function writeVersion(q: Queryable, txId: bigint, n: Next): Promise<void> {
  await q.query('UPDATE episode_version SET tx_to = $2 WHERE episode_id = $1 AND tx_to IS NULL', [n.id, txId]);
  await q.query(
    `INSERT INTO episode_version (episode_id, version, template_id, template_version, name, state, start_ns, end_ns, parent_id, assets, attributes, void_reason, origin, tx_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12, $13, $14)`,
    [n.id, n.version, n.template.id, n.template.version, n.name, n.state, n.start_ns, n.end_ns, n.parent_id, jsonbParam(n.assets), jsonbParam(n.attributes), n.void_reason, n.origin, txId]);
  await q.query('DELETE FROM episode_asset WHERE episode_id = $1', [n.id]);
  if (n.assets.length > 0) {
    await q.query(
      `INSERT INTO episode_asset (episode_id, asset_id, role, template_id, state, start_ns, end_ns)
       SELECT $1, a.asset_id, a.role, $2, $3, $4, $5 FROM jsonb_to_recordset($6::jsonb) AS a(asset_id uuid, role text)`,
      [n.id, n.template.id, n.state, n.start_ns, n.end_ns, jsonbParam(n.assets)]);
  }
  if (n.end_ns !== null) await q.query('UPDATE episode_span_bound SET max_span_ns = GREATEST(max_span_ns, $1::bigint)', [n.end_ns - n.start_ns]);
}

/** Serialises writers of one template's episodes (the overlap check reads, then writes). */
async function lockTemplate(q: Queryable, templateId: string): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`episode-template:${templateId}`]);
}

function checkTimes(startNs: bigint, endNs: bigint | null): void {
  if (startNs < 0n) throw invalid('start_ns', 'must not be negative');
  if (endNs !== null && endNs <= startNs) throw invalid('end_ns', 'must be after start_ns');
}

function merged(base: Record<string, EpisodeValue>, changes: Record<string, EpisodeValue | null>): Record<string, EpisodeValue> {
  const out = { ...base };
  for (const [k, v] of Object.entries(changes)) { if (v === null) delete out[k]; else out[k] = v; }
  return out;
}

/** Captured values over entered ones: an entered value (a person's correction) always wins over a capture. */
function withCaptures(values: Record<string, EpisodeValue>, captures: Record<string, EpisodeValue>): Record<string, EpisodeValue> {
  const out = { ...values };
  for (const [k, v] of Object.entries(captures)) if (out[k]?.source !== 'entered') out[k] = v;
  return out;
}

export type Capture = (t: EpisodeTemplate, assets: EpisodeAsset[], startNs: bigint, endNs: bigint) => Promise<Record<string, EpisodeValue>>;

export interface CreateEpisode {
  template_id: string;
  name?: string;
  assets?: EpisodeAsset[];
  start_ns: bigint;
  end_ns?: bigint | null;
  parent_id?: string | null;
  attributes?: Record<string, unknown>;
  origin?: 'manual' | 'trigger';
}

export async function currentTemplate(q: Queryable, id: string, field = 'template_id'): Promise<EpisodeTemplate> {
  const t = await episodeTemplateAt(q, null, id);
  if (!t) throw invalid(field, `no episode template ${id}`);
  return t;
}

export async function createEpisode(db: Db, who: Who, b: CreateEpisode, capture: Capture): Promise<Episode> {
  const endNs = b.end_ns ?? null;
  checkTimes(b.start_ns, endNs);
  if (b.name !== undefined) checkName('name', b.name);
  const id = randomUUID();
  // captures read data, outside the model transaction (they do not touch the model)
  const pre = await currentTemplate(db, b.template_id);
  const captured = endNs === null ? {} : await capture(pre, b.assets ?? [], b.start_ns, endNs);
  const c = await modelTransaction(db, who, async (q, txId, events) => {
    await lockTemplate(q, b.template_id);
    const t = await currentTemplate(q, b.template_id);
    if (t.version !== pre.version) throw new ServiceError('conflict', `episode template ${t.id} changed while the episode was being created; retry`);
    const assets = await checkRoles(q, t, b.assets ?? []);
    await checkParent(q, t, b.parent_id ?? null, id);
    const entered = merged({}, checkEntered(t, b.attributes ?? {}));
    await checkOverlap(q, t, id, assets, b.start_ns, endNs);
    const name = b.name ?? await episodeName(q, t, assets, b.start_ns);
    const next: Next = {
      id, version: 1, template: t, name, state: endNs === null ? 'open' : 'closed', start_ns: b.start_ns, end_ns: endNs,
      parent_id: b.parent_id ?? null, assets, attributes: withCaptures(entered, captured), void_reason: null, origin: b.origin ?? 'manual',
    };
    await writeVersion(q, txId, next);
    events.emit('episode', id, 'created', { template_id: t.id, state: next.state, start_ns: next.start_ns, end_ns: next.end_ns });
    return id;
  });
  return (await episodeAt(db, null, c.result))!;
}

/** Reads the current version for a change, refusing a stale expected version (409 conflict). */
async function forChange(q: Queryable, id: string, expected: number | undefined): Promise<Episode> {
  const cur = await episodeAt(q, null, id);
  if (!cur) throw new ServiceError('not-found', `episode ${id} not found`);
  if (expected !== undefined && expected !== cur.version) {
    throw new ServiceError('conflict', `episode ${id} changed: expected version ${expected}, current version ${cur.version}`, { expected_version: expected, current_version: cur.version });
  }
  return cur;
}

export interface EditEpisode {
  expected_version: number;
  name?: string;
  assets?: EpisodeAsset[];
  start_ns?: bigint;
  end_ns?: bigint;
  parent_id?: string | null;
  attributes?: Record<string, unknown>;
}

/**
 * Edits an open or closed episode (a void one is final: 409). Changing the times or the
 * assets of a closed episode captures its attributes again (entered values stay);
 * retro_edit_approval `none` means such edits apply at once.
 */
export async function editEpisode(db: Db, who: Who, id: string, b: EditEpisode, capture: Capture): Promise<Episode> {
  if (b.name !== undefined) checkName('name', b.name);
  const before = await forChange(db, id, b.expected_version);
  if (b.end_ns !== undefined && before.state === 'open') throw invalid('end_ns', 'an open episode ends by POST /v1/episodes/{id}/close');
  const startNs = b.start_ns ?? before.start_ns;
  const endNs = b.end_ns ?? before.end_ns;
  checkTimes(startNs, endNs);
  const t0 = (await episodeTemplateAt(db, null, before.template_id, before.template_version))!;
  const recapture = before.state === 'closed' && endNs !== null && (startNs !== before.start_ns || endNs !== before.end_ns || b.assets !== undefined);
  const captured = recapture ? await capture(t0, b.assets ?? before.assets, startNs, endNs) : {};
  const c = await modelTransaction(db, who, async (q, txId, events) => {
    await lockTemplate(q, before.template_id);
    const cur = await forChange(q, id, b.expected_version);
    if (cur.state === 'void') throw new ServiceError('episode-state', `episode ${id} is void and cannot be edited`, { state: cur.state });
    const assets = b.assets !== undefined ? await checkRoles(q, t0, b.assets) : cur.assets;
    const parentId = b.parent_id !== undefined ? b.parent_id : cur.parent_id;
    if (b.parent_id !== undefined) await checkParent(q, t0, parentId, id);
    let attributes = merged(cur.attributes, checkEntered(t0, b.attributes ?? {}));
    if (recapture) attributes = withCaptures(attributes, captured);
    await checkOverlap(q, t0, id, assets, startNs, endNs);
    const next: Next = {
      id, version: cur.version + 1, template: t0, name: b.name ?? cur.name, state: cur.state, start_ns: startNs, end_ns: endNs,
      parent_id: parentId, assets, attributes, void_reason: null, origin: cur.origin,
    };
    await writeVersion(q, txId, next);
    events.emit('episode', id, 'edited', { version: next.version });
    return id;
  });
  return (await episodeAt(db, null, c.result))!;
}

/** Closes an open episode at endNs and stores its captures (409 episode-state unless open). */
export async function closeEpisode(db: Db, who: Who, id: string, b: { end_ns: bigint; expected_version?: number }, capture: Capture): Promise<Episode> {
  const before = await forChange(db, id, b.expected_version);
  if (before.state !== 'open') throw new ServiceError('episode-state', `episode ${id} is ${before.state}, not open`, { state: before.state });
  checkTimes(before.start_ns, b.end_ns);
  const t = (await episodeTemplateAt(db, null, before.template_id, before.template_version))!;
  const captured = await capture(t, before.assets, before.start_ns, b.end_ns);
  await modelTransaction(db, who, async (q, txId, events) => {
    await lockTemplate(q, before.template_id);
    const cur = await forChange(q, id, b.expected_version);
    if (cur.state !== 'open') throw new ServiceError('episode-state', `episode ${id} is ${cur.state}, not open`, { state: cur.state });
    await checkOverlap(q, t, id, cur.assets, cur.start_ns, b.end_ns);
    await writeVersion(q, txId, { ...cur, template: t, version: cur.version + 1, state: 'closed', end_ns: b.end_ns, attributes: withCaptures(cur.attributes, captured) });
    events.emit('episode', id, 'closed', { version: cur.version + 1, end_ns: b.end_ns });
  });
  return (await episodeAt(db, null, id))!;
}

/** Voids an episode: kept with its reason and history, left out of queries unless asked (409 when already void). */
export async function voidEpisode(db: Db, who: Who, id: string, b: { reason: string; expected_version?: number }): Promise<Episode> {
  if (b.reason.trim() === '') throw invalid('reason', 'say why the episode is void');
  await modelTransaction(db, who, async (q, txId, events) => {
    const cur = await forChange(q, id, b.expected_version);
    if (cur.state === 'void') throw new ServiceError('episode-state', `episode ${id} is already void`, { state: cur.state });
    const t = (await episodeTemplateAt(q, null, cur.template_id, cur.template_version))!;
    await writeVersion(q, txId, { ...cur, template: t, version: cur.version + 1, state: 'void', void_reason: b.reason });
    events.emit('episode', id, 'voided', { version: cur.version + 1, reason: b.reason });
  });
  return (await episodeAt(db, null, id))!;
}
