// Builds the running service from a Config: model database (migrated), access control,
// idempotency, operations, the HTTP front end; and tears it down in reverse order.
import type { Logger } from 'pino';
import type { Config } from './config/config.js';
import type { ServiceContext, ServiceParts } from './service-context.js';
import type { AccessControl } from './auth/access-types.js';
import { openDb, type Db } from './model/db.js';
import { migrate } from './model/migrate.js';
import { createIdempotencyStore } from './model/idempotency-store.js';
import { OperationsCatalogue } from './operations/catalogue.js';
import { startHttpServer, type HttpServer } from './http/server.js';
import { allRoutes } from './http/routes/index.js';
import { AssetModel } from './model/assets/asset-model.js';
import type { AnyRoute } from './http/route.js';
import { createAccessControl, bootstrapAdmin } from './auth/index.js';
import { join } from 'node:path';
import { seedSystemRegistries } from './model/registries/registry-writes.js';
import { startSeriesPart } from './series/series-part.js';
import { IngestHost } from './ingest/ingest-host.js';
import { LiveHub } from './reads/live/live-hub.js';
import { startCalcPart } from './calc/calc-part.js';
import { startEpisodesPart } from './episodes/episodes-part.js';
import { startAnnotationsPart } from './annotations/annotations-part.js';

export interface RunningService {
  context: ServiceContext;
  http: HttpServer;
  /** Graceful stop: stop accepting, finish in-flight requests, close the parts, the model. */
  stop(graceMs?: number): Promise<void>;
}

const IDEMPOTENCY_PURGE_MS = 10 * 60_000;

export interface StartOptions {
  /** Additional operations served beside the product's (used by tests of the pipeline itself). */
  extraRoutes?: AnyRoute[];
  /** Where a generated bootstrap password is printed once (default: stderr). */
  printBootstrapSecret?: (line: string) => void;
}

export async function startService(config: Config, log: Logger, opts: StartOptions = {}): Promise<RunningService> {
  const closers: Array<() => Promise<void>> = [];
  let db: Db | null = null;
  try {
    db = await openDb({ url: config.databaseUrl, pgliteDir: join(config.dataDir, 'model') });
    const model = db;
    closers.push(() => model.close());
    const applied = await migrate(db);
    if (applied.length) log.info({ applied }, 'model migrations applied');
    const seeded = await seedSystemRegistries(db);
    if (seeded) log.info({ seeded }, 'system registry entries added');

    // The asset model answers authorization's "where does this asset sit" (subtree and view grants).
    const assetModel = new AssetModel(db);
    closers.push(async () => assetModel.close());
    const access: AccessControl = await createAccessControl({ db, config, log, scopeResolver: assetModel });
    const context: ServiceContext = {
      config, log, db, access,
      idempotency: createIdempotencyStore(db),
      operations: new OperationsCatalogue(db),
      parts: {} as ServiceParts,
    };
    context.parts.model = assetModel;
    // First start with no principals: the bootstrap administrator (a no-op afterwards).
    await bootstrapAdmin(context, opts.printBootstrapSecret);
    const purge = setInterval(() => { context.idempotency.purgeExpired().catch((e) => log.warn({ err: e }, 'idempotency purge failed')); }, IDEMPOTENCY_PURGE_MS);
    purge.unref();
    closers.push(async () => clearInterval(purge));
    closers.push(startSeriesPart(context));
    const ingest = await IngestHost.start(context, config.ingest);
    context.parts.ingest = ingest;
    closers.push(() => ingest.stop());
    // Live resolved updates follow ingest's commit feed (src/reads/live).
    const live = new LiveHub(context, ingest);
    context.parts.live = live;
    closers.push(async () => live.close());
    // Areas over resolved reads: calculations, episodes (their triggers use calculations), annotations.
    closers.push(await startCalcPart(context));
    closers.push(await startEpisodesPart(context));
    closers.push(await startAnnotationsPart(context));

    const http = await startHttpServer(context, [...allRoutes(), ...(opts.extraRoutes ?? [])]);
    let stopped: Promise<void> | null = null;
    return {
      context,
      http,
      stop(graceMs = 10_000) {
        stopped ??= (async () => {
          await http.close(graceMs);
          for (const close of closers.reverse()) {
            try { await close(); } catch (e) { log.warn({ err: e }, 'error while closing'); }
          }
        })();
        return stopped;
      },
    };
  } catch (e) {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    throw e;
  }
}
