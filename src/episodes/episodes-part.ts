// Starts the episode triggers (open and close episodes from live and late data) beside the rest of the
// service; returns the closer that stops it.
import type { ServiceContext } from '../service-context.js';

export async function startEpisodesPart(_context: ServiceContext): Promise<() => Promise<void>> {
  return async () => undefined;
}
