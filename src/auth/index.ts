// NOTE TO THE AUTH ENGINEER (from the lead): src/service.ts calls
//   createAccessControl({ db, config, log }): Promise<AccessControl>
// from this file at start, for every SERVICE_AUTH_MODE. Replace the body below with your
// AccessControl (enforced/shadow/disabled) and export bootstrapAdmin from here too; the
// lead will call `bootstrapAdmin(context)` after migrations. The pipeline already
// treats mode 'disabled' without calling authenticate/allows (src/http/server.ts).
import type { Logger } from 'pino';
import type { Db } from '../model/db.js';
import type { Config } from '../config.js';
import type { AccessControl } from './access-types.js';

export async function createAccessControl(deps: { db: Db; config: Config; log: Logger }): Promise<AccessControl> {
  if (deps.config.authMode !== 'disabled') throw new Error('the enforced and shadow postures are being wired in (src/auth)');
  return {
    mode: 'disabled',
    async authenticate() { return null; },
    async allows() { return true; },
    async holdsAnywhere() { return true; },
  };
}
