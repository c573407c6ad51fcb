// Attachments of annotations: the upload streamed to the attachment store (never held whole
// in memory), and the download served so that a hostile file cannot run in the service's
// origin: Content-Disposition attachment unless the type is on the inline list, nosniff, a
// Content-Security-Policy that allows nothing, and byte ranges (206) for large files.
import { randomUUID } from 'node:crypto';
import { defineRoute, type AnyRoute, type HandlerContext, type Headers } from '../../route.js';
import { ServiceError, notFound } from '../../../errors.js';
import { nowNs } from '../../../clock.js';
import { modelTransaction } from '../../../model/tx-log.js';
import { acceptedType, ACCEPTED_TYPES, INLINE_TYPES } from '../../../annotations/content-check.js';
import { actorOf, annotationReader } from './annotation-access.js';
import { IdParams, AttachmentUploaded, UploadQuery } from './schemas.js';

const AREA = 'Annotations';
/** Nothing may load, run or embed: the file is shown as itself or downloaded. */
const CSP = "default-src 'none'; sandbox; frame-ancestors 'none'";

interface AttachmentRow {
  attachment_id: string; sha256: string; content_type: string; size_bytes: bigint; filename: string | null;
  uploaded_by: string; uploaded_by_id: string; uploaded_ns: bigint; redacted_ns: bigint | null;
}

/** Whether the caller uploaded it or may read an annotation whose current version uses it. */
async function mayReadAttachment(ctx: HandlerContext, a: AttachmentRow): Promise<boolean> {
  if (ctx.principal && ctx.principal.id === a.uploaded_by_id) return true;
  const { rows } = await ctx.service.db.query<{ scope: string[] }>(
    `SELECT to_jsonb(an.scope_asset_ids) AS scope FROM annotation_uses_attachment u JOIN annotation an ON an.annotation_id = u.annotation_id
      WHERE u.attachment_id = $1`, [a.attachment_id]);
  const mayRead = annotationReader(ctx);
  for (const r of rows) if (await mayRead({ scopeAssets: r.scope })) return true;
  return false;
}

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` against the size; null for the whole file; one range only (others answer the whole file). */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (header === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null; // several ranges or another unit: the whole file (RFC 9110 allows ignoring Range)
  let start: number, end: number;
  if (m[1] === '') { const n = Number(m[2]); start = Math.max(0, size - n); end = size - 1; if (n === 0) start = size; }
  else { start = Number(m[1]); end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1); }
  if (start >= size || start > end) {
    throw new ServiceError('range-not-satisfiable', `range ${header} is outside the attachment's ${size} bytes`, { size_bytes: size }, { 'Content-Range': `bytes */${size}` });
  }
  return { start, end };
}

/** A filename safe in a quoted header parameter, and its exact form for filename*. */
function disposition(kind: 'inline' | 'attachment', filename: string | null): string {
  if (!filename) return kind;
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export function attachmentRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'uploadAnnotationAttachment', method: 'post', path: '/v1/annotations/attachments', area: AREA,
      summary: 'Upload an attachment (the body is the file, streamed to disk, checked against its Content-Type, stored by SHA-256); use its id in an annotation\'s attachment_ids',
      description: `Accepted types: ${ACCEPTED_TYPES.join(', ')}. Larger than SERVICE_ATTACHMENT_MAX_BYTES answers 413.`,
      access: { kind: 'capability', capability: 'annotate', scope: 'anywhere' },
      query: UploadQuery,
      streamBody: { limit: (config) => config.attachmentMaxBytes, mediaTypes: ACCEPTED_TYPES, description: 'The file\'s bytes, with its Content-Type' },
      response: { status: 201, schema: AttachmentUploaded },
      errors: [400, 401, 403, 413, 415, 503],
      handler: async (ctx) => {
        const type = acceptedType(ctx.headers.get('content-type'));
        const body = ctx.bodyStream;
        if (!body) throw new ServiceError('internal', 'the upload route has no body stream');
        const store = ctx.service.parts.annotations.attachments;
        const stored = await store.receive(type, (write) => body.pipe(write, ctx.signal));
        const actor = actorOf(ctx, 'attachment upload');
        const row: AttachmentRow = {
          attachment_id: randomUUID(), sha256: stored.sha256, content_type: type, size_bytes: BigInt(stored.sizeBytes), filename: ctx.query.filename ?? null,
          uploaded_by: actor.principal, uploaded_by_id: actor.principalId, uploaded_ns: nowNs(), redacted_ns: null,
        };
        await modelTransaction(ctx.service.db, { principal: actor.principal, reason: actor.reason }, async (tx, _txId, events) => {
          await tx.query(
            `INSERT INTO annotation_attachment (attachment_id, sha256, content_type, size_bytes, filename, uploaded_by, uploaded_by_id, uploaded_ns)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
            [row.attachment_id, row.sha256, row.content_type, row.size_bytes, row.filename, row.uploaded_by, row.uploaded_by_id, row.uploaded_ns]);
          events.emit('annotation-attachment', row.attachment_id, 'upload', { sha256: row.sha256, size_bytes: row.size_bytes });
        });
        const { uploaded_by_id: _id, redacted_ns: _r, ...body201 } = row;
        return { status: 201, body: body201 };
      },
    }),
    defineRoute({
      operationId: 'getAnnotationAttachment', method: 'get', path: '/v1/annotations/attachments/{id}', area: AREA,
      summary: 'An attachment\'s bytes: readable by its uploader and by whoever may read an annotation using it. Inline only for images, PDF and plain text; Range requests answer 206',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: IdParams,
      response: { status: 200, contentType: 'application/octet-stream', description: 'The bytes with the declared Content-Type; 206 with Content-Range for a Range request' },
      errors: [400, 401, 403, 404, 416, 503],
      handler: async (ctx) => {
        const { rows } = await ctx.service.db.query<AttachmentRow>('SELECT * FROM annotation_attachment WHERE attachment_id = $1', [ctx.params.id]);
        const a = rows[0];
        if (!a || !(await mayReadAttachment(ctx, a))) throw notFound(`attachment ${ctx.params.id}`);
        const opened = a.redacted_ns === null ? await ctx.service.parts.annotations.attachments.openBytes(a.sha256) : null;
        if (!opened) throw notFound(`attachment ${ctx.params.id}`, { redacted: a.redacted_ns !== null });
        try {
          const range = byteRange(ctx.headers.get('range'), opened.size);
          const start = range?.start ?? 0, end = range?.end ?? opened.size - 1;
          const bytes = Buffer.alloc(Math.max(0, end - start + 1));
          let at = 0;
          while (at < bytes.length) {
            const { bytesRead } = await opened.file.read(bytes, at, bytes.length - at, start + at);
            if (bytesRead === 0) break;
            at += bytesRead;
          }
          const type = a.content_type.startsWith('text/') ? `${a.content_type}; charset=utf-8` : a.content_type;
          const headers: Headers = [
            ['Content-Disposition', disposition(INLINE_TYPES.has(a.content_type) ? 'inline' : 'attachment', a.filename)],
            ['X-Content-Type-Options', 'nosniff'],
            ['Content-Security-Policy', CSP],
            ['Cache-Control', 'private, no-store'],
            ['Accept-Ranges', 'bytes'],
            ['ETag', `"${a.sha256}"`],
          ];
          if (range) headers.push(['Content-Range', `bytes ${start}-${end}/${opened.size}`]);
          return { kind: 'bytes', status: range ? 206 : 200, contentType: type, bytes: bytes.subarray(0, at), headers };
        } finally {
          await opened.file.close();
        }
      },
    }),
  ];
}
