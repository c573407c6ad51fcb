// The bootstrap administrator (ARCHITECTURE "Configuration"): on a start with no
// principals at all, create principal `admin` holding the administrator role
// everywhere. Its password is SERVICE_ADMIN_PASSWORD, or a generated one that is
// printed once on stderr (not through the logger: log lines are shipped and kept) and
// written to <data dir>/initial-admin-password with mode 0600.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Db } from '../model/db.js';
import type { AccessControl } from './access-types.js';
import { modelTransaction } from '../model/tx-log.js';
import { countPrincipals, createUser } from './principals.js';
import { createGrant } from './grants.js';
import { BUILTIN_ROLES } from './roles.js';
import { authOf } from './access-control.js';

export const BOOTSTRAP_USERNAME = 'admin';
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

export interface BootstrapResult {
  created: boolean;
  /** Where the generated password was written, when one was generated. */
  passwordFile?: string;
}

export async function bootstrapAdmin(service: { db: Db; config: Config; log: Logger; access: AccessControl }, print: (line: string) => void = (l) => process.stderr.write(l)): Promise<BootstrapResult> {
  const { db, config, log } = service;
  if (await countPrincipals(db) > 0) return { created: false };
  const auth = authOf(service);
  const generated = config.adminPassword === undefined;
  const password = config.adminPassword ?? randomBytes(18).toString('base64url');
  const hash = await auth.hasher.hash(password);
  const { result } = await modelTransaction(db, { principal: 'bootstrap', reason: 'first start: bootstrap administrator' }, async (tx, txId, events) => {
    // Re-checked inside the transaction: two processes starting together create one admin.
    await tx.query('LOCK TABLE auth_principal IN EXCLUSIVE MODE');
    if (await countPrincipals(tx) > 0) return null;
    const row = await createUser(tx, txId, events, { username: BOOTSTRAP_USERNAME, passwordHash: hash, display: 'Administrator' });
    await createGrant(tx, txId, events, { principalId: row.principal_id, roleId: BUILTIN_ROLES.administrator.id, scope: { kind: 'everywhere' } });
    return row;
  });
  if (!result) return { created: false };
  auth.invalidate();
  log.info({ principal_id: result.principal_id, subject: BOOTSTRAP_USERNAME, password_source: generated ? 'generated' : 'SERVICE_ADMIN_PASSWORD' }, 'bootstrap administrator created');
  if (!generated) return { created: true };
  await mkdir(config.dataDir, { recursive: true });
  const file = join(config.dataDir, INITIAL_PASSWORD_FILE);
  await writeFile(file, password + '\n', { mode: 0o600 });
  await chmod(file, 0o600); // mode above applies only when the file is new
  print(`\nBootstrap administrator "${BOOTSTRAP_USERNAME}" created with password: ${password}\n(also written to ${file}; change it with POST /v1/auth/principals/${result.principal_id}/password\n {"current_password": ..., "new_password": ...} after logging in (README: The first hour), then delete the file)\n\n`);
  return { created: true, passwordFile: file };
}
