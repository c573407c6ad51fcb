import { Type, type Static } from '@sinclair/typebox';
import { Int64, Int64String, Uuid, Nullable, AnyJson, Limit } from '../../schemas/common.js';
import { OPERATION_STATES } from '../../../operations/catalogue.js';

export const OperationState = Type.Union(OPERATION_STATES.map((s) => Type.Literal(s)));

export const OperationRecord = Type.Object({
  id: Type.String({ pattern: '^[a-z][a-z0-9-]*:.+$', description: 'Namespaced id: a lowercase-start namespace, a colon, a local id' }),
  kind: Type.String({ pattern: '^[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)+$', description: 'Dotted lowercase name, at least two segments' }),
  principal: Type.String(),
  reason: Type.String(),
  source_change_set_id: Nullable(Uuid({ description: 'The change set that started this work, when one did' })),
  state: OperationState,
  stage: Type.String(),
  progress: Type.Object({
    completed: Int64({ minimum: 0 }),
    total: Nullable(Int64({ minimum: 0 })),
    unit: Type.String(),
  }, { additionalProperties: false }),
  rate: Nullable(Type.Number()),
  estimated_work_remaining: Nullable(Int64({ minimum: 0 })),
  affected_resources: Type.Array(Type.Object({ kind: Type.String(), id: Type.String() }, { additionalProperties: false })),
  cancellable: Type.Boolean(),
  created_ns: Int64String(),
  completed_ns: Nullable(Int64String()),
  detail: Type.Object({ adapter: Type.String() }, { additionalProperties: true, description: 'Discriminated by adapter; change-set: {adapter, change_set_id, change_set_state}' }),
  receipt: Nullable(Type.Object({ adapter: Type.String(), value: AnyJson() }, { additionalProperties: false })),
  error: AnyJson({ description: 'null, or what made the work fail' }),
}, { $id: 'OperationRecord', additionalProperties: false });

export const ListOperationsQuery = Type.Object({
  kind: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  state: Type.Optional(OperationState),
  limit: Type.Optional(Limit(1000)),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
}, { additionalProperties: false });
export type ListOperationsQuery = Static<typeof ListOperationsQuery>;

export const OperationPage = Type.Object({
  items: Type.Array(OperationRecord),
  next_cursor: Type.Optional(Nullable(Type.String())),
}, { additionalProperties: false });

export const OperationIdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200 }),
}, { additionalProperties: false });
