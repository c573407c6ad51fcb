// The Model area: assets, properties, templates, attributes and bindings, views, links,
// resolve and staging, events.
import type { AnyRoute } from '../../route.js';
import { assetRoutes } from './assets.js';
import { propertyRoutes } from './properties.js';
import { templateRoutes } from './templates.js';
import { attributeRoutes } from './attributes.js';
import { viewRoutes } from './views.js';
import { linkRoutes } from './links.js';
import { resolveRoutes } from './resolve.js';
import { eventRoutes } from './events.js';

export function modelRoutes(): AnyRoute[] {
  return [
    ...assetRoutes(), ...propertyRoutes(), ...templateRoutes(), ...attributeRoutes(),
    ...viewRoutes(), ...linkRoutes(), ...resolveRoutes(), ...eventRoutes(),
  ];
}
