// Principals: people (kind 'user', local password or OIDC) and service identities
// (kinds 'integration', 'collector'). The Principal shape sent to clients never carries
// credentials: principalView() is the only way a row leaves this module over HTTP.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../model/db.js';
import type { EventSink } from '../model/tx-log.js';
import { ServiceError, notFound } from '../errors.js';
import { nowNs } from '../clock.js';

export const SERVICE_KINDS = ['integration', 'collector'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];

export interface PrincipalRow {
  principal_id: string;
  kind: string;
  subject: string;
  display: string;
  disabled: boolean;
  password_hash: string | null;
  oidc_issuer: string | null;
  oidc_subject: string | null;
  valid_from_ns: bigint;
  valid_to_ns: bigint | null;
  tx_id: bigint;
}

const COLUMNS = 'principal_id, kind, subject, display, disabled, password_hash, oidc_issuer, oidc_subject, valid_from_ns, valid_to_ns, tx_id';

export function principalView(p: PrincipalRow) {
  return {
    principal_id: p.principal_id,
    kind: p.kind,
    subject: p.subject,
    display: p.display,
    disabled: p.disabled,
    valid_from_ns: p.valid_from_ns,
    valid_to_ns: p.valid_to_ns,
    tx_id: p.tx_id,
  };
}

export async function getPrincipal(q: Queryable, id: string): Promise<PrincipalRow | null> {
  return (await q.query<PrincipalRow>(`SELECT ${COLUMNS} FROM auth_principal WHERE principal_id = $1`, [id])).rows[0] ?? null;
}

export async function findUser(q: Queryable, username: string): Promise<PrincipalRow | null> {
  return (await q.query<PrincipalRow>(`SELECT ${COLUMNS} FROM auth_principal WHERE kind = 'user' AND lower(subject) = lower($1)`, [username])).rows[0] ?? null;
}

export async function countPrincipals(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ n: bigint }>('SELECT count(*)::int8 AS n FROM auth_principal');
  return Number(rows[0].n);
}

/** Keyset page over principals ordered by (subject, id); kind filters people or one service kind. */
export async function listPrincipals(
  q: Queryable, opts: { after?: { subject: string; id: string }; limit: number; kinds?: readonly string[] },
): Promise<PrincipalRow[]> {
  const params: unknown[] = [opts.limit];
  const where: string[] = [];
  if (opts.after) { params.push(opts.after.subject, opts.after.id); where.push(`(subject, principal_id) > ($2, $3::uuid)`); }
  if (opts.kinds) { params.push(opts.kinds); where.push(`kind IN (SELECT jsonb_array_elements_text($${params.length}::jsonb))`); }
  const sql = `SELECT ${COLUMNS} FROM auth_principal ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
    ORDER BY subject, principal_id LIMIT $1`;
  return (await q.query<PrincipalRow>(sql, params as never[])).rows;
}

export async function createUser(
  tx: Queryable, txId: bigint, events: EventSink,
  input: { username: string; passwordHash: string | null; display?: string; oidc?: { issuer: string; subject: string } },
): Promise<PrincipalRow> {
  if (await findUser(tx, input.username)) {
    throw new ServiceError('name-conflict', `username "${input.username}" already exists`, { username: input.username });
  }
  const id = randomUUID();
  const { rows } = await tx.query<PrincipalRow>(
    `INSERT INTO auth_principal (principal_id, kind, subject, display, password_hash, oidc_issuer, oidc_subject, valid_from_ns, tx_id)
     VALUES ($1, 'user', $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [id, input.username, input.display ?? input.username, input.passwordHash, input.oidc?.issuer ?? null, input.oidc?.subject ?? null, nowNs(), txId],
  );
  events.emit('principal', id, 'created', { kind: 'user', subject: input.username, method: input.oidc ? 'oidc' : 'local' });
  return rows[0];
}

export async function createServiceIdentity(
  tx: Queryable, txId: bigint, events: EventSink,
  input: { name: string; kind: string; display?: string },
): Promise<PrincipalRow> {
  const taken = await tx.query(`SELECT 1 FROM auth_principal WHERE kind <> 'user' AND subject = $1`, [input.name]);
  if (taken.rows.length > 0) throw new ServiceError('name-conflict', `a service identity named "${input.name}" already exists`, { name: input.name });
  const id = randomUUID();
  const { rows } = await tx.query<PrincipalRow>(
    `INSERT INTO auth_principal (principal_id, kind, subject, display, valid_from_ns, tx_id)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [id, input.kind, input.name, input.display ?? input.name, nowNs(), txId],
  );
  events.emit('principal', id, 'created', { kind: input.kind, subject: input.name });
  return rows[0];
}

