// Credential formats (service tokens, session cookies) and the login throttle, as pure
// units. Parsers get fast-check properties with a fixed, printed seed.
import t from 'tap';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import {
  mintServiceToken, parseServiceToken, mintSessionCookie, parseSessionCookie, secretMatches, sessionCookieFrom,
} from '../../src/auth/credentials.js';
import { LoginThrottle } from '../../src/auth/login-throttle.js';
import { parseHash } from '../../src/auth/password.js';

const SEED = 20261121;
t.comment(`fast-check seed ${SEED}`);

t.test('a minted token parses back to its id and its secret matches only its own hash', async (t) => {
  fc.assert(fc.property(fc.uuid({ version: 4 }), (id) => {
    const a = mintServiceToken(id);
    const b = mintServiceToken(id);
    const pa = parseServiceToken(a.plaintext);
    if (!pa || pa.id !== id) return false;
    return a.plaintext.startsWith('svc_') && a.plaintext.length === 80 && secretMatches(pa.secret, a.secretHash) && !secretMatches(pa.secret, b.secretHash);
  }), { seed: SEED, numRuns: 200 });
  t.pass('round trip holds');
});

t.test('a minted session cookie parses back and differs at every mint', async (t) => {
  const id = randomUUID();
  const a = mintSessionCookie(id);
  const b = mintSessionCookie(id);
  t.not(a.plaintext, b.plaintext);
  t.equal(parseSessionCookie(a.plaintext)?.id, id);
  t.equal(sessionCookieFrom(`theme=dark; service_session=${a.plaintext}; x=1`), a.plaintext);
  t.equal(sessionCookieFrom('theme=dark'), undefined);
});

t.test('arbitrary strings never throw and never parse unless they have the exact shape', async (t) => {
  fc.assert(fc.property(fc.string({ maxLength: 120 }), (s) => {
    const tok = parseServiceToken(s);
    const ck = parseSessionCookie(s);
    const tokOk = tok === null || /^svc_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/.test(s);
    const ckOk = ck === null || /^[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/.test(s);
    return tokOk && ckOk;
  }), { seed: SEED, numRuns: 2000 });
  t.equal(parseServiceToken('svc_' + 'g'.repeat(32) + '_' + 'a'.repeat(43)), null);
  t.pass('no crash, no false parse');
});

t.test('stored password hashes with absurd parameters are refused rather than run', async (t) => {
  t.equal(parseHash('scrypt$40$8$1$AAAA$AAAA'), null, 'N=2^40 would exhaust memory');
  t.equal(parseHash('bcrypt$x'), null);
  t.ok(parseHash('scrypt$16$8$1$AAAA$AAAA'));
});

t.test('the throttle lets five failures through, then doubles the wait; success clears it', async (t) => {
  let now = 1_000_000;
  const th = new LoginThrottle(() => now);
  for (let i = 0; i < 4; i++) { th.recordFailure('Ann', '10.0.0.1'); t.equal(th.retryAfterMs('ann', '10.0.0.1'), 0); }
  th.recordFailure('ann', '10.0.0.1');
  t.equal(th.retryAfterMs('ANN', '10.0.0.1'), 1000, 'usernames are compared case-insensitively');
  t.equal(th.retryAfterMs('ann', '10.0.0.2'), 0, 'another address is not affected');
  now += 1000;
  th.recordFailure('ann', '10.0.0.1');
  t.equal(th.retryAfterMs('ann', '10.0.0.1'), 2000);
  th.recordSuccess('ann', '10.0.0.1');
  t.equal(th.retryAfterMs('ann', '10.0.0.1'), 0);
});
