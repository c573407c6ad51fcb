// Bearer tokens of service identities. The plaintext exists only in the 201 response
// of mintToken's caller; the row keeps SHA-256 of the secret part (credentials.ts).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../model/db.js';
import type { EventSink } from '../model/tx-log.js';
import { mintServiceToken } from './credentials.js';
import { ServiceError, notFound } from '../errors.js';
import { nowNs } from '../clock.js';

export interface TokenRow {
  token_id: string;
  principal_id: string;
  secret_hash: Buffer;
  comment: string;
  created_ns: bigint;
  expires_ns: bigint | null;
  revoked_ns: bigint | null;
  tx_id: bigint;
}

const COLUMNS = 'token_id, principal_id, secret_hash, comment, created_ns, expires_ns, revoked_ns, tx_id';

export async function getToken(q: Queryable, id: string): Promise<TokenRow | null> {
  return (await q.query<TokenRow>(`SELECT ${COLUMNS} FROM auth_service_token WHERE token_id = $1`, [id])).rows[0] ?? null;
}

export async function tokensOf(q: Queryable, principalIds: string[]): Promise<TokenRow[]> {
  if (principalIds.length === 0) return [];
  return (await q.query<TokenRow>(
    `SELECT ${COLUMNS} FROM auth_service_token WHERE principal_id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)
     ORDER BY created_ns, token_id`, [principalIds])).rows;
}

export async function mintToken(
  tx: Queryable, txId: bigint, events: EventSink,
  input: { principalId: string; comment: string; expiresNs: bigint | null },
): Promise<{ row: TokenRow; plaintext: string }> {
  const t = nowNs();
  if (input.expiresNs !== null && input.expiresNs <= t) {
    throw new ServiceError('invalid-request', 'expires_at_ns: must be in the future', { errors: [{ field: 'expires_at_ns', problem: 'must be in the future' }] });
  }
  const id = randomUUID();
  const minted = mintServiceToken(id);
  const { rows } = await tx.query<TokenRow>(
    `INSERT INTO auth_service_token (token_id, principal_id, secret_hash, comment, created_ns, expires_ns, tx_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [id, input.principalId, minted.secretHash, input.comment, t, input.expiresNs, txId],
  );
  events.emit('service-token', id, 'created', { principal_id: input.principalId, expires_at_ns: input.expiresNs?.toString() ?? null });
  return { row: rows[0], plaintext: minted.plaintext };
}

/** Revokes a token; revoking one that is already revoked is a no-op that still answers 200. */
export async function revokeToken(tx: Queryable, txId: bigint, events: EventSink, id: string): Promise<TokenRow> {
  const current = await getToken(tx, id);
  if (!current) throw notFound('service token', { token_id: id });
  if (current.revoked_ns !== null) return current;
  const { rows } = await tx.query<TokenRow>(
    `UPDATE auth_service_token SET revoked_ns = $2, tx_id = $3 WHERE token_id = $1 RETURNING ${COLUMNS}`, [id, nowNs(), txId]);
  events.emit('service-token', id, 'revoked', { principal_id: current.principal_id });
  return rows[0];
}

export function tokenView(t: TokenRow) {
  return {
    token_id: t.token_id,
    identity_id: t.principal_id,
    comment: t.comment,
    created_ns: t.created_ns,
    expires_at_ns: t.expires_ns,
    revoked_ns: t.revoked_ns,
    tx_id: t.tx_id,
  };
}
