// ID token (JWS compact) verification with node:crypto and the provider's JWKS. Only
// asymmetric algorithms are accepted: "none" and HMAC (which would make the client
// secret a signing key) are refused outright, so an attacker cannot pick the algorithm.
import { createPublicKey, verify, constants, type JsonWebKey, type KeyObject } from 'node:crypto';
import { ServiceError } from '../../errors.js';

export interface IdTokenClaims {
  iss: string;
  sub: string;
  aud: string | string[];
  exp: number;
  iat: number;
  nonce?: string;
  azp?: string;
  name?: string;
  preferred_username?: string;
  email?: string;
  [claim: string]: unknown;
}

interface Jwk extends JsonWebKey { kid?: string; use?: string; alg?: string }

const ALGORITHMS: Record<string, { hash: string | null; kty: string; pss?: boolean; ec?: boolean }> = {
  RS256: { hash: 'sha256', kty: 'RSA' }, RS384: { hash: 'sha384', kty: 'RSA' }, RS512: { hash: 'sha512', kty: 'RSA' },
  PS256: { hash: 'sha256', kty: 'RSA', pss: true }, PS384: { hash: 'sha384', kty: 'RSA', pss: true }, PS512: { hash: 'sha512', kty: 'RSA', pss: true },
  ES256: { hash: 'sha256', kty: 'EC', ec: true }, ES384: { hash: 'sha384', kty: 'EC', ec: true }, ES512: { hash: 'sha512', kty: 'EC', ec: true },
  EdDSA: { hash: null, kty: 'OKP' },
};

/** Clock skew tolerated between us and the provider. */
const SKEW_S = 60;

const reject = (why: string) => new ServiceError('unauthenticated', `OIDC login failed: ${why}`);

function decodePart(part: string, what: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch { /* fall through */ }
  throw reject(`the id_token ${what} is not a JSON object`);
}

export class JwksCache {
  private keys: Jwk[] = [];
  private fetchedMs = 0;

  constructor(private readonly load: () => Promise<Jwk[]>) {}

  /** The key for kid; refetches once when the kid is unknown (provider rotated keys). */
  async key(kid: string | undefined, kty: string): Promise<KeyObject> {
    let k = this.find(kid, kty);
    if (!k && Date.now() - this.fetchedMs > 10_000) {
      this.keys = await this.load();
      this.fetchedMs = Date.now();
      k = this.find(kid, kty);
    }
    if (!k) throw reject(`no signing key ${kid ?? '(no kid)'} in the provider's key set`);
    return createPublicKey({ key: k, format: 'jwk' });
  }

  private find(kid: string | undefined, kty: string): Jwk | undefined {
    const usable = this.keys.filter((k) => k.kty === kty && (k.use === undefined || k.use === 'sig'));
    return kid === undefined ? (usable.length === 1 ? usable[0] : undefined) : usable.find((k) => k.kid === kid);
  }
}

export async function verifyIdToken(
  jwt: string, jwks: JwksCache, expect: { issuer: string; clientId: string; nonce: string; nowS?: number },
): Promise<IdTokenClaims> {
  const parts = jwt.split('.');
  if (parts.length !== 3) throw reject('the id_token is not a signed JWT');
  const header = decodePart(parts[0], 'header');
  const alg = typeof header.alg === 'string' ? header.alg : '';
  const spec = Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg] : undefined;
  if (!spec) throw reject(`signature algorithm "${alg}" is not accepted`);
  const key = await jwks.key(typeof header.kid === 'string' ? header.kid : undefined, spec.kty);
  const data = Buffer.from(`${parts[0]}.${parts[1]}`);
  const sig = Buffer.from(parts[2], 'base64url');
  const ok = spec.pss
    ? verify(spec.hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, sig)
    : spec.ec ? verify(spec.hash, data, { key, dsaEncoding: 'ieee-p1363' }, sig)
      : verify(spec.hash, data, key, sig);
  if (!ok) throw reject('the id_token signature does not verify');

  const c = decodePart(parts[1], 'payload') as Partial<IdTokenClaims>;
  const now = expect.nowS ?? Math.floor(Date.now() / 1000);
  if (c.iss !== expect.issuer) throw reject('the id_token was issued by another issuer');
  const aud = Array.isArray(c.aud) ? c.aud : [c.aud];
  if (!aud.includes(expect.clientId)) throw reject('the id_token is meant for another client');
  if (aud.length > 1 && c.azp !== undefined && c.azp !== expect.clientId) throw reject('the id_token azp names another client');
  if (typeof c.exp !== 'number' || c.exp + SKEW_S < now) throw reject('the id_token has expired');
  if (typeof c.iat !== 'number' || c.iat - SKEW_S > now) throw reject('the id_token is issued in the future');
  if (c.nonce !== expect.nonce) throw reject('the id_token nonce does not match this login');
  if (typeof c.sub !== 'string' || c.sub === '') throw reject('the id_token has no subject');
  return c as IdTokenClaims;
}