export async function findOidcUser(q: Queryable, issuer: string, subject: string): Promise<PrincipalRow | null> {
  return (await q.query<PrincipalRow>(`SELECT ${COLUMNS} FROM auth_principal WHERE oidc_issuer = $1 AND oidc_subject = $2`, [issuer, subject])).rows[0] ?? null;
}

/**
 * Disables (or re-enables) a principal. Disabling revokes every open session and
 * every token of the principal in the same transaction, so nothing it held survives;
 * the caller must also drop the process caches (AuthAccessControl.invalidate).
 */
export async function setPrincipalDisabled(
  tx: Queryable, txId: bigint, events: EventSink, id: string, disabled: boolean, by: string,
): Promise<PrincipalRow> {
  const { rows } = await tx.query<PrincipalRow>(
    `UPDATE auth_principal SET disabled = $2, tx_id = $3 WHERE principal_id = $1 RETURNING ${COLUMNS}`, [id, disabled, txId]);
  if (!rows[0]) throw notFound('principal', { principal_id: id });
  if (disabled) {
    const t = nowNs();
    const s = await tx.query<{ session_id: string }>(
      'UPDATE auth_session SET revoked_ns = $2, revoked_by = $3 WHERE principal_id = $1 AND revoked_ns IS NULL RETURNING session_id', [id, t, by]);
    const k = await tx.query<{ token_id: string }>(
      'UPDATE auth_service_token SET revoked_ns = $2, tx_id = $3 WHERE principal_id = $1 AND revoked_ns IS NULL RETURNING token_id', [id, t, txId]);
    for (const r of s.rows) events.emit('session', r.session_id, 'revoked', { principal_id: id, cause: 'principal-disabled' });
    for (const r of k.rows) events.emit('service-token', r.token_id, 'revoked', { principal_id: id, cause: 'principal-disabled' });
  }
  events.emit('principal', id, disabled ? 'disabled' : 'enabled', {});
  return rows[0];
}

/**
 * Sets a person's local password (the hash only) and revokes the person's open sessions,
 * all but `keepSessionId` (the session of a person changing their own password), so a
 * session opened with the old password does not outlive it. Service identities have
 * tokens, not passwords.
 */
export async function setPrincipalPassword(
  tx: Queryable, txId: bigint, events: EventSink, id: string, passwordHash: string, keepSessionId: string | null, by: string,
): Promise<PrincipalRow> {
  const { rows } = await tx.query<PrincipalRow>(
    `UPDATE auth_principal SET password_hash = $2, tx_id = $3 WHERE principal_id = $1 AND kind = 'user' RETURNING ${COLUMNS}`, [id, passwordHash, txId]);
  if (!rows[0]) {
    if (await getPrincipal(tx, id)) throw new ServiceError('invalid-request', 'path.id: a service identity has tokens, not a password', { errors: [{ field: 'path.id', problem: 'names a service identity; only people have passwords' }] });
    throw notFound('principal', { principal_id: id });
  }
  const s = await tx.query<{ session_id: string }>(
    `UPDATE auth_session SET revoked_ns = $2, revoked_by = $3
      WHERE principal_id = $1 AND revoked_ns IS NULL AND session_id IS DISTINCT FROM $4::uuid RETURNING session_id`, [id, nowNs(), by, keepSessionId]);
  for (const r of s.rows) events.emit('session', r.session_id, 'revoked', { principal_id: id, cause: 'password-changed' });
  events.emit('principal', id, 'password-changed', { by });
  return rows[0];
}
