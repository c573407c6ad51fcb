// A route with its validators compiled once, at start (as fastify compiles a route's schemas when it is registered).
import type { AnyRoute } from './route.js';
import { compileValidator, type Validator } from './validate.js';

export interface CompiledRoute {
  route: AnyRoute;
  params: Validator | null;
  query: Validator | null;
  body: Validator | null;
  /** Probes and the contract are logged at debug so health checks do not flood the log. */
  quietLog: boolean;
}

export function compileRoute(route: AnyRoute): CompiledRoute {
  return {
    route,
    params: route.params ? compileValidator(route.params) : null,
    query: route.query ? compileValidator(route.query) : null,
    body: route.body ? compileValidator(route.body) : null,
    quietLog: route.access.kind === 'anonymous' && route.method === 'get',
  };
}
