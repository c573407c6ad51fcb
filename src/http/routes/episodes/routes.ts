// Episodes (spec "Episodes"): templates, episodes, links, query, traverse.
import type { AnyRoute } from '../../route.js';

export function episodeRoutes(): AnyRoute[] {
  return [];
}
