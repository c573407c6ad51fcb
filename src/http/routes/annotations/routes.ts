// Annotations: notes on attributes, assets and episodes, their versions, redaction and attachments.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError, invalid, notFound } from '../../../errors.js';
import { UUID_RE } from '../../../uuid.js';
import { encodeCursor, decodeCursor, cursorInt64 } from '../../../cursor.js';
import {
  resolveTarget, createAnnotation, updateAnnotation, redactAnnotation, getAnnotation, versionsOf,
  type AnnotationContent, type AnnotationTarget, type AnnotationView,
} from '../../../annotations/annotation-store.js';
import { queryAnnotations, type AnnotationFilter } from '../../../annotations/annotation-query.js';
import { actorOf, authorizeOnScope, annotationReader, annotationBody } from './annotation-access.js';
import { attachmentRoutes } from './attachment-routes.js';
import {
  CreateAnnotationBody, UpdateAnnotationBody, RedactBody, IdParams, Annotation, AnnotationVersions, QueryBody, QueryResponse,
} from './schemas.js';
import type { Int64Value } from '../../schemas/common.js';

const AREA = 'Annotations';
const DEFAULT_LIMIT = 100;
const CURSOR = 'annotations';

interface ContentBody { target: AnnotationTarget; start_ns: Int64Value; end_ns?: Int64Value; text: string; tags?: string[]; attachment_ids?: string[] }

function contentOf(b: ContentBody): AnnotationContent {
  const startNs = BigInt(b.start_ns);
  const endNs = b.end_ns === undefined ? startNs : BigInt(b.end_ns);
  if (endNs < startNs) throw invalid('end_ns', 'must not be before start_ns');
  if (b.text.trim() === '') throw invalid('text', 'must not be blank');
  return { target: b.target, startNs, endNs, text: b.text, tags: b.tags ?? [], attachmentIds: b.attachment_ids ?? [] };
}

/** The annotation if the caller may read it; 404 otherwise (its existence is not revealed). */
async function visible(ctx: HandlerContext, id: string): Promise<AnnotationView> {
  const v = await getAnnotation(ctx.service.db, id);
  if (!(await annotationReader(ctx)(v))) throw notFound(`annotation ${id}`);
  return v;
}

function filterOf(b: typeof QueryBody.static): AnnotationFilter {
  if ((b.start_ns === undefined) !== (b.end_ns === undefined)) throw invalid(b.start_ns === undefined ? 'start_ns' : 'end_ns', 'start_ns and end_ns go together');
  let window: AnnotationFilter['window'];
  if (b.start_ns !== undefined && b.end_ns !== undefined) {
    window = { startNs: BigInt(b.start_ns), endNs: BigInt(b.end_ns) };
    if (window.endNs <= window.startNs) throw invalid('end_ns', 'must be greater than start_ns');
  }
  return {
    attributes: b.attributes, assetSubtree: b.asset_subtree, episode: b.episode, window,
    tags: b.tags, tagsMatch: b.tags_match ?? 'all', author: b.author, text: b.text, includeRedacted: b.include_redacted ?? true,
  };
}

