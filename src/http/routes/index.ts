// Every operation of the service, area by area. The router, the validators, the
// authorization matrix test and the OpenAPI contract all read this one list.
import type { AnyRoute } from '../route.js';
import { buildContract } from '../openapi.js';
import { serviceRoutes } from './service/routes.js';
import { operationsRoutes } from './operations/routes.js';
import { authRoutes } from './auth/routes.js';
import { registriesRoutes } from './registries/routes.js';
import { adminRoutes } from './change-sets/routes.js';
import { lintsRoutes } from './lints/routes.js';
import { modelJobsRoutes } from './bulk-jobs/routes.js';
import { seriesRoutes } from './series/routes.js';
import { jobsRoutes } from './background-work/routes.js';
import { collectorsRoutes } from './collectors/routes.js';
import { modelRoutes } from './model/routes.js';

export const CONTRACT_VERSION = '0.1.0';

export function allRoutes(): AnyRoute[] {
  let contract: unknown = null;
  const routes: AnyRoute[] = [
    ...operationsRoutes(),
    ...authRoutes(),
    ...registriesRoutes(),
    ...adminRoutes(),
    ...lintsRoutes(),
    ...modelJobsRoutes(),
    ...seriesRoutes(),
    ...jobsRoutes(),
    ...collectorsRoutes(),
    ...modelRoutes(),
  ];
  routes.push(...serviceRoutes(() => contract));
  contract = buildContract(routes, { version: CONTRACT_VERSION });
  return routes;
}
