// Annotations in the model database: create, a new version, redaction, and reading them
// back. Every change is one model transaction (tx-log.ts) that also writes the version
// row, the per-target rows the time queries read (annotation_target) and the attachments
// the version uses. Callers resolve and authorize the target first (resolveTarget), so a
// refusal never half-writes.
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../model/db.js';
import { jsonbParam, sqlTextArray } from '../model/db.js';
import { modelTransaction } from '../model/tx-log.js';
import { ServiceError, invalid, notFound } from '../errors.js';
import { nowNs } from '../clock.js';

export type AnnotationTarget = { attributes: string[] } | { asset: string } | { episode: string };
export type TargetKind = 'attributes' | 'asset' | 'episode';

/** A target checked against the model: what it names and the assets that scope it. */
export interface ResolvedTarget {
  kind: TargetKind;
  ids: string[];
  /** target id -> its asset (null for an episode) */
  assetOf: Map<string, string | null>;
  scopeAssets: string[];
}

export interface AnnotationContent {
  target: AnnotationTarget;
  startNs: bigint;
  /** Inclusive; equal to startNs for an instant. */
  endNs: bigint;
  text: string;
  tags: string[];
  attachmentIds: string[];
}

export interface Actor {
  /** The principal's subject (recorded as author and in the transaction log). */
  principal: string;
  principalId: string;
  reason: string;
}

export interface AttachmentView { attachment_id: string; sha256: string; content_type: string; size_bytes: bigint; filename: string | null; redacted: boolean }

/** An annotation as the routes answer it. */
export interface AnnotationView {
  annotation_id: string;
  version: number;
  target: AnnotationTarget;
  start_ns: bigint;
  end_ns: bigint;
  text: string | null;
  tags: string[];
  attachments: AttachmentView[];
  author: string;
  created_ns: bigint;
  updated_ns: bigint;
  updated_by: string;
  tx_id: bigint;
  redacted: null | { redacted_ns: bigint; redacted_by: string; reason: string };
  /** Not answered: who may read it. */
  scopeAssets: string[];
}

/** The bit length of the duration: ranges of class c are shorter than 2^c (migration 0100). */
export function spanClass(startNs: bigint, endNs: bigint): number {
  const d = endNs - startNs;
  return d === 0n ? 0 : d.toString(2).length;
}

const targetOf = (kind: TargetKind, ids: string[]): AnnotationTarget =>
  kind === 'attributes' ? { attributes: ids } : kind === 'asset' ? { asset: ids[0] } : { episode: ids[0] };

/** Checks that the target exists and finds the assets whose scope governs it. */
export async function resolveTarget(q: Queryable, target: AnnotationTarget): Promise<ResolvedTarget> {
  if ('attributes' in target) {
    const ids = [...new Set(target.attributes)];
    const { rows } = await q.query<{ attribute_id: string; asset_id: string }>(
      'SELECT attribute_id, asset_id FROM attribute_version WHERE attribute_id = ANY($1::uuid[]) AND tx_to IS NULL', [sqlTextArray(ids)]);
    const assetOf = new Map<string, string | null>(rows.map((r) => [r.attribute_id, r.asset_id]));
    const missing = ids.find((id) => !assetOf.has(id));
    if (missing) throw invalid('target.attributes', `attribute ${missing} does not exist`);
    return { kind: 'attributes', ids, assetOf, scopeAssets: [...new Set(rows.map((r) => r.asset_id))] };
  }
  if ('asset' in target) {
    const { rows } = await q.query('SELECT 1 FROM asset_version WHERE asset_id = $1 AND tx_to IS NULL', [target.asset]);
    if (rows.length === 0) throw invalid('target.asset', `asset ${target.asset} does not exist`);
    return { kind: 'asset', ids: [target.asset], assetOf: new Map([[target.asset, target.asset]]), scopeAssets: [target.asset] };
  }
  const { rows } = await q.query<{ asset_id: string | null }>(
    `SELECT ea.asset_id FROM episode_version e LEFT JOIN episode_asset ea ON ea.episode_id = e.episode_id
      WHERE e.episode_id = $1 AND e.tx_to IS NULL`, [target.episode]);
  if (rows.length === 0) throw invalid('target.episode', `episode ${target.episode} does not exist`);
  const assets = [...new Set(rows.flatMap((r) => (r.asset_id ? [r.asset_id] : [])))];
  return { kind: 'episode', ids: [target.episode], assetOf: new Map([[target.episode, null]]), scopeAssets: assets };
}