export function annotationRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createAnnotation', method: 'post', path: '/v1/annotations', area: AREA,
      summary: 'Annotate attributes, an asset or an episode at an instant or over a range, with text, tags and attachments (version 1; one model transaction)',
      access: { kind: 'capability', capability: 'annotate', scope: 'handler' },
      body: CreateAnnotationBody,
      response: { status: 201, schema: Annotation },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const c = contentOf(ctx.body);
        const target = await resolveTarget(ctx.service.db, c.target);
        await authorizeOnScope(ctx, 'annotate', target.scopeAssets);
        const id = await createAnnotation(ctx.service.db, actorOf(ctx, ctx.body.reason), target, c);
        return { status: 201, body: annotationBody(await getAnnotation(ctx.service.db, id)) };
      },
    }),
    defineRoute({
      operationId: 'getAnnotation', method: 'get', path: '/v1/annotations/{id}', area: AREA,
      summary: 'An annotation\'s current version; a redacted one answers its marker (text null, redacted {redacted_ns, redacted_by, reason})',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: IdParams,
      response: { status: 200, schema: Annotation },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: annotationBody(await visible(ctx, ctx.params.id)) }),
    }),
    defineRoute({
      operationId: 'updateAnnotation', method: 'put', path: '/v1/annotations/{id}', area: AREA,
      summary: 'A new version of an annotation (the whole content); expected_version must be the current version, else 409',
      access: { kind: 'capability', capability: 'annotate', scope: 'handler' },
      params: IdParams, body: UpdateAnnotationBody,
      response: { status: 200, schema: Annotation },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const before = await visible(ctx, ctx.params.id);
        const c = contentOf(ctx.body);
        const target = await resolveTarget(ctx.service.db, c.target);
        await authorizeOnScope(ctx, 'annotate', before.scopeAssets);
        await authorizeOnScope(ctx, 'annotate', target.scopeAssets);
        await updateAnnotation(ctx.service.db, actorOf(ctx, ctx.body.reason), ctx.params.id, ctx.body.expected_version, target, c);
        return { body: annotationBody(await getAnnotation(ctx.service.db, ctx.params.id)) };
      },
    }),
    defineRoute({
      operationId: 'listAnnotationVersions', method: 'get', path: '/v1/annotations/{id}/versions', area: AREA,
      summary: 'Every version of an annotation, oldest first, with who made it, when and why (content null once redacted)',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: IdParams,
      response: { status: 200, schema: AnnotationVersions },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        await visible(ctx, ctx.params.id);
        return { body: { items: await versionsOf(ctx.service.db, ctx.params.id) } };
      },
    }),
    defineRoute({
      operationId: 'redactAnnotation', method: 'post', path: '/v1/annotations/{id}/redact', area: AREA,
      summary: 'Remove an annotation\'s content from storage: the text and tags of every version, and its attachments\' bytes; the fact, the times, who redacted and why remain',
      access: { kind: 'capability', capability: 'redact', scope: 'handler' },
      params: IdParams, body: RedactBody,
      response: { status: 200, schema: Annotation },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const before = await getAnnotation(ctx.service.db, ctx.params.id);
        await authorizeOnScope(ctx, 'redact', before.scopeAssets);
        const shas = await redactAnnotation(ctx.service.db, actorOf(ctx, ctx.body.reason), ctx.params.id);
        const store = ctx.service.parts.annotations.attachments;
        for (const sha of shas) await store.remove(sha);
        return { body: annotationBody(await getAnnotation(ctx.service.db, ctx.params.id)) };
      },
    }),
    defineRoute({
      operationId: 'queryAnnotations', method: 'post', path: '/v1/annotations/query', area: AREA,
      summary: 'Annotations by attributes, asset subtree, episode, time overlap (ranges begun before the window included), tags, author and text, in start order; cursor paging',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      body: QueryBody,
      response: { status: 200, schema: QueryResponse },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const f = filterOf(ctx.body);
        const limit = ctx.body.limit ?? DEFAULT_LIMIT;
        let after: { startNs: bigint; id: string } | undefined;
        if (ctx.body.cursor !== undefined) {
          const [start, id] = decodeCursor(CURSOR, ctx.body.cursor, 2);
          if (!UUID_RE.test(id)) throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued for this listing');
          after = { startNs: start.startsWith('-') ? -cursorInt64(start.slice(1)) : cursorInt64(start), id };
        }
        const mayRead = annotationReader(ctx);
        const items: AnnotationView[] = [];
        let last: AnnotationView | null = null;
        let exhausted = false;
        // Unreadable notes are left out; pages are refilled so a page is short only at the end.
        while (items.length < limit && !exhausted) {
          const page = await queryAnnotations(ctx.service.db, f, { after, limit });
          let i = 0;
          for (; i < page.items.length && items.length < limit; i++) {
            const v = page.items[i];
            last = v;
            if (await mayRead(v)) items.push(v);
          }
          exhausted = !page.more && i === page.items.length;
          if (last) after = { startNs: last.start_ns, id: last.annotation_id };
        }
        const next = !exhausted && last ? encodeCursor(CURSOR, [last.start_ns.toString(), last.annotation_id]) : null;
        return { body: { items: items.map(annotationBody), next_cursor: next } };
      },
    }),
    ...attachmentRoutes(),
  ];
}
