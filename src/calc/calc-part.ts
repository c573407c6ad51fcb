// Starts the calculation engine (rule runner, triggers, late-data recompute, backfill) beside the rest of the
// service; returns the closer that stops it.
import type { ServiceContext } from '../service-context.js';
import { CalcEngine } from './engine/calc-engine.js';
import { BackfillRunner } from './backfill/backfill-runner.js';

declare module '../service-context.js' {
  interface ServiceParts {
    calc: CalcEngine;
    backfills: BackfillRunner;
  }
}

export async function startCalcPart(context: ServiceContext): Promise<() => Promise<void>> {
  // The ingest host is the commit source (src/ingest/ingest-host.ts); absent in a model-only start.
  const source = context.parts.ingest ?? null;
  const engine = new CalcEngine(context, source);
  context.parts.calc = engine;
  const backfills = new BackfillRunner(context, engine);
  context.parts.backfills = backfills;
  await engine.reload();
  // Backfills a previous process was committing resume (or are marked failed) once the engine runs.
  await backfills.resumeInterrupted();
  return async () => {
    await backfills.close();
    await engine.close();
  };
}