async function tagIds(q: Queryable, names: string[]): Promise<string[]> {
  const wanted = [...new Set(names)];
  if (wanted.length === 0) return [];
  const { rows } = await q.query<{ entry_id: string; name: string }>(
    `SELECT entry_id, name FROM registry_entry_version WHERE kind = 'annotation-tags' AND tx_to IS NULL AND name = ANY($1::text[])`, [sqlTextArray(wanted)]);
  const missing = wanted.find((n) => !rows.some((r) => r.name === n));
  if (missing !== undefined) throw invalid('tags', `'${missing}' is not in the annotation-tags registry`);
  return rows.map((r) => r.entry_id);
}

/** Attachments a version may use: the actor's own uploads, or those the annotation already uses. */
async function checkAttachments(q: Queryable, ids: string[], actor: Actor, annotationId: string): Promise<string[]> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return [];
  const { rows } = await q.query<{ attachment_id: string; redacted: boolean; mine: boolean; used: boolean }>(
    `SELECT t.attachment_id, t.redacted_ns IS NOT NULL AS redacted, t.uploaded_by_id = $2 AS mine,
            EXISTS (SELECT 1 FROM annotation_uses_attachment u WHERE u.attachment_id = t.attachment_id AND u.annotation_id = $3) AS used
       FROM annotation_attachment t WHERE t.attachment_id = ANY($1::uuid[])`, [sqlTextArray(wanted), actor.principalId, annotationId]);
  for (const id of wanted) {
    const r = rows.find((x) => x.attachment_id === id);
    if (!r || !(r.mine || r.used)) throw invalid('attachment_ids', `attachment ${id} does not exist or was uploaded by someone else`);
    if (r.redacted) throw invalid('attachment_ids', `attachment ${id} was redacted`);
  }
  return wanted;
}

function checkRange(c: AnnotationContent): void {
  if (c.endNs < c.startNs) throw invalid('end_ns', 'must not be before start_ns');
}

/** Writes the rows every version rewrites: targets, span class, attachments used. */
async function writeCurrentRows(tx: Queryable, id: string, t: ResolvedTarget, c: AnnotationContent, attachments: string[]): Promise<void> {
  await tx.query('DELETE FROM annotation_target WHERE annotation_id = $1', [id]);
  await tx.query('DELETE FROM annotation_uses_attachment WHERE annotation_id = $1', [id]);
  const cls = spanClass(c.startNs, c.endNs);
  await tx.query('INSERT INTO annotation_span_class (span_class) VALUES ($1) ON CONFLICT DO NOTHING', [cls]);
  await tx.query(
    `INSERT INTO annotation_target (target_id, span_class, start_ns, annotation_id, end_ns, asset_id)
     SELECT u.target, $2, $3, $1, $4, u.asset FROM unnest($5::uuid[], $6::uuid[]) AS u(target, asset)`,
    [id, cls, c.startNs, c.endNs, sqlTextArray(t.ids), sqlTextArray(t.ids.map((x) => t.assetOf.get(x) ?? null))]);
  if (attachments.length > 0) {
    await tx.query('INSERT INTO annotation_uses_attachment (attachment_id, annotation_id) SELECT unnest($2::uuid[]), $1', [id, sqlTextArray(attachments)]);
  }
}

const versionContent = (t: ResolvedTarget, c: AnnotationContent, attachments: string[]) => ({
  target: targetOf(t.kind, t.ids), start_ns: c.startNs, end_ns: c.endNs, text: c.text, tags: [...new Set(c.tags)].sort(), attachment_ids: attachments,
});

export async function createAnnotation(db: Db, actor: Actor, t: ResolvedTarget, c: AnnotationContent): Promise<string> {
  checkRange(c);
  const id = randomUUID();
  await modelTransaction(db, { principal: actor.principal, reason: actor.reason }, async (tx, txId, events) => {
    const tags = await tagIds(tx, c.tags);
    const attachments = await checkAttachments(tx, c.attachmentIds, actor, id);
    const now = nowNs();
    await tx.query(
      `INSERT INTO annotation (annotation_id, version, target_kind, target_ids, scope_asset_ids, start_ns, end_ns, text, tag_ids,
         author, author_id, created_ns, updated_ns, updated_by, tx_id, search)
       VALUES ($1, 1, $2, $3::uuid[], $4::uuid[], $5, $6, $7, $8::uuid[], $9, $10, $11, $11, $9, $12, to_tsvector('english', $7))`,
      [id, t.kind, sqlTextArray(t.ids), sqlTextArray(t.scopeAssets), c.startNs, c.endNs, c.text, sqlTextArray(tags), actor.principal, actor.principalId, now, txId]);
    await writeCurrentRows(tx, id, t, c, attachments);
    await tx.query(
      'INSERT INTO annotation_version (annotation_id, version, tx_id, principal, committed_ns, reason, content) VALUES ($1, 1, $2, $3, $4, $5, $6::jsonb)',
      [id, txId, actor.principal, now, actor.reason, jsonbParam(versionContent(t, c, attachments))]);
    events.emit('annotation', id, 'create', { version: 1 });
  });
  return id;
}

