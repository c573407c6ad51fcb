// The principal the fuzz sends as: a service identity holding the built-in administrator
// role everywhere, so requests get past authorization to validation and the handlers.
// Its ids (and the bootstrap administrator's) are kept out of generated requests: a fuzz
// that revoked its own token or disabled the administrator would test nothing afterwards.
import { createServiceWithToken, grantRole, type Client } from '../../test/helpers/auth.js';

export interface FuzzPrincipal {
  authorization: string;
  protectedIds: Set<string>;
}

export async function fuzzPrincipal(admin: Client): Promise<FuzzPrincipal> {
  const { identityId, token, tokenId } = await createServiceWithToken(admin, 'hostile-input-fuzz', 'integration');
  const grantId = await grantRole(admin, identityId, 'administrator');
  const who = await admin('/v1/auth/whoami');
  const adminId = (who.json as { principal?: { principal_id?: string } }).principal?.principal_id;
  const sessions = await admin('/v1/auth/sessions');
  const sessionIds = ((sessions.json as { items?: Array<{ session_id?: string }> }).items ?? []).map((s) => s.session_id).filter((s): s is string => !!s);
  return {
    authorization: `Bearer ${token}`,
    protectedIds: new Set([identityId, tokenId, grantId, ...(adminId ? [adminId] : []), ...sessionIds]),
  };
}
