// Governed registries: list and read entries of a kind (any reader), add entries through
// the dedupe gate (registry-manage).
import { defineRoute, type AnyRoute } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { encodeCursor, decodeCursor } from '../../../cursor.js';
import { readTxFor } from '../../../model/versions/history.js';
import { entryRow, listEntryRows, toEntry } from '../../../model/registries/registry-entries.js';
import { createEntry } from '../../../model/registries/registry-writes.js';
import { RegistryEntry, RegistryEntryPage, KindParams, EntryParams, ListEntriesQuery, AsOfQuery, CreateEntryBody } from './schemas.js';

const AREA = 'Model';
const DEFAULT_LIMIT = 200;

export function registriesRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listRegistryEntries', method: 'get', path: '/v1/model/registries/{kind}', area: AREA,
      summary: 'Entries of one registry kind in name order (keyset pages), current or as of a time',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: KindParams, query: ListEntriesQuery,
      response: { status: 200, schema: RegistryEntryPage },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const { kind } = ctx.params;
        const q = ctx.query;
        let after: { name: string; id: string } | undefined;
        if (q.cursor) {
          const [name, id] = decodeCursor(`registry:${kind}`, q.cursor, 2);
          after = { name, id };
        }
        const tx = await readTxFor(ctx.service.db, q.as_of_ns);
        const page = await listEntryRows(ctx.service.db, kind, { tx, limit: q.limit ?? DEFAULT_LIMIT, after });
        const last = page.rows[page.rows.length - 1];
        return { body: { items: page.rows.map(toEntry), next_cursor: page.more && last ? encodeCursor(`registry:${kind}`, [last.name, last.entry_id]) : null } };
      },
    }),
    defineRoute({
      operationId: 'getRegistryEntry', method: 'get', path: '/v1/model/registries/{kind}/entries/{id}', area: AREA,
      summary: 'One registry entry, current or as of a time',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: EntryParams, query: AsOfQuery,
      response: { status: 200, schema: RegistryEntry },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const { kind, id } = ctx.params;
        const tx = await readTxFor(ctx.service.db, ctx.query.as_of_ns);
        const row = await entryRow(ctx.service.db, kind, id, tx);
        if (!row) throw new ServiceError('not-found', `${kind} entry ${id} not found${tx !== null ? ' at that time' : ''}`);
        return { body: toEntry(row) };
      },
    }),
    defineRoute({
      operationId: 'createRegistryEntry', method: 'post', path: '/v1/model/registries/{kind}/entries', area: AREA,
      summary: 'Add a registry entry; the dedupe gate refuses exact and polarity variants unless an override claim with a rationale is sent',
      description: 'Units need symbol, kind_id and to_canonical_factor (canonical = value × factor + offset). Quantity kinds need canonical_unit_name and '
        + 'canonical_unit_symbol (the canonical unit is created with them). Enum sets need members [{ordinal, name, concept_id?}]. '
        + 'A variant (case, spacing, punctuation, symbol form, or opposite polarity for enum concepts, enum sets and link types) is 409 duplicate-entry '
        + 'with the clashing entry in details.entry; override {rationale, entry_id?} (or override true with rationale) adds it anyway and is recorded. '
        + 'A byte-identical name or symbol is 409 name-conflict and cannot be overridden.',
      access: { kind: 'capability', capability: 'registry-manage', scope: 'anywhere' },
      params: KindParams, body: CreateEntryBody,
      response: { status: 201, schema: RegistryEntry },
      errors: [400, 401, 403, 409, 503],
      handler: async (ctx) => {
        const entry = await createEntry(ctx.service.db, { principal: ctx.principal?.subject ?? 'anonymous' }, ctx.params.kind, ctx.body);
        return { status: 201, body: entry };
      },
    }),
  ];
}
