// Calculations (spec "Calculations"): rules under /v1/model/calc/rules and the /v1/calc routes.
import type { AnyRoute } from '../../route.js';
import { ruleRoutes } from './rule-routes.js';
import { calcExplainRoutes } from './calc-routes.js';

export function calcRoutes(): AnyRoute[] {
  return [...ruleRoutes(), ...calcExplainRoutes()];
}
