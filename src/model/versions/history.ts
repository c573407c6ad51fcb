// Transaction-time history shared by every model entity. A version row is valid from
// tx_from (the transaction that wrote it) until tx_to (the one that replaced it; NULL
// while current). Reads take a ReadTx: null for the current model, or the tx_id an
// as_of_ns resolved to, so one query text serves both and current reads keep using the
// partial "tx_to IS NULL" indexes.
import type { Queryable, SqlParam } from '../db.js';
import { txAsOf } from '../tx-log.js';
import { ServiceError } from '../../errors.js';

/** null: the current model; a bigint: the model as of that transaction. */
export type ReadTx = bigint | null;

/** Positional parameters for one statement, added in order of appearance. */
export class SqlArgs {
  readonly values: SqlParam[] = [];
  /** Adds a value and returns its placeholder ($n). */
  add(v: SqlParam): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** SQL condition selecting the version of `alias` valid at the read transaction. */
export function validAt(alias: string, tx: ReadTx, args: SqlArgs): string {
  if (tx === null) return `${alias}.tx_to IS NULL`;
  const p = args.add(tx);
  return `(${alias}.tx_from <= ${p} AND (${alias}.tx_to IS NULL OR ${alias}.tx_to > ${p}))`;
}

/** Resolves an optional as_of_ns to a ReadTx (null when absent: the current model). */
export async function readTxFor(q: Queryable, asOfNs: number | bigint | null | undefined): Promise<ReadTx> {
  if (asOfNs === undefined || asOfNs === null) return null;
  const ns = BigInt(asOfNs);
  if (ns < 0n) throw new ServiceError('invalid-request', 'as_of_ns: must not be negative', { errors: [{ field: 'as_of_ns', problem: 'negative' }] });
  return txAsOf(q, ns);
}

/**
 * Ends the current version of one entity at txId so that a new version can be inserted
 * with tx_from = txId. A version written earlier in the same transaction is removed
 * instead (it would be valid for no transaction at all). Returns the ended row, or null
 * when the entity has no current version.
 */
export async function endCurrentVersion<T>(
  q: Queryable, table: string, key: Record<string, string>, txId: bigint,
): Promise<T | null> {
  const args = new SqlArgs();
  const where = Object.entries(key).map(([col, v]) => `${col} = ${args.add(v)}`).join(' AND ');
  const tx = args.add(txId);
  const { rows } = await q.query<T>(`UPDATE ${table} SET tx_to = ${tx} WHERE ${where} AND tx_to IS NULL RETURNING *`, args.values);
  if (rows.length === 0) return null;
  await q.query(`DELETE FROM ${table} WHERE ${where} AND tx_from = ${tx} AND tx_to = ${tx}`, args.values);
  return rows[0];
}

/** Whether a database error is a unique-index violation (SQLSTATE 23505) on the named index. */
export function isUniqueViolation(e: unknown, index?: string): boolean {
  const err = e as { code?: string; constraint?: string; message?: string } | null;
  if (!err || err.code !== '23505') return false;
  if (index === undefined) return true;
  return err.constraint === index || (err.message ?? '').includes(index);
}

/** Checks an optional expected_tx against the entity's current tx_id (409 conflict on mismatch). */
export function checkExpectedTx(what: string, expected: number | bigint | undefined, current: bigint): void {
  if (expected === undefined) return;
  if (BigInt(expected) !== current) {
    throw new ServiceError('conflict', `${what} changed: expected tx ${String(expected)}, current tx ${current}`, { expected_tx: String(expected), current_tx: String(current) });
  }
}