/** A new version; 409 when `expectedVersion` is not the current one or the annotation was redacted. */
export async function updateAnnotation(db: Db, actor: Actor, id: string, expectedVersion: number, t: ResolvedTarget, c: AnnotationContent): Promise<void> {
  checkRange(c);
  await modelTransaction(db, { principal: actor.principal, reason: actor.reason }, async (tx, txId, events) => {
    const { rows } = await tx.query<{ version: number; redacted: boolean }>(
      'SELECT version, redacted_ns IS NOT NULL AS redacted FROM annotation WHERE annotation_id = $1 FOR UPDATE', [id]);
    if (rows.length === 0) throw notFound(`annotation ${id}`);
    if (rows[0].redacted) throw new ServiceError('conflict', `annotation ${id} was redacted; it cannot be edited`, { state: 'redacted' });
    const current = Number(rows[0].version);
    if (current !== expectedVersion) {
      throw new ServiceError('conflict', `annotation ${id} is at version ${current}, not ${expectedVersion}; read it again and reapply the edit`, { current_version: current, expected_version: expectedVersion });
    }
    const tags = await tagIds(tx, c.tags);
    const attachments = await checkAttachments(tx, c.attachmentIds, actor, id);
    const now = nowNs();
    const version = current + 1;
    await tx.query(
      `UPDATE annotation SET version = $2, target_kind = $3, target_ids = $4::uuid[], scope_asset_ids = $5::uuid[], start_ns = $6, end_ns = $7,
         text = $8, tag_ids = $9::uuid[], updated_ns = $10, updated_by = $11, tx_id = $12, search = to_tsvector('english', $8)
       WHERE annotation_id = $1`,
      [id, version, t.kind, sqlTextArray(t.ids), sqlTextArray(t.scopeAssets), c.startNs, c.endNs, c.text, sqlTextArray(tags), now, actor.principal, txId]);
    await writeCurrentRows(tx, id, t, c, attachments);
    await tx.query(
      'INSERT INTO annotation_version (annotation_id, version, tx_id, principal, committed_ns, reason, content) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)',
      [id, version, txId, actor.principal, now, actor.reason, jsonbParam(versionContent(t, c, attachments))]);
    events.emit('annotation', id, 'update', { version });
  });
}

/**
 * Redaction: the text of the annotation and every version's content are overwritten with
 * NULL and the attachments it ever used lose their bytes (`unlink` is the attachment
 * store's); the row keeps the fact, the times, who redacted it and why. Returns the
 * SHA-256 of every attachment whose bytes must go (after the commit).
 */
export async function redactAnnotation(db: Db, actor: Actor, id: string): Promise<string[]> {
  const out = await modelTransaction(db, { principal: actor.principal, reason: actor.reason }, async (tx, txId, events) => {
    const { rows } = await tx.query<{ redacted: boolean }>('SELECT redacted_ns IS NOT NULL AS redacted FROM annotation WHERE annotation_id = $1 FOR UPDATE', [id]);
    if (rows.length === 0) throw notFound(`annotation ${id}`);
    if (rows[0].redacted) throw new ServiceError('conflict', `annotation ${id} is already redacted`, { state: 'redacted' });
    // every attachment any version used: the versions' content names them
    const { rows: used } = await tx.query<{ attachment_id: string }>(
      `SELECT DISTINCT jsonb_array_elements_text(content->'attachment_ids') AS attachment_id FROM annotation_version WHERE annotation_id = $1 AND content IS NOT NULL`, [id]);
    const attachmentIds = used.map((r) => r.attachment_id);
    const now = nowNs();
    await tx.query(
      `UPDATE annotation SET text = NULL, search = NULL, tag_ids = '{}', redacted_ns = $2, redacted_by = $3, redaction_reason = $4, tx_id = $5, updated_ns = $2, updated_by = $3
        WHERE annotation_id = $1`, [id, now, actor.principal, actor.reason, txId]);
    await tx.query('UPDATE annotation_version SET content = NULL WHERE annotation_id = $1', [id]);
    // The same bytes uploaded twice are one file: redacting them removes them for every upload.
    const { rows: shas } = await tx.query<{ sha256: string }>(
      `UPDATE annotation_attachment SET redacted_ns = $2, filename = NULL
        WHERE sha256 IN (SELECT sha256 FROM annotation_attachment WHERE attachment_id = ANY($1::uuid[])) RETURNING sha256`,
      [sqlTextArray(attachmentIds), now]);
    events.emit('annotation', id, 'redact', { reason: actor.reason });
    return [...new Set(shas.map((r) => r.sha256))];
  });
  return out.result;
}

