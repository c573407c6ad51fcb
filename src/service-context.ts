// Everything a route handler may reach, built once at start (src/main.ts) and torn
// down in reverse order at shutdown. Each part is owned by its own folder.
import type { Logger } from 'pino';
import type { Config } from './config/config.js';
import type { Db } from './model/db.js';
import type { AccessControl } from './auth/access-types.js';
import type { IdempotencyStore } from './model/idempotency-store.js';
import type { OperationsCatalogue } from './operations/catalogue.js';

export interface ServiceContext {
  config: Config;
  log: Logger;
  db: Db;
  access: AccessControl;
  idempotency: IdempotencyStore;
  operations: OperationsCatalogue;
  /** Parts that later areas attach (storage engine, read pool, ingest); each module adds its own key. */
  parts: ServiceParts;
}

/** Extended by areas through declaration merging: `declare module '../service-context.js' { interface ServiceParts { storage: SeriesStore } }`. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface ServiceParts {}
