// The portal: the web page served at / and its static assets.
import type { AnyRoute } from '../../route.js';

export function portalRoutes(): AnyRoute[] {
  return [];
}
