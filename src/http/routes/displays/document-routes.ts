// Display documents (spec "Displays"): create, list (a bare array, or {items, next_cursor}
// when cursor or limit is sent), read (newest, published or a numbered version), replace
// (a new version, stale-checked), publishing, the version list and the lint.
// display-author writes; display-publish decides what readers without it see.
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { encodeCursor, decodeCursor } from '../../../cursor.js';
import { UUID_RE } from '../../../uuid.js';
import { CursorPage } from '../../schemas/common.js';
import { createDisplay, updateDisplay, publishDisplay, displayVersion, displayHead, listDisplays, versionsOf, type DisplayVersionRow } from '../../../displays/displays.js';
import type { DisplayDocument } from '../../../displays/display-document.js';
import { dbOf, who, isAuthor, records } from './context.js';
import { checkDocument } from './document-check.js';
import {
  DisplayRecord, CreateDisplayBody, PutDisplayBody, PublishBody, Publication, GetDisplayQuery, ListDisplaysQuery, IdParams, DisplayVersion, LintFinding,
} from './schemas.js';

const AREA = 'Displays';
const READ = { kind: 'capability', capability: 'read', scope: 'handler' } as const;
const LISTING = 'displays';

const hidden = (id: string) => new ServiceError('not-found', `display ${id} not found`);

/** The version a caller reads: authors any (newest by default), readers the published one only. */
export async function visibleVersion(ctx: HandlerContext, id: string, version: number | undefined): Promise<DisplayVersionRow> {
  const db = dbOf(ctx);
  const author = await isAuthor(ctx);
  let row: DisplayVersionRow | null;
  if (author) row = await displayVersion(db, id, version ?? 'current');
  else {
    row = await displayVersion(db, id, 'published');
    if (row && version !== undefined && row.version !== version) row = null;
  }
  if (!row) throw hidden(id);
  return row;
}

export function documentRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createDisplay', method: 'post', path: '/v1/displays', area: AREA,
      summary: 'Create a display document (version 1) in a folder; readers without display-author see it once it is published',
      access: { kind: 'capability', capability: 'display-author', scope: 'anywhere' },
      body: CreateDisplayBody,
      response: { status: 201, schema: DisplayRecord },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        const doc = b.document as DisplayDocument;
        checkDocument(doc, 'body.document');
        const row = await createDisplay(dbOf(ctx), who(ctx), { folderId: b.folder_id, document: doc });
        return { status: 201, body: (await records(ctx, [row]))[0] };
      },
    }),
    defineRoute({
      operationId: 'listDisplays', method: 'get', path: '/v1/displays', area: AREA,
      summary: 'Display document records in id order: a bare array, or {items, next_cursor} when cursor or limit is sent. Readers without display-author see published displays only',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      query: ListDisplaysQuery,
      response: { status: 200, schema: Type.Union([Type.Array(DisplayRecord), CursorPage(DisplayRecord)]) },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const q = ctx.query;
        const paged = q.cursor !== undefined || q.limit !== undefined;
        let after = q.after?.toLowerCase();
        if (q.cursor !== undefined) {
          const [at] = decodeCursor(LISTING, q.cursor, 1);
          if (at !== '' && !UUID_RE.test(at)) throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued for this listing');
          if (at !== '' && (after === undefined || at > after)) after = at;
        }
        const limit = paged ? q.limit ?? 100 : undefined;
        const rows = await listDisplays(dbOf(ctx), {
          publishedOnly: !(await isAuthor(ctx)), folder: q.folder, kind: q.kind, after, limit: limit === undefined ? undefined : limit + 1,
        });
        if (!paged) return { body: await records(ctx, rows) };
        const more = rows.length > (limit as number);
        const items = more ? rows.slice(0, limit) : rows;
        const position = items.length > 0 ? items[items.length - 1].display_id : after ?? '';
        return { body: { items: await records(ctx, items), next_cursor: more ? encodeCursor(LISTING, [position]) : null } };
      },
    }),
    defineRoute({
      operationId: 'getDisplay', method: 'get', path: '/v1/displays/{id}', area: AREA,
      summary: 'A display document record: the newest version (authors), the published one (readers), or ?version=N',
      access: READ, params: IdParams, query: GetDisplayQuery,
      response: { status: 200, schema: DisplayRecord },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: (await records(ctx, [await visibleVersion(ctx, ctx.params.id, ctx.query.version)]))[0] }),
    }),
    defineRoute({
      operationId: 'putDisplay', method: 'put', path: '/v1/displays/{id}', area: AREA,
      summary: 'A new version of the display (document and/or folder), refused with 409 when expected_tx is not the newest version\'s tx_id',
      access: { kind: 'capability', capability: 'display-author', scope: 'anywhere' },
      params: IdParams, body: PutDisplayBody,
      response: { status: 200, schema: DisplayRecord },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        if (b.document === undefined && b.folder_id === undefined) {
          throw new ServiceError('invalid-request', 'body: give document or folder_id', { errors: [{ field: 'body', problem: 'nothing to change: give document or folder_id' }] });
        }
        if (b.document) checkDocument(b.document as DisplayDocument, 'body.document');
        const row = await updateDisplay(dbOf(ctx), who(ctx), ctx.params.id, {
          expectedTx: BigInt(b.expected_tx), document: b.document as DisplayDocument | undefined, folderId: b.folder_id,
        });
        return { body: (await records(ctx, [row]))[0] };
      },
    }),
    defineRoute({
      operationId: 'publishDisplay', method: 'post', path: '/v1/displays/{id}/publish', area: AREA,
      summary: 'Choose the version readers without display-author see (any version, not only the newest); version null withdraws the display from them',
      access: { kind: 'capability', capability: 'display-publish', scope: 'anywhere' },
      params: IdParams, body: PublishBody,
      response: { status: 200, schema: Publication },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: await publishDisplay(dbOf(ctx), who(ctx), ctx.params.id, ctx.body.version) }),
    }),
    defineRoute({
      operationId: 'listDisplayVersions', method: 'get', path: '/v1/displays/{id}/versions', area: AREA,
      summary: 'The versions of a display, oldest first, with the one readers see marked published (readers see only that one)',
      access: READ, params: IdParams,
      response: { status: 200, schema: Type.Array(DisplayVersion) },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const db = dbOf(ctx);
        const head = await displayHead(db, ctx.params.id);
        const author = await isAuthor(ctx);
        if (!head || (!author && head.published_version === null)) throw hidden(ctx.params.id);
        const versions = (await versionsOf(db, ctx.params.id)).map((v) => ({ ...v, published: v.version === head.published_version }));
        return { body: author ? versions : versions.filter((v) => v.published) };
      },
    }),
    defineRoute({
      operationId: 'lintDisplay', method: 'get', path: '/v1/displays/{id}/lint', area: AREA,
      summary: 'The lint of a display version (as every record carries it): stable codes with severity and widget id',
      access: READ, params: IdParams, query: GetDisplayQuery,
      response: { status: 200, schema: Type.Array(LintFinding) },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: (await records(ctx, [await visibleVersion(ctx, ctx.params.id, ctx.query.version)]))[0].lint }),
    }),
  ];
}
