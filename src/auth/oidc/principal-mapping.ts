// Maps a verified OIDC identity (issuer + sub) to a principal. The first login creates
// a person principal with the configured default role granted everywhere; later logins
// find it by (issuer, sub), never by name, so a renamed or reused username at the
// provider cannot take over someone else's principal.
import { createHash } from 'node:crypto';
import type { Db } from '../../model/db.js';
import { modelTransaction } from '../../model/tx-log.js';
import { createUser, findOidcUser, findUser, type PrincipalRow } from '../principals.js';
import { createGrant } from '../grants.js';
import type { IdTokenClaims } from './id-token.js';

const USERNAME_MAX = 128;

export async function principalForOidc(db: Db, claims: IdTokenClaims, defaultRole: string): Promise<{ row: PrincipalRow; created: boolean }> {
  const existing = await findOidcUser(db, claims.iss, claims.sub);
  if (existing) return { row: existing, created: false };
  const wanted = (claims.preferred_username ?? claims.email ?? claims.sub).slice(0, USERNAME_MAX);
  // A local user may already own the name: the OIDC person gets a suffixed one instead.
  const username = (await findUser(db, wanted)) ? `${wanted.slice(0, USERNAME_MAX - 9)}-${createHash('sha256').update(`${claims.iss}|${claims.sub}`).digest('hex').slice(0, 8)}` : wanted;
  const display = typeof claims.name === 'string' && claims.name ? claims.name : wanted;
  const { result } = await modelTransaction(db, { principal: username, reason: 'first OIDC login' }, async (tx, txId, events) => {
    const row = await createUser(tx, txId, events, { username, passwordHash: null, display, oidc: { issuer: claims.iss, subject: claims.sub } });
    const role = await tx.query<{ role_id: string }>('SELECT role_id FROM auth_role WHERE lower(name) = lower($1) AND NOT retired', [defaultRole]);
    if (role.rows[0]) await createGrant(tx, txId, events, { principalId: row.principal_id, roleId: role.rows[0].role_id, scope: { kind: 'everywhere' } });
    return row;
  });
  return { row: result, created: true };
}
