// Display folders (spec "Displays"): create (optional Idempotency-Key), list, read, and
// rename or move. Readers see only the folders that lead to a published display; a folder
// they may not read is absent from the list and answers 404 (context.ts).
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { createFolder, folderById, putFolder } from '../../../displays/folders.js';
import { dbOf, who, isAuthor, readableFolders, folderView } from './context.js';
import { DisplayFolder, FolderBody, FolderPutBody, FolderListQuery, IdParams } from './schemas.js';

const AREA = 'Displays';

export function folderRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createDisplayFolder', method: 'post', path: '/v1/display-folders', area: AREA,
      summary: 'Create a display folder (at the top, or under parent_id); names are unique among siblings',
      access: { kind: 'capability', capability: 'display-author', scope: 'anywhere' },
      body: FolderBody, idempotency: 'optional',
      response: { status: 201, schema: DisplayFolder },
      errors: [400, 401, 403, 409, 503],
      handler: async (ctx) => ({ status: 201, body: folderView(await createFolder(dbOf(ctx), who(ctx), ctx.body)) }),
    }),
    defineRoute({
      operationId: 'listDisplayFolders', method: 'get', path: '/v1/display-folders', area: AREA,
      summary: 'The display folders the caller may read, by name (all of them, or those directly under parent_id)',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      query: FolderListQuery,
      response: { status: 200, schema: Type.Array(DisplayFolder) },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const folders = await readableFolders(ctx, await isAuthor(ctx));
        const parent = ctx.query.parent_id;
        return { body: (parent === undefined ? folders : folders.filter((f) => f.parent_id === parent)).map(folderView) };
      },
    }),
    defineRoute({
      operationId: 'getDisplayFolder', method: 'get', path: '/v1/display-folders/{id}', area: AREA,
      summary: 'One display folder',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: IdParams,
      response: { status: 200, schema: DisplayFolder },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const author = await isAuthor(ctx);
        const f = author ? await folderById(dbOf(ctx), ctx.params.id) : (await readableFolders(ctx, false)).find((x) => x.folder_id === ctx.params.id);
        if (!f) throw new ServiceError('not-found', `display folder ${ctx.params.id} not found`);
        return { body: folderView(f) };
      },
    }),
    defineRoute({
      operationId: 'putDisplayFolder', method: 'put', path: '/v1/display-folders/{id}', area: AREA,
      summary: 'Rename and/or move a display folder (never under itself: 400 naming parent_id); 409 on a sibling name clash or a stale expected_tx',
      access: { kind: 'capability', capability: 'display-author', scope: 'anywhere' },
      params: IdParams, body: FolderPutBody,
      response: { status: 200, schema: DisplayFolder },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => ({ body: folderView(await putFolder(dbOf(ctx), who(ctx), ctx.params.id, ctx.body)) }),
    }),
  ];
}
