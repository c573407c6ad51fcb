// Calculations (spec "Calculations"): rules under /v1/model/calc/rules and the /v1/calc routes.
import type { AnyRoute } from '../../route.js';

export function calcRoutes(): AnyRoute[] {
  return [];
}
