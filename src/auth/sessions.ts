// Server-side human sessions. The cookie carries "<session id>.<secret>" and the row
// keeps only SHA-256(secret) (credentials.ts). A session ends at the first of: its
// absolute expiry (set at login), idle expiry (last_seen + idle timeout), revocation.
// last_seen_ns is written back lazily (at most once per TOUCH_INTERVAL) so that
// authenticating a request does not cost a database write.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../model/db.js';
import { mintSessionCookie } from './credentials.js';
import { nowNs } from '../clock.js';

export interface SessionPolicy {
  /** A session unused this long ends (ns). */
  idleNs: bigint;
  /** A session ends this long after login whatever its use (ns). */
  absoluteNs: bigint;
}

/** An 8-hour idle limit covers a control-room shift; re-login at least daily. */
export const DEFAULT_SESSION_POLICY: SessionPolicy = {
  idleNs: 8n * 3600n * 1_000_000_000n,
  absoluteNs: 24n * 3600n * 1_000_000_000n,
};

export interface SessionRow {
  session_id: string;
  principal_id: string;
  secret_hash: Buffer;
  method: string;
  remote_address: string;
  user_agent: string;
  created_ns: bigint;
  last_seen_ns: bigint;
  expires_ns: bigint;
  revoked_ns: bigint | null;
  revoked_by: string | null;
}

const COLUMNS = 'session_id, principal_id, secret_hash, method, remote_address, user_agent, created_ns, last_seen_ns, expires_ns, revoked_ns, revoked_by';

/** When the session ends if nothing else happens: the earlier of idle and absolute expiry. */
export function sessionEndsNs(s: { last_seen_ns: bigint; expires_ns: bigint }, policy: SessionPolicy): bigint {
  const idle = s.last_seen_ns + policy.idleNs;
  return idle < s.expires_ns ? idle : s.expires_ns;
}

/** Opens a new session (a fresh id at every login, so a planted id is never promoted). Returns the cookie value. */
export async function openSession(
  q: Queryable, policy: SessionPolicy,
  input: { principalId: string; method: 'local' | 'oidc'; remoteAddress: string; userAgent: string },
): Promise<{ row: SessionRow; cookieValue: string }> {
  const id = randomUUID();
  const minted = mintSessionCookie(id);
  const t = nowNs();
  const { rows } = await q.query<SessionRow>(
    `INSERT INTO auth_session (session_id, principal_id, secret_hash, method, remote_address, user_agent, created_ns, last_seen_ns, expires_ns)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING ${COLUMNS}`,
    [id, input.principalId, minted.secretHash, input.method, input.remoteAddress, input.userAgent.slice(0, 512), t, t + policy.absoluteNs],
  );
  return { row: rows[0], cookieValue: minted.plaintext };
}

export async function getSession(q: Queryable, id: string): Promise<SessionRow | null> {
  return (await q.query<SessionRow>(`SELECT ${COLUMNS} FROM auth_session WHERE session_id = $1`, [id])).rows[0] ?? null;
}

export async function touchSession(q: Queryable, id: string, lastSeenNs: bigint): Promise<void> {
  await q.query('UPDATE auth_session SET last_seen_ns = greatest(last_seen_ns, $2) WHERE session_id = $1', [id, lastSeenNs]);
}

/** Revokes one session; false when it did not exist or had already ended. */
export async function revokeSession(q: Queryable, id: string, by: string): Promise<boolean> {
  const r = await q.query('UPDATE auth_session SET revoked_ns = $2, revoked_by = $3 WHERE session_id = $1 AND revoked_ns IS NULL', [id, nowNs(), by]);
  return r.rowCount > 0;
}

/** Live sessions (not revoked, not expired), newest first, keyset-paged on (created_ns, id). */
export async function listLiveSessions(
  q: Queryable, policy: SessionPolicy,
  opts: { principalId?: string; before?: { createdNs: bigint; id: string }; limit: number },
): Promise<Array<SessionRow & { subject: string }>> {
  const t = nowNs();
  const params: unknown[] = [t, policy.idleNs, opts.limit];
  const where = ['s.revoked_ns IS NULL', 's.expires_ns > $1', 's.last_seen_ns + $2 > $1'];
  if (opts.principalId) { params.push(opts.principalId); where.push(`s.principal_id = $${params.length}`); }
  if (opts.before) {
    params.push(opts.before.createdNs, opts.before.id);
    where.push(`(s.created_ns, s.session_id) < ($${params.length - 1}, $${params.length}::uuid)`);
  }
  const sql = `SELECT ${COLUMNS.split(', ').map((c) => 's.' + c).join(', ')}, p.subject
    FROM auth_session s JOIN auth_principal p ON p.principal_id = s.principal_id
    WHERE ${where.join(' AND ')} ORDER BY s.created_ns DESC, s.session_id DESC LIMIT $3`;
  return (await q.query<SessionRow & { subject: string }>(sql, params as never[])).rows;
}

export function sessionView(s: SessionRow & { subject: string }, policy: SessionPolicy, currentId: string | undefined) {
  return {
    session_id: s.session_id,
    principal_id: s.principal_id,
    subject: s.subject,
    method: s.method,
    remote_address: s.remote_address,
    user_agent: s.user_agent,
    created_ns: s.created_ns,
    last_seen_ns: s.last_seen_ns,
    expires_ns: sessionEndsNs(s, policy),
    current: s.session_id === currentId,
  };
}
