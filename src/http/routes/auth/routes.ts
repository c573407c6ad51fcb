// The Authentication area's operations (spec "Authentication"), and the account changes the
// spec leaves out: password change, disable and enable (account-routes.ts).
import type { AnyRoute } from '../../route.js';
import { sessionRoutes } from './session-routes.js';
import { principalRoutes } from './principal-routes.js';
import { accountRoutes } from './account-routes.js';

export function authRoutes(): AnyRoute[] {
  return [...sessionRoutes(), ...principalRoutes(), ...accountRoutes()];
}