interface AnnotationRow {
  annotation_id: string; version: number; target_kind: TargetKind; target_ids: string[]; scope_asset_ids: string[];
  start_ns: bigint; end_ns: bigint; text: string | null; tags: string[]; attachments: Array<Omit<AttachmentView, 'size_bytes'> & { size_bytes: number | bigint }>;
  author: string; created_ns: bigint; updated_ns: bigint; updated_by: string; tx_id: bigint;
  redacted_ns: bigint | null; redacted_by: string | null; redaction_reason: string | null;
}

/** The select list that makes an AnnotationView (arrays as JSON: one decoding on both backends). */
export const VIEW_COLUMNS = `a.annotation_id, a.version, a.target_kind, to_jsonb(a.target_ids) AS target_ids, to_jsonb(a.scope_asset_ids) AS scope_asset_ids,
  a.start_ns, a.end_ns, a.text, a.author, a.created_ns, a.updated_ns, a.updated_by, a.tx_id, a.redacted_ns, a.redacted_by, a.redaction_reason,
  (SELECT COALESCE(jsonb_agg(r.name ORDER BY r.name), '[]'::jsonb) FROM registry_entry_version r
    WHERE r.entry_id = ANY(a.tag_ids) AND r.tx_to IS NULL AND r.kind = 'annotation-tags') AS tags,
  (SELECT COALESCE(jsonb_agg(jsonb_build_object('attachment_id', t.attachment_id, 'sha256', t.sha256, 'content_type', t.content_type,
      'size_bytes', t.size_bytes, 'filename', t.filename, 'redacted', t.redacted_ns IS NOT NULL) ORDER BY t.uploaded_ns, t.attachment_id), '[]'::jsonb)
    FROM annotation_uses_attachment u JOIN annotation_attachment t ON t.attachment_id = u.attachment_id WHERE u.annotation_id = a.annotation_id) AS attachments`;

export function toView(r: AnnotationRow): AnnotationView {
  return {
    annotation_id: r.annotation_id, version: Number(r.version), target: targetOf(r.target_kind, r.target_ids),
    start_ns: r.start_ns, end_ns: r.end_ns, text: r.text, tags: r.tags,
    attachments: r.attachments.map((x) => ({ ...x, size_bytes: BigInt(x.size_bytes) })),
    author: r.author, created_ns: r.created_ns, updated_ns: r.updated_ns, updated_by: r.updated_by, tx_id: r.tx_id,
    redacted: r.redacted_ns === null ? null : { redacted_ns: r.redacted_ns, redacted_by: r.redacted_by ?? '', reason: r.redaction_reason ?? '' },
    scopeAssets: r.scope_asset_ids,
  };
}

export async function viewsOf(q: Queryable, ids: string[]): Promise<AnnotationView[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<AnnotationRow>(`SELECT ${VIEW_COLUMNS} FROM annotation a WHERE a.annotation_id = ANY($1::uuid[])`, [sqlTextArray(ids)]);
  const byId = new Map(rows.map((r) => [r.annotation_id, toView(r)]));
  return ids.flatMap((id) => (byId.has(id) ? [byId.get(id) as AnnotationView] : []));
}

export async function getAnnotation(q: Queryable, id: string): Promise<AnnotationView> {
  const [v] = await viewsOf(q, [id]);
  if (!v) throw notFound(`annotation ${id}`);
  return v;
}

export interface VersionView {
  version: number; tx_id: bigint; principal: string; committed_ns: bigint; reason: string;
  /** null once redacted */
  content: null | { target: AnnotationTarget; start_ns: bigint; end_ns: bigint; text: string; tags: string[]; attachment_ids: string[] };
}

export async function versionsOf(q: Queryable, id: string): Promise<VersionView[]> {
  const { rows } = await q.query<VersionView>(
    'SELECT version, tx_id, principal, committed_ns, reason, content FROM annotation_version WHERE annotation_id = $1 ORDER BY version', [id]);
  return rows.map((r) => ({ ...r, version: Number(r.version), content: r.content === null ? null : { ...r.content, start_ns: BigInt(r.content.start_ns), end_ns: BigInt(r.content.end_ns) } }));
}
