// The Authentication area's 22 operations (spec "Authentication").
import type { AnyRoute } from '../../route.js';
import { sessionRoutes } from './session-routes.js';
import { principalRoutes } from './principal-routes.js';

export function authRoutes(): AnyRoute[] {
  return [...sessionRoutes(), ...principalRoutes()];
}
