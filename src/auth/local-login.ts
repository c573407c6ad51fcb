// Local (username + password) login. Order matters for the guarantees:
//   1. throttle check (429) before any hashing, so guessing costs us nothing;
//   2. exactly one scrypt verification whether or not the user exists (a dummy hash
//      stands in), so status, body and work are the same for both failures;
//   3. account-sealed only after the password was right, so a sealed account is only
//      revealed to someone who already knows its password.
import type { AuthAccessControl } from './access-control.js';
import type { PasswordHasher } from './password.js';
import type { LoginThrottle } from './login-throttle.js';
import { findUser, type PrincipalRow } from './principals.js';
import { openSession, type SessionRow } from './sessions.js';
import { ServiceError } from '../errors.js';

export interface LoginRequest {
  username: string;
  password: string;
  remoteAddress: string;
  userAgent: string;
  correlationId: string;
}

export interface LoginResult {
  principal: PrincipalRow;
  session: SessionRow;
  cookieValue: string;
}

export async function loginLocal(
  access: AuthAccessControl, hasher: PasswordHasher, throttle: LoginThrottle, req: LoginRequest,
): Promise<LoginResult> {
  const { log } = access;
  const audit = { correlation_id: req.correlationId, remote_address: req.remoteAddress, method: 'local' };
  const waitMs = throttle.retryAfterMs(req.username, req.remoteAddress);
  if (waitMs > 0) {
    log.warn({ ...audit, outcome: 'throttled' }, 'login refused: too many failures');
    const seconds = Math.ceil(waitMs / 1000);
    throw new ServiceError('too-many-requests', `too many failed logins; retry in ${seconds} s`, { retry_after_s: seconds }, { 'Retry-After': String(seconds) });
  }
  const user = await findUser(access.db, req.username);
  const ok = await hasher.verify(req.password, user?.password_hash ?? null);
  if (!ok || !user) {
    throttle.recordFailure(req.username, req.remoteAddress);
    // The username is logged only when it names a real principal: a password typed
    // into the username field must not end up in the log.
    log.warn({ ...audit, outcome: 'failure', principal_id: user?.principal_id, subject: user?.subject }, 'login failed');
    throw new ServiceError('invalid-credentials', 'the username or the password is wrong');
  }
  if (user.disabled) {
    log.warn({ ...audit, outcome: 'sealed', principal_id: user.principal_id, subject: user.subject }, 'login refused: account sealed');
    throw new ServiceError('account-sealed', 'the account is disabled');
  }
  throttle.recordSuccess(req.username, req.remoteAddress);
  const { row, cookieValue } = await openSession(access.db, access.sessionPolicy, {
    principalId: user.principal_id, method: 'local', remoteAddress: req.remoteAddress, userAgent: req.userAgent,
  });
  log.info({ ...audit, outcome: 'success', principal_id: user.principal_id, subject: user.subject, session_id: row.session_id }, 'login succeeded');
  return { principal: user, session: row, cookieValue };
}
