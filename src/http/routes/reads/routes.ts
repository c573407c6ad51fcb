// The Resolved reads area (spec "Resolved reads"): every route whose body carries the
// `resolve` object. Point reads in point-routes.ts; summary and render, and live updates
// (subscribe, the /v1/stream WebSocket) add their lists here.
import type { AnyRoute } from '../../route.js';
import { pointReadRoutes } from './point-routes.js';
import { intervalReadRoutes } from './interval-routes.js';
import { liveRoutes } from './live-routes.js';

export function readRoutes(): AnyRoute[] {
  return [
    ...pointReadRoutes(),
    ...intervalReadRoutes(),
    ...liveRoutes(),
  ];
}
