// lmdb-js's getBinaryFast: a get without a copy. Its buffer is lmdb-js's reused one, valid
// until the next get, with only its JS length set to the value's size: native calls such as
// Buffer.equals, Buffer.from(buf) and copies see the whole buffer, so the value is compared,
// copied and viewed here by its JS length.
import type { Database, Transaction } from 'lmdb';

/** getBinaryFast also takes the read options its typings leave out (lmdb/read.js). */
type FastGet = (key: Buffer, options?: { transaction?: Transaction }) => Buffer | undefined;

/** The value at `key` in lmdb-js's reused buffer (inside a write transaction: that transaction's). */
export function fastGet(db: Database<Buffer, Buffer>, key: Buffer, txn?: Transaction): Buffer | undefined {
  return (db.getBinaryFast as FastGet).call(db, key, txn === undefined ? undefined : { transaction: txn });
}

/** A proper view of the value (no copy), valid until the next get. */
export function fastView(db: Database<Buffer, Buffer>, key: Buffer, txn?: Transaction): Buffer | undefined {
  const v = fastGet(db, key, txn);
  return v === undefined ? undefined : Buffer.from(v.buffer, v.byteOffset, v.length);
}

/** Whether a fastGet value holds exactly `b`'s bytes. */
export function sameBytes(fast: Buffer, b: Buffer): boolean {
  const n = fast.length;
  if (n !== b.length) return false;
  for (let i = 0; i < n; i++) if (fast[i] !== b[i]) return false;
  return true;
}

/** A copy of a fastGet value that outlives the next get. */
export function copyOfFast(fast: Buffer): Buffer {
  const n = fast.length, out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = fast[i];
  return out;
}
