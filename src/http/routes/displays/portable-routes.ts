// Export and import of displays (GET /v1/displays/{id}/export, POST /v1/displays/import):
// the portable file of src/displays/portable.ts. Import creates a new display (version 1)
// in folder_id, or in the file's folder path, found or created on this site.
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { Int64, Uuid, Nullable, EntityName } from '../../schemas/common.js';
import { nowNs } from '../../../clock.js';
import { ServiceError } from '../../../errors.js';
import { allFolders, createFolder, folderAtPath, folderPath, type FolderRow } from '../../../displays/folders.js';
import { createDisplay } from '../../../displays/displays.js';
import type { DisplayDocument } from '../../../displays/display-document.js';
import { exportReferences, importReferences, EXPORT_FORMAT, EXPORT_FORMAT_VERSION, type PortableReference } from '../../../displays/portable.js';
import { modelOf, assetReader } from '../model/context.js';
import { dbOf, who, records } from './context.js';
import { visibleVersion } from './document-routes.js';
import { checkDocument } from './document-check.js';
import { DisplayDocument as DisplayDocumentSchema, DisplayRecord, IdParams, GetDisplayQuery } from './schemas.js';

const AREA = 'Displays';
const closed = { additionalProperties: false } as const;

const Reference = Type.Union([
  Type.Object({
    pointer: Type.String({ maxLength: 200 }), kind: Type.Literal('attribute'), id: Uuid({ description: 'The id on the exporting site' }),
    path: Type.String({ description: 'The attribute\'s path: /Plant/Area/Pump 3|Flow' }), name: Type.String(), asset_template: Nullable(Type.String()),
  }, closed),
  Type.Object({
    pointer: Type.String({ maxLength: 200 }), kind: Type.Union([Type.Literal('unit'), Type.Literal('quantity-kind')]), id: Uuid(),
    name: Type.String({ description: 'The registry entry\'s name' }),
  }, closed),
], { $id: 'DisplayExportReference' });

export const DisplayExport = Type.Object({
  format: Type.Literal(EXPORT_FORMAT),
  format_version: Type.String({ pattern: '^1\\.[0-9]+$', description: 'MAJOR.MINOR of the file format; this service reads 1.x' }),
  exported_ns: Int64(),
  display: Type.Object({
    name: Type.String(), kind: Type.String(), schema_version: Type.String(),
    folder_path: Type.Array(EntityName({ segment: true }), { maxItems: 64, description: 'Folder names from the top down' }),
  }, closed),
  document: DisplayDocumentSchema,
  references: Type.Array(Reference, { maxItems: 20_000 }),
}, { ...closed, $id: 'DisplayExport' });

const ImportBody = Type.Object({
  file: DisplayExport,
  folder_id: Type.Optional(Uuid({ description: 'Import into this folder; absent: the file\'s folder path, found or created' })),
}, closed);

const ImportResult = Type.Object({
  display: DisplayRecord,
  references: Type.Array(Type.Object({
    pointer: Type.String(), kind: Type.String(), id: Nullable(Uuid({ description: 'The id on this site, null when it has no match' })), reason: Nullable(Type.String()),
  }, closed)),
}, closed);

/** The folder at the path, creating the missing ones (each its own transaction, named as the file has them). */
async function folderForPath(ctx: HandlerContext, names: string[]): Promise<string> {
  if (names.length === 0) throw new ServiceError('invalid-request', 'body.folder_id: give folder_id; the file names no folder', { errors: [{ field: 'body.folder_id', problem: 'required when the file has no folder path' }] });
  const db = dbOf(ctx);
  let folders: FolderRow[] = await allFolders(db);
  let parent: string | null = null;
  for (let i = 0; i < names.length; i++) {
    const found = folderAtPath(folders, names.slice(0, i + 1));
    if (found) { parent = found.folder_id; continue; }
    const made: FolderRow = await createFolder(db, who(ctx), { name: names[i], parent_id: parent });
    folders = [...folders, made];
    parent = made.folder_id;
  }
  return parent as string;
}

export function portableRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'exportDisplay', method: 'get', path: '/v1/displays/{id}/export', area: AREA,
      summary: 'A portable file of the display: the document as stored, with every attribute id listed by path and every unit or quantity kind by registry name, to import on another site',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: IdParams, query: GetDisplayQuery,
      response: { status: 200, schema: DisplayExport },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const row = await visibleVersion(ctx, ctx.params.id, ctx.query.version);
        const reader = await assetReader(ctx);
        const references = await exportReferences(modelOf(ctx), row.document, (id) => reader.asset(id));
        const folders = new Map((await allFolders(dbOf(ctx))).map((f) => [f.folder_id, f]));
        return {
          body: {
            format: EXPORT_FORMAT, format_version: EXPORT_FORMAT_VERSION, exported_ns: nowNs(),
            display: { name: row.name, kind: row.kind, schema_version: row.schema_version, folder_path: folderPath(folders, row.folder_id) },
            document: row.document, references,
          },
          headers: [['Content-Disposition', `attachment; filename="display-${row.display_id}.json"`]],
        };
      },
    }),
    defineRoute({
      operationId: 'importDisplay', method: 'post', path: '/v1/displays/import', area: AREA,
      summary: 'Import a portable display file as a new display: attribute paths and registry names become this site\'s ids; what has no match becomes an unresolved selector (or a null unit), each listed with its reason',
      access: { kind: 'capability', capability: 'display-author', scope: 'anywhere' },
      body: ImportBody,
      response: { status: 201, schema: ImportResult },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const file = ctx.body.file;
        const doc = file.document as DisplayDocument;
        checkDocument(doc, 'body.file.document');
        const folderId = ctx.body.folder_id ?? await folderForPath(ctx, file.display.folder_path);
        const imported = await importReferences(modelOf(ctx), doc, file.references as PortableReference[]);
        const row = await createDisplay(dbOf(ctx), who(ctx), { folderId, document: imported.document });
        return { status: 201, body: { display: (await records(ctx, [row]))[0], references: imported.references } };
      },
    }),
  ];
}
