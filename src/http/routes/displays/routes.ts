// Displays (spec "Displays"): folders, display documents, lint, resolve, time, export and import.
import type { AnyRoute } from '../../route.js';

export function displayRoutes(): AnyRoute[] {
  return [];
}
