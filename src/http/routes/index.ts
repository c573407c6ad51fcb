// Every operation of the service, area by area. The router, the validators, the
// authorization matrix test and the OpenAPI contract all read this one list.
import type { AnyRoute } from '../route.js';
import { buildContract } from '../openapi.js';
import { serviceRoutes } from './service/routes.js';
import { operationsRoutes } from './operations/routes.js';
import { authRoutes } from './auth/routes.js';
import { registriesRoutes } from './registries/routes.js';
import { changeSetRoutes } from './change-sets/routes.js';
import { lintsRoutes } from './lints/routes.js';
import { bulkJobsRoutes } from './bulk-jobs/routes.js';
import { seriesRoutes } from './series/routes.js';
import { backgroundWorkRoutes } from './background-work/routes.js';
import { collectorsRoutes } from './collectors/routes.js';
import { modelRoutes } from './model/routes.js';
import { readRoutes } from './reads/routes.js';
import { calcRoutes } from './calc/routes.js';
import { episodeRoutes } from './episodes/routes.js';
import { annotationRoutes } from './annotations/routes.js';
import { displayRoutes } from './displays/routes.js';
import { portalRoutes } from './portal/routes.js';

export const CONTRACT_VERSION = '0.1.0';

export function allRoutes(): AnyRoute[] {
  let contract: unknown = null;
  const routes: AnyRoute[] = [
    ...operationsRoutes(),
    ...authRoutes(),
    ...registriesRoutes(),
    ...changeSetRoutes(),
    ...lintsRoutes(),
    ...bulkJobsRoutes(),
    ...seriesRoutes(),
    ...backgroundWorkRoutes(),
    ...collectorsRoutes(),
    ...modelRoutes(),
    ...readRoutes(),
    ...calcRoutes(),
    ...episodeRoutes(),
    ...annotationRoutes(),
    ...displayRoutes(),
    ...portalRoutes(),
  ];
  routes.push(...serviceRoutes(() => contract));
  contract = buildContract(routes, { version: CONTRACT_VERSION });
  return routes;
}
