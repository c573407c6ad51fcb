// Displays (spec "Displays"): folders, display documents, lint, resolve, time, export and import.
import type { AnyRoute } from '../../route.js';
import { folderRoutes } from './folder-routes.js';
import { documentRoutes } from './document-routes.js';

export function displayRoutes(): AnyRoute[] {
  return [...folderRoutes(), ...documentRoutes()];
}
