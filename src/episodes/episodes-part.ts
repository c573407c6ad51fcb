// The episodes part of the running service: how episodes capture their attributes (the
// read pool, through resolution) and how template triggers are checked; returns the
// closer that stops it.
import type { ServiceContext } from '../service-context.js';
import type { Capture } from './episode-store.js';
import type { TriggerCheck } from './episode-templates.js';
import { computeCaptures } from './episode-captures.js';

export interface EpisodesPart {
  capture: Capture;
  /** null while the service evaluates no triggers: templates with a trigger are refused (400). */
  checkTrigger: TriggerCheck;
}

declare module '../service-context.js' {
  interface ServiceParts {
    episodes: EpisodesPart;
  }
}

export async function startEpisodesPart(context: ServiceContext): Promise<() => Promise<void>> {
  context.parts.episodes = {
    capture: (t, assets, startNs, endNs) => computeCaptures(context, t, assets, startNs, endNs),
    checkTrigger: null,
  };
  return async () => undefined;
}
