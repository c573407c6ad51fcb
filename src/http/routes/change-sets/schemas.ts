import { Type, type Static } from '@sinclair/typebox';
import { Int64String, Uuid, Nullable } from '../../schemas/common.js';

const NamePath = Type.Object({ name: Type.String(), path: Type.String() }, { additionalProperties: false });

export const ChangeSetOperation = Type.Object({
  kind: Type.String({ minLength: 1, maxLength: 100, description: 'asset.rename' }),
  asset_id: Uuid(),
  name: Type.String({ minLength: 1, maxLength: 200 }),
}, { additionalProperties: false });

export const ChangeSetPreview = Type.Object({
  summary: Type.String(),
  changes: Type.Array(Type.Object({
    resource_kind: Type.String(),
    resource_id: Uuid(),
    base_tx: Int64String(),
    before: NamePath,
    after: NamePath,
  }, { additionalProperties: false })),
  warnings: Type.Array(Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false })),
}, { additionalProperties: false });

export const ChangeSetReceipt = Type.Object({
  operation_id: Type.String({ pattern: '^change:[0-9a-fA-F-]{36}$' }),
  model_tx: Int64String(),
  committed_operations: Type.Array(Type.Object({
    kind: Type.String(), resource_kind: Type.String(), resource_id: Uuid(), resulting_tx: Int64String(),
  }, { additionalProperties: false })),
  audit_events: Type.Array(Type.Object({ entity_kind: Type.String(), entity_id: Uuid(), action: Type.String() }, { additionalProperties: false })),
}, { $id: 'ChangeSetReceipt', additionalProperties: false });

export const ChangeSet = Type.Object({
  change_set_id: Uuid(),
  state: Type.String({ description: 'preview, committed, cancelled or failed' }),
  reason: Type.String(),
  operations: Type.Array(ChangeSetOperation, { minItems: 1, maxItems: 1 }),
  preview: ChangeSetPreview,
  preview_hash: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the canonical JSON of preview (keys sorted, no whitespace)' }),
  created_ns: Int64String(),
  committed_ns: Nullable(Int64String()),
  principal: Type.String(),
  receipt: Nullable(ChangeSetReceipt),
}, { $id: 'ChangeSet', additionalProperties: false });

export const CreateChangeSetBody = Type.Object({
  reason: Type.String({ maxLength: 2000 }),
  operations: Type.Array(ChangeSetOperation, { minItems: 1, maxItems: 1 }),
}, { additionalProperties: false });
export type CreateChangeSetBody = Static<typeof CreateChangeSetBody>;

export const CommitChangeSetBody = Type.Object({
  preview_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
}, { additionalProperties: false });

export const ChangeSetParams = Type.Object({ id: Uuid() }, { additionalProperties: false });
