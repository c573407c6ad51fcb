// Grants give a principal a role on a scope: everywhere, an asset subtree, or a view.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../model/db.js';
import type { EventSink } from '../model/tx-log.js';
import { ServiceError, notFound } from '../errors.js';
import { nowNs } from '../clock.js';
import { isUuid } from '../uuid.js';

export type GrantScope = { kind: 'everywhere' } | { kind: 'asset'; asset_id: string } | { kind: 'view'; view_id: string };

export interface GrantRow {
  grant_id: string;
  principal_id: string;
  role_id: string;
  role_name: string;
  role_retired: boolean;
  capabilities: string[];
  scope_kind: 'everywhere' | 'asset' | 'view';
  scope_id: string | null;
  created_ns: bigint;
  tx_id: bigint;
}

const SELECT = `SELECT g.grant_id, g.principal_id, g.role_id, r.name AS role_name, r.retired AS role_retired, r.capabilities,
  g.scope_kind, g.scope_id, g.created_ns, g.tx_id FROM auth_grant g JOIN auth_role r ON r.role_id = g.role_id`;

export function scopeOf(g: Pick<GrantRow, 'scope_kind' | 'scope_id'>): GrantScope {
  if (g.scope_kind === 'asset') return { kind: 'asset', asset_id: g.scope_id as string };
  if (g.scope_kind === 'view') return { kind: 'view', view_id: g.scope_id as string };
  return { kind: 'everywhere' };
}

export async function grantsOf(q: Queryable, principalId: string): Promise<GrantRow[]> {
  return (await q.query<GrantRow>(`${SELECT} WHERE g.principal_id = $1 ORDER BY g.created_ns, g.grant_id`, [principalId])).rows;
}

export async function listGrants(
  q: Queryable, opts: { principalId?: string; roleId?: string; after?: { createdNs: bigint; id: string }; limit: number },
): Promise<GrantRow[]> {
  const params: unknown[] = [opts.limit];
  const where: string[] = [];
  if (opts.principalId) { params.push(opts.principalId); where.push(`g.principal_id = $${params.length}`); }
  if (opts.roleId) { params.push(opts.roleId); where.push(`g.role_id = $${params.length}`); }
  if (opts.after) {
    params.push(opts.after.createdNs, opts.after.id);
    where.push(`(g.created_ns, g.grant_id) > ($${params.length - 1}, $${params.length}::uuid)`);
  }
  const sql = `${SELECT} ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY g.created_ns, g.grant_id LIMIT $1`;
  return (await q.query<GrantRow>(sql, params as never[])).rows;
}

export async function createGrant(
  tx: Queryable, txId: bigint, events: EventSink,
  input: { principalId: string; roleId: string; scope: GrantScope },
): Promise<GrantRow> {
  const p = await tx.query('SELECT 1 FROM auth_principal WHERE principal_id = $1', [input.principalId]);
  if (p.rows.length === 0) throw notFound('principal', { principal_id: input.principalId });
  // role_id is the role's uuid or its name (the built-ins viewer, operator, engineer,
  // administrator, or a custom role's; names are unique ignoring case).
  const byId = isUuid(input.roleId);
  const r = await tx.query<{ role_id: string; retired: boolean }>(
    `SELECT role_id, retired FROM auth_role WHERE ${byId ? 'role_id = $1::uuid' : 'lower(name) = lower($1)'}`, [input.roleId]);
  if (r.rows.length === 0) throw notFound('role', { role_id: input.roleId });
  if (r.rows[0].retired) throw new ServiceError('conflict', 'the role is retired and cannot be granted', { role_id: input.roleId });
  input = { ...input, roleId: r.rows[0].role_id };
  const scopeId = input.scope.kind === 'asset' ? input.scope.asset_id : input.scope.kind === 'view' ? input.scope.view_id : null;
  const dup = await tx.query(
    `SELECT grant_id FROM auth_grant WHERE principal_id = $1 AND role_id = $2 AND scope_kind = $3 AND scope_id IS NOT DISTINCT FROM $4::uuid`,
    [input.principalId, input.roleId, input.scope.kind, scopeId]);
  if (dup.rows.length > 0) throw new ServiceError('conflict', 'the principal already holds this role on this scope', { grant_id: (dup.rows[0] as { grant_id: string }).grant_id });
  const id = randomUUID();
  await tx.query(
    `INSERT INTO auth_grant (grant_id, principal_id, role_id, scope_kind, scope_id, created_ns, tx_id) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [id, input.principalId, input.roleId, input.scope.kind, scopeId, nowNs(), txId]);
  events.emit('grant', id, 'created', { principal_id: input.principalId, role_id: input.roleId, scope: input.scope });
  return (await tx.query<GrantRow>(`${SELECT} WHERE g.grant_id = $1`, [id])).rows[0];
}

export async function deleteGrant(tx: Queryable, events: EventSink, grantId: string): Promise<GrantRow> {
  const current = (await tx.query<GrantRow>(`${SELECT} WHERE g.grant_id = $1`, [grantId])).rows[0];
  if (!current) throw notFound('grant', { grant_id: grantId });
  await tx.query('DELETE FROM auth_grant WHERE grant_id = $1', [grantId]);
  events.emit('grant', grantId, 'deleted', { principal_id: current.principal_id, role_id: current.role_id, scope: scopeOf(current) });
  return current;
}

export function grantView(g: GrantRow) {
  return {
    grant_id: g.grant_id,
    principal_id: g.principal_id,
    role_id: g.role_id,
    role_name: g.role_name,
    scope: scopeOf(g),
    created_ns: g.created_ns,
    tx_id: g.tx_id,
  };
}
