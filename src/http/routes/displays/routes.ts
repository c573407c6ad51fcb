// Displays (spec "Displays"): folders, display documents, lint, resolve, time, export and import.
import type { AnyRoute } from '../../route.js';
import { folderRoutes } from './folder-routes.js';
import { documentRoutes } from './document-routes.js';
import { resolveRoutes } from './resolve-routes.js';
import { timeRoutes } from './time-routes.js';
import { portableRoutes } from './portable-routes.js';

export function displayRoutes(): AnyRoute[] {
  return [...folderRoutes(), ...documentRoutes(), ...resolveRoutes(), ...timeRoutes(), ...portableRoutes()];
}
