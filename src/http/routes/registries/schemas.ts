import { Type, type Static } from '@sinclair/typebox';
import { Int64, Uuid, Nullable, AnyJson, Limit, CursorPage } from '../../schemas/common.js';
import { REGISTRY_KINDS } from '../../../model/registries/registry-entries.js';

export const RegistryKindSchema = Type.Union(REGISTRY_KINDS.map((k) => Type.Literal(k)), { description: 'Registry kind' });

export const RegistryEntry = Type.Object({
  id: Uuid(),
  name: Type.String(),
  canonical_unit_id: Type.Optional(Uuid({ description: 'quantity kinds: the canonical unit' })),
  encoding: Type.Optional(AnyJson()),
  integrates_to: Type.Optional(Nullable(Uuid({ description: 'quantity kinds: the kind this one integrates to over time' }))),
  kind_id: Type.Optional(Uuid({ description: 'units: the quantity kind measured' })),
  members: Type.Optional(AnyJson({ description: 'enum sets: [{ordinal, name, concept_id?}]' })),
  rationale: Type.Optional(Type.String()),
  symbol: Type.Optional(Type.String()),
  system: Type.Optional(Type.Boolean()),
  to_canonical_factor: Type.Optional(Type.Number({ description: 'canonical = value × factor + offset (nearest double of the exact factor)' })),
  to_canonical_offset: Type.Optional(Type.Number()),
  tx_id: Type.Optional(Int64()),
  valid_from_ns: Type.Optional(Int64()),
  valid_to_ns: Type.Optional(Nullable(Int64())),
}, { $id: 'RegistryEntry', additionalProperties: false });

export const RegistryEntryPage = CursorPage(RegistryEntry);

export const KindParams = Type.Object({ kind: RegistryKindSchema }, { additionalProperties: false });
export const EntryParams = Type.Object({ kind: RegistryKindSchema, id: Uuid() }, { additionalProperties: false });

export const ListEntriesQuery = Type.Object({
  as_of_ns: Type.Optional(Int64({ minimum: 0 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  limit: Type.Optional(Limit(1000)),
}, { additionalProperties: false });
export type ListEntriesQuery = Static<typeof ListEntriesQuery>;

export const AsOfQuery = Type.Object({ as_of_ns: Type.Optional(Int64({ minimum: 0 })) }, { additionalProperties: false });

export const CreateEntryBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  canonical_unit_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  canonical_unit_symbol: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  encoding: Type.Optional(AnyJson()),
  integrates_to: Type.Optional(Uuid()),
  kind_id: Type.Optional(Uuid()),
  members: Type.Optional(AnyJson()),
  override: Type.Optional(AnyJson({ description: 'Override claim past the dedupe gate: true (with rationale) or {rationale, entry_id?}' })),
  rationale: Type.Optional(Type.String({ maxLength: 2000 })),
  symbol: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  to_canonical_factor: Type.Optional(Type.Number()),
  to_canonical_offset: Type.Optional(Type.Number()),
}, { additionalProperties: false });
export type CreateEntryBody = Static<typeof CreateEntryBody>;
