// Idempotency-Key as one mechanism for every route that accepts it. The first request
// with a key claims (principal, route, key) by inserting a row with no response yet;
// a concurrent duplicate finds the claim, waits for the first to finish and replays its
// response, so the operation runs once. A different body under the same key is a 409;
// a failed first attempt releases the key so the client can retry.
import { createHash } from 'node:crypto';
import type { Db } from './db.js';
import { ServiceError } from '../errors.js';
import { nowNs } from '../clock.js';

export const IDEMPOTENCY_KEY_MAX = 255;
const KEY_RE = /^[\x21-\x7e]+$/;
/** How long a duplicate waits for the first request before answering 409. */
const WAIT_FOR_FIRST_MS = 30_000;
const POLL_MS = 20;
/** A claim with no response after this long belonged to a process that died. */
const ABANDONED_CLAIM_NS = 10n * 60n * 1_000_000_000n;
/** Keys are remembered for a day, then purged. */
export const IDEMPOTENCY_TTL_NS = 24n * 3600n * 1_000_000_000n;

export interface StoredResponse {
  status: number;
  headers: Array<[string, string]>;
  body: Buffer;
}

export type Claim =
  | { kind: 'proceed'; complete(r: StoredResponse): Promise<void>; release(): Promise<void> }
  | { kind: 'replay'; response: StoredResponse };

export interface IdempotencyStore {
  validateKey(raw: string | undefined, required: boolean): string | null;
  claim(principal: string, route: string, key: string, body: Uint8Array, signal?: AbortSignal): Promise<Claim>;
  purgeExpired(): Promise<number>;
}

export function createIdempotencyStore(db: Db): IdempotencyStore {
  return {
    validateKey(raw, required) {
      if (raw === undefined) {
        if (required) throw new ServiceError('idempotency-key-required', 'Idempotency-Key: this operation requires the header');
        return null;
      }
      if (raw.length === 0) throw new ServiceError('invalid-idempotency-key', 'Idempotency-Key: must not be empty');
      if (raw.length > IDEMPOTENCY_KEY_MAX) {
        throw new ServiceError('invalid-idempotency-key', `Idempotency-Key: longer than ${IDEMPOTENCY_KEY_MAX} characters`, { length: raw.length });
      }
      if (!KEY_RE.test(raw)) throw new ServiceError('invalid-idempotency-key', 'Idempotency-Key: only visible ASCII characters are allowed');
      return raw;
    },

    async claim(principal, route, key, body, signal) {
      const hash = createHash('sha256').update(body).digest();
      const deadline = Date.now() + WAIT_FOR_FIRST_MS;
      for (;;) {
        const ins = await db.query(
          `INSERT INTO idempotency_record (principal, route, key, body_hash, created_ns)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
          [principal, route, key, hash, nowNs()],
        );
        if (ins.rowCount === 1) {
          return {
            kind: 'proceed',
            async complete(r) {
              await db.query(
                'UPDATE idempotency_record SET status = $4, headers = $5, body = $6 WHERE principal = $1 AND route = $2 AND key = $3',
                [principal, route, key, r.status, r.headers as unknown as Record<string, unknown>, r.body],
              );
            },
            async release() {
              await db.query('DELETE FROM idempotency_record WHERE principal = $1 AND route = $2 AND key = $3 AND status IS NULL', [principal, route, key]);
            },
          };
        }
        const { rows } = await db.query<{ body_hash: Buffer; status: number | null; headers: Array<[string, string]> | null; body: Buffer | null; created_ns: bigint }>(
          'SELECT body_hash, status, headers, body, created_ns FROM idempotency_record WHERE principal = $1 AND route = $2 AND key = $3',
          [principal, route, key],
        );
        const row = rows[0];
        if (!row) continue; // the first attempt failed and released the key: claim it ourselves
        if (!Buffer.from(row.body_hash).equals(hash)) {
          throw new ServiceError('idempotency-conflict', 'Idempotency-Key: already used with a different request body');
        }
        if (row.status !== null && row.body !== null) {
          return { kind: 'replay', response: { status: Number(row.status), headers: row.headers ?? [], body: Buffer.from(row.body) } };
        }
        if (row.created_ns < nowNs() - ABANDONED_CLAIM_NS) {
          // The process that claimed it died mid-request: the claim is void.
          await db.query('DELETE FROM idempotency_record WHERE principal = $1 AND route = $2 AND key = $3 AND status IS NULL AND created_ns = $4',
            [principal, route, key, row.created_ns]);
          continue;
        }
        if (Date.now() > deadline || signal?.aborted) {
          throw new ServiceError('idempotency-conflict', 'Idempotency-Key: the first request with this key is still running');
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },

    async purgeExpired() {
      const r = await db.query('DELETE FROM idempotency_record WHERE created_ns < $1', [nowNs() - IDEMPOTENCY_TTL_NS]);
      return r.rowCount;
    },
  };
}
