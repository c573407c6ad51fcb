// The episodes part of the running service: how episodes capture their attributes (the
// read pool, through resolution), how template triggers are checked when saved, and the
// trigger runner that opens and closes episodes from live and late data; returns the
// closer that stops it.
import type { ServiceContext } from '../service-context.js';
import type { Capture } from './episode-store.js';
import type { TriggerCheck } from './episode-templates.js';
import { computeCaptures } from './episode-captures.js';
import { checkTrigger } from './trigger-targets.js';
import { EpisodeTriggers } from './episode-triggers.js';

export interface EpisodesPart {
  capture: Capture;
  /** Checks a template's trigger when it is saved. */
  checkTrigger: NonNullable<TriggerCheck>;
  triggers: EpisodeTriggers;
}

declare module '../service-context.js' {
  interface ServiceParts {
    episodes: EpisodesPart;
  }
}

export async function startEpisodesPart(context: ServiceContext): Promise<() => Promise<void>> {
  const capture: Capture = (t, assets, startNs, endNs) => computeCaptures(context, t, assets, startNs, endNs);
  // The ingest host is the commit source; absent in a model-only start (then triggers are checked but do not run).
  const triggers = new EpisodeTriggers(context, context.parts.ingest ?? null, capture);
  context.parts.episodes = { capture, checkTrigger: (openWhen, roles) => checkTrigger(context, openWhen, roles), triggers };
  await triggers.reload();
  return () => triggers.close();
}
