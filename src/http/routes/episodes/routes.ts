// Episodes (spec "Episodes"): templates, episodes, links, query, traverse; and the
// episode overlay read (area Reads) that lays episodes over each other.
import type { AnyRoute } from '../../route.js';
import { templateRoutes } from './template-routes.js';
import { episodeRoutes as episodeItemRoutes } from './episode-routes.js';
import { genealogyRoutes } from './genealogy-routes.js';
import { queryRoutes } from './query-route.js';
import { overlayRoutes } from './overlay-route.js';

export function episodeRoutes(): AnyRoute[] {
  return [...templateRoutes(), ...queryRoutes(), ...genealogyRoutes(), ...episodeItemRoutes(), ...overlayRoutes()];
}
