// Shapes of the Annotations area (spec: the 8 routes under /v1/annotations, shapes "not
// shown"; designed in docs/decisions.md, annotations, 2026-11-27).
import { Type } from '@sinclair/typebox';
import { Int64, Nullable, Uuid } from '../../schemas/common.js';

const closed = { additionalProperties: false } as const;
const Reason = Type.Optional(Type.String({ maxLength: 2000, description: 'Why: recorded in the model transaction and the version' }));

export const AnnotationTarget = Type.Union([
  Type.Object({ attributes: Type.Array(Uuid(), { minItems: 1, maxItems: 1000, description: 'The attributes the note is on' }) }, closed),
  Type.Object({ asset: Uuid({ description: 'An asset: the note shows on each of its attributes in reads' }) }, closed),
  Type.Object({ episode: Uuid({ description: 'An episode (its assets scope who may read the note)' }) }, closed),
], { $id: 'AnnotationTarget', description: 'Exactly one of attributes, asset or episode' });

const contentMembers = {
  target: AnnotationTarget,
  start_ns: Int64({ description: 'The instant, or the start of the range (ns)' }),
  end_ns: Type.Optional(Int64({ description: 'The end of the range, inclusive (ns); absent for an instant' })),
  text: Type.String({ minLength: 1, maxLength: 20_000 }),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50, description: 'Names of annotation-tags registry entries' })),
  attachment_ids: Type.Optional(Type.Array(Uuid(), { maxItems: 50, description: 'Attachments uploaded by the caller (POST /v1/annotations/attachments), or already on this annotation' })),
  reason: Reason,
};

export const CreateAnnotationBody = Type.Object(contentMembers, closed);
export const UpdateAnnotationBody = Type.Object({
  ...contentMembers,
  expected_version: Type.Integer({ minimum: 1, description: 'The version this edit was made on; another current version answers 409' }),
}, closed);
export const RedactBody = Type.Object({ reason: Type.String({ minLength: 1, maxLength: 2000, description: 'Why the content is removed (kept)' }) }, closed);

export const IdParams = Type.Object({ id: Uuid() }, closed);

export const AttachmentRef = Type.Object({
  attachment_id: Uuid(), sha256: Type.String(), content_type: Type.String(), size_bytes: Int64(),
  filename: Nullable(Type.String()), redacted: Type.Boolean(),
}, { ...closed, $id: 'AttachmentRef' });

export const Annotation = Type.Object({
  annotation_id: Uuid(),
  version: Type.Integer({ minimum: 1 }),
  target: AnnotationTarget,
  start_ns: Int64(),
  end_ns: Int64({ description: 'Inclusive; equal to start_ns for an instant' }),
  text: Nullable(Type.String({ description: 'null once redacted' })),
  tags: Type.Array(Type.String()),
  attachments: Type.Array(AttachmentRef),
  author: Type.String(),
  created_ns: Int64(),
  updated_ns: Int64(),
  updated_by: Type.String(),
  tx_id: Int64(),
  redacted: Nullable(Type.Object({ redacted_ns: Int64(), redacted_by: Type.String(), reason: Type.String() }, { ...closed, description: 'The redaction marker: who removed the content, when and why' })),
}, { ...closed, $id: 'Annotation' });

export const AnnotationVersions = Type.Object({
  items: Type.Array(Type.Object({
    version: Type.Integer({ minimum: 1 }), tx_id: Int64(), principal: Type.String(), committed_ns: Int64(), reason: Type.String(),
    content: Nullable(Type.Object({
      target: AnnotationTarget, start_ns: Int64(), end_ns: Int64(), text: Type.String(), tags: Type.Array(Type.String()), attachment_ids: Type.Array(Uuid()),
    }, { ...closed, description: 'null once redacted' })),
  }, closed)),
}, closed);

export const QueryBody = Type.Object({
  attributes: Type.Optional(Type.Array(Uuid(), { minItems: 1, maxItems: 10_000, description: 'Notes on any of these attributes' })),
  asset_subtree: Type.Optional(Uuid({ description: 'Notes on this asset, its descendants, or their attributes' })),
  episode: Type.Optional(Uuid()),
  start_ns: Type.Optional(Int64({ description: 'With end_ns: notes overlapping [start_ns, end_ns), ranges begun before start_ns included' })),
  end_ns: Type.Optional(Int64()),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 50 })),
  tags_match: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('any')], { description: 'all (default): every tag; any: at least one' })),
  author: Type.Optional(Type.String({ minLength: 1, description: 'The author\'s username (subject)' })),
  text: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Full-text search (english stemming; words, "a phrase", -excluded, or)' })),
  include_redacted: Type.Optional(Type.Boolean({ description: 'Redacted notes (their markers) too; default true' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size, default 100' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'next_cursor of the previous page' })),
}, closed);
export const QueryResponse = Type.Object({ items: Type.Array(Annotation), next_cursor: Nullable(Type.String()) }, closed);

export const AttachmentUploaded = Type.Object({
  attachment_id: Uuid(), sha256: Type.String(), content_type: Type.String(), size_bytes: Int64(), filename: Nullable(Type.String()),
  uploaded_by: Type.String(), uploaded_ns: Int64(),
}, closed);
export const UploadQuery = Type.Object({
  filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^/\\\\\\u0000-\\u001F\\u007F"]+$', description: 'The file name offered when the attachment is downloaded' })),
}, closed);
