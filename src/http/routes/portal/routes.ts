// The portal: the web page served at / and its static assets (docs/decisions.md, portal).
// The page is one document for every portal path (/, /trend, /display/{display_id}): the
// script reads the path and draws the view, so a bookmarked or shared URL opens where it
// was. The page is revalidated at every load (no-cache) because it names the current
// assets; assets carry a content hash in their names and are kept by browsers for a year.
// Every answer carries a Content-Security-Policy that allows scripts, styles and
// connections only from this origin: the page has no inline script, so an injected
// <script> or a foreign fetch does not run.
import { Type, type TObject } from '@sinclair/typebox';
import { defineRoute, type AnyRoute, type Headers } from '../../route.js';
import { Uuid } from '../../schemas/common.js';
import { ASSET_NAME, PortalFiles } from './portal-files.js';

const AREA = 'Portal';
const closed = { additionalProperties: false } as const;
const HTML = 'text/html; charset=utf-8';

export const PORTAL_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", "connect-src 'self'",
  "font-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

const SECURITY: Headers = [
  ['Content-Security-Policy', PORTAL_CSP],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'same-origin'],
  ['X-Frame-Options', 'DENY'],
];
const PAGE_HEADERS: Headers = [...SECURITY, ['Cache-Control', 'no-cache']];
const ASSET_HEADERS: Headers = [...SECURITY, ['Cache-Control', 'public, max-age=31536000, immutable']];

/** A relative time as operators write it (`*-8h`, `t`, `y+6h`, `now`) or exact ns; the page resolves it. */
const TimeText = Type.String({ minLength: 1, maxLength: 100, description: 'A time expression (`*`, `*-8h`, `t`, `y+6h`, an ISO 8601 instant) or int64 ns' });
const PAGE_RESPONSE = { status: 200 as const, contentType: HTML, description: 'The portal page (the script draws the view the path names)' };

/** One of the page's paths: every one answers the same page, whose script draws the view the path names. */
function pageRoute(files: PortalFiles, spec: { operationId: string; path: string; summary: string; params?: TObject; query: TObject }): AnyRoute {
  return defineRoute({
    ...spec, method: 'get', area: AREA,
    access: { kind: 'anonymous' },
    response: PAGE_RESPONSE,
    errors: [503],
    handler: async () => ({ kind: 'bytes', contentType: HTML, bytes: await files.page(), headers: PAGE_HEADERS }),
  });
}

export function portalRoutes(files = new PortalFiles()): AnyRoute[] {
  return [
    pageRoute(files, {
      operationId: 'portalHome', path: '/',
      summary: 'The portal: log in, browse the asset tree and the display folders',
      query: Type.Object({
        folder: Type.Optional(Uuid({ description: 'Opens this display folder' })),
        asset: Type.Optional(Uuid({ description: 'Opens this asset in the tree' })),
      }, closed),
    }),
    pageRoute(files, {
      operationId: 'portalTrend', path: '/trend',
      summary: 'The portal\'s ad hoc trend of one attribute: `/trend?attribute=<id or path>&start=*-8h&end=*`',
      query: Type.Object({
        attribute: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'An attribute id, or an attribute path (/Site/Area/Pump-101|Flow)' })),
        start: Type.Optional(TimeText), end: Type.Optional(TimeText),
      }, closed),
    }),
    pageRoute(files, {
      operationId: 'portalDisplay', path: '/display/{display_id}',
      summary: 'The portal showing one display, in a context asset when `asset` is given',
      params: Type.Object({ display_id: Uuid() }, closed),
      query: Type.Object({
        asset: Type.Optional(Uuid({ description: 'The context asset: template-relative selectors resolve against it' })),
        start: Type.Optional(TimeText), end: Type.Optional(TimeText),
      }, closed),
    }),
    defineRoute({
      operationId: 'portalAsset', method: 'get', path: '/assets/{name}', area: AREA,
      summary: 'A file of the portal (script, style sheet, source map), named by its content hash',
      access: { kind: 'anonymous' },
      params: Type.Object({ name: Type.String({ pattern: ASSET_NAME }) }, closed),
      response: { status: 200, contentType: 'application/octet-stream', description: 'The file, with its own media type; cached for a year (the name changes with the content)' },
      errors: [404],
      handler: async (ctx) => {
        const f = await files.asset(ctx.params.name);
        return { kind: 'bytes', contentType: f.contentType, bytes: f.bytes, headers: ASSET_HEADERS };
      },
    }),
  ];
}
