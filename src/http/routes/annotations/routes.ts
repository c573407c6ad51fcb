// Annotations: notes on attributes, assets and episodes, their versions, redaction and attachments.
import type { AnyRoute } from '../../route.js';

export function annotationRoutes(): AnyRoute[] {
  return [];
}
