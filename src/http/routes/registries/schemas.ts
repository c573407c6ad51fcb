import { Type, type Static } from '@sinclair/typebox';
import { Int64, Uuid, Nullable, AnyJson, Limit, CursorPage } from '../../schemas/common.js';
import { REGISTRY_KINDS } from '../../../model/registries/registry-entries.js';

export const RegistryKindSchema = Type.Union(REGISTRY_KINDS.map((k) => Type.Literal(k)), { description: 'Registry kind' });

/** One member of an enum set: the ordinal a collector sends and the name people read. */
export const EnumSetMember = Type.Object({
  ordinal: Type.Integer({ minimum: 0, description: 'The integer an ENUM stream carries for this state; unique in the set' }),
  name: Type.String({ minLength: 1, maxLength: 200, description: 'What people read (`running`); unique in the set, case-insensitively' }),
  concept_id: Type.Optional(Uuid({ description: 'An `enum-concepts` entry this state means (so `running` of two sets compares)' })),
}, { $id: 'EnumSetMember', additionalProperties: false });

const MEMBERS_DESCRIPTION = 'enum sets (required there, refused for other kinds): the states, each `{ordinal, name, concept_id?}`';
const MEMBERS_EXAMPLE = [{ ordinal: 0, name: 'stopped' }, { ordinal: 1, name: 'running' }, { ordinal: 2, name: 'fault' }];
const ENCODING_DESCRIPTION = 'enum sets and enum concepts: free-form JSON kept with the entry (how a source encodes the states, say); stored as given, never interpreted';

export const RegistryEntry = Type.Object({
  id: Uuid(),
  name: Type.String(),
  canonical_unit_id: Type.Optional(Uuid({ description: 'quantity kinds: the canonical unit' })),
  encoding: Type.Optional(AnyJson({ description: ENCODING_DESCRIPTION })),
  integrates_to: Type.Optional(Nullable(Uuid({ description: 'quantity kinds: the kind this one integrates to over time' }))),
  kind_id: Type.Optional(Uuid({ description: 'units: the quantity kind measured' })),
  members: Type.Optional(Type.Array(EnumSetMember, { description: MEMBERS_DESCRIPTION, examples: [MEMBERS_EXAMPLE] })),
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
  encoding: Type.Optional(AnyJson({ description: ENCODING_DESCRIPTION })),
  integrates_to: Type.Optional(Uuid()),
  kind_id: Type.Optional(Uuid()),
  members: Type.Optional(Type.Array(EnumSetMember, { maxItems: 65_536, description: MEMBERS_DESCRIPTION, examples: [MEMBERS_EXAMPLE] })),
  override: Type.Optional(AnyJson({ description: 'Override claim past the dedupe gate: true (with rationale) or {rationale, entry_id?}' })),
  rationale: Type.Optional(Type.String({ maxLength: 2000 })),
  symbol: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  to_canonical_factor: Type.Optional(Type.Number()),
  to_canonical_offset: Type.Optional(Type.Number()),
}, { additionalProperties: false });
export type CreateEntryBody = Static<typeof CreateEntryBody>;
