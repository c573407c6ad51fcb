// Roles are named sets of capabilities. Four built-in roles are created by migration
// 0010 with fixed ids and cannot be changed (their mapping is documented and other
// parts of the system rely on it); custom roles can be created, updated and retired.
// A retired role grants nothing, but its grants stay listed so nobody loses track.
import type { Queryable } from '../model/db.js';
import { CAPABILITIES, type Capability } from './capabilities.js';
import { ServiceError, notFound } from '../errors.js';
import type { EventSink } from '../model/tx-log.js';
import { randomUUID } from 'node:crypto';

const KNOWN = new Set<string>(CAPABILITIES);

/** Unknown capability strings are never permission: this is the single test for it. */
export function isCapability(s: string): s is Capability {
  return KNOWN.has(s);
}

export const BUILTIN_ROLES = {
  viewer: { id: '00000000-0000-4000-a000-000000000001', capabilities: ['read'] },
  operator: { id: '00000000-0000-4000-a000-000000000002', capabilities: ['read', 'annotate', 'enter', 'episode-manage'] },
  engineer: {
    id: '00000000-0000-4000-a000-000000000003',
    capabilities: ['read', 'annotate', 'enter', 'approve', 'amend', 'model-edit', 'registry-manage', 'calc-author',
      'display-author', 'display-publish', 'episode-manage'],
  },
  administrator: { id: '00000000-0000-4000-a000-000000000004', capabilities: [...CAPABILITIES] },
} as const satisfies Record<string, { id: string; capabilities: readonly Capability[] }>;

export type BuiltinRoleName = keyof typeof BUILTIN_ROLES;

export interface RoleRow {
  role_id: string;
  name: string;
  description: string;
  capabilities: string[];
  builtin: boolean;
  retired: boolean;
  version: bigint;
  tx_id: bigint;
}

const COLUMNS = 'role_id, name, description, capabilities, builtin, retired, version, tx_id';

/** Sorted, de-duplicated capabilities in the enum's order; rejects unknown strings with the field named. */
export function normaliseCapabilities(list: readonly string[], field = 'capabilities'): Capability[] {
  const set = new Set<string>();
  for (const c of list) {
    if (!isCapability(c)) throw new ServiceError('invalid-request', `${field}: "${c}" is not a capability`, { errors: [{ field, problem: `unknown capability "${c}"` }] });
    set.add(c);
  }
  return CAPABILITIES.filter((c) => set.has(c));
}

export async function listRoles(q: Queryable): Promise<RoleRow[]> {
  return (await q.query<RoleRow>(`SELECT ${COLUMNS} FROM auth_role ORDER BY builtin DESC, lower(name), role_id`)).rows;
}

export async function getRole(q: Queryable, roleId: string): Promise<RoleRow | null> {
  return (await q.query<RoleRow>(`SELECT ${COLUMNS} FROM auth_role WHERE role_id = $1`, [roleId])).rows[0] ?? null;
}

async function nameTaken(q: Queryable, name: string, exceptId?: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM auth_role WHERE lower(name) = lower($1) AND role_id <> $2', [name, exceptId ?? '00000000-0000-0000-0000-000000000000']);
  return rows.length > 0;
}

export async function createRole(
  tx: Queryable, txId: bigint, events: EventSink,
  input: { name: string; description?: string; capabilities: readonly string[] },
): Promise<RoleRow> {
  const caps = normaliseCapabilities(input.capabilities);
  if (await nameTaken(tx, input.name)) throw new ServiceError('name-conflict', `a role named "${input.name}" already exists`, { name: input.name });
  const id = randomUUID();
  const { rows } = await tx.query<RoleRow>(
    `INSERT INTO auth_role (role_id, name, description, capabilities, tx_id) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [id, input.name, input.description ?? '', caps, txId],
  );
  events.emit('role', id, 'created', { name: input.name, capabilities: caps });
  return rows[0];
}

export async function updateRole(
  tx: Queryable, txId: bigint, events: EventSink, roleId: string,
  change: { name?: string; description?: string; capabilities?: readonly string[]; retired?: boolean },
): Promise<RoleRow> {
  const current = (await tx.query<RoleRow>(`SELECT ${COLUMNS} FROM auth_role WHERE role_id = $1 FOR UPDATE`, [roleId])).rows[0];
  if (!current) throw notFound('role', { role_id: roleId });
  if (current.builtin) throw new ServiceError('conflict', `built-in role "${current.name}" cannot be changed; create a custom role instead`, { role_id: roleId });
  const caps = change.capabilities ? normaliseCapabilities(change.capabilities) : current.capabilities;
  const name = change.name ?? current.name;
  if (change.name !== undefined && await nameTaken(tx, change.name, roleId)) {
    throw new ServiceError('name-conflict', `a role named "${change.name}" already exists`, { name: change.name });
  }
  const { rows } = await tx.query<RoleRow>(
    `UPDATE auth_role SET name = $2, description = $3, capabilities = $4, retired = $5, version = version + 1, tx_id = $6
     WHERE role_id = $1 RETURNING ${COLUMNS}`,
    [roleId, name, change.description ?? current.description, caps, change.retired ?? current.retired, txId],
  );
  const action = change.retired === true && !current.retired ? 'retired' : change.retired === false && current.retired ? 'restored' : 'updated';
  events.emit('role', roleId, action, { name, capabilities: caps });
  return rows[0];
}

export function roleView(r: RoleRow) {
  return {
    role_id: r.role_id,
    name: r.name,
    description: r.description,
    capabilities: r.capabilities.filter(isCapability),
    builtin: r.builtin,
    retired: r.retired,
    version: r.version,
    tx_id: r.tx_id,
  };
}
