// The head: a series' open, unsealed points, one LMDB value per series. It is encoded
// with the same chunk codec as sealed chunks (compact, checksummed) and prefixed by
// what the write path needs without scanning chunks:
//   byte 0      record version (1)
//   byte 1      flags: bit 0 = sealedEnd present
//   bytes 2-9   sealedEnd: time of the last sealed point, int64 LE (0 when absent)
//   bytes 10-17 lastWriteMs: wall-clock ms of the last write into the head, float64 LE
//   bytes 18-   the points as one encoded chunk, absent when the head is empty
import type { PointColumns } from './encoding/chunk-types.js';
import { encodeChunk } from './encoding/chunk.js';
import { decodeColumns } from './chunk-access.js';
import type { ReadView, SeriesEnv } from './series-env.js';

const PREFIX = 18;

export interface Head {
  sealedEnd: bigint | null;
  lastWriteMs: number;
  cols: PointColumns | null;
}

export function readHead(view: ReadView, series: Buffer): Head {
  const rec = view.env.heads.get(series, { transaction: view.txn });
  if (rec === undefined) return { sealedEnd: null, lastWriteMs: 0, cols: null };
  const has = (rec[1] & 1) === 1;
  return {
    sealedEnd: has ? rec.readBigInt64LE(2) : null,
    lastWriteMs: rec.readDoubleLE(10),
    cols: rec.length > PREFIX ? decodeColumns(series, null, rec.subarray(PREFIX)) : null,
  };
}

/** `encoded`: head.cols already encoded by the caller (saves a second encode). */
export function putHeadInTxn(env: SeriesEnv, series: Buffer, head: Head, encoded?: Uint8Array | null): void {
  const body = head.cols && head.cols.count > 0 ? (encoded ?? encodeChunk(head.cols)) : null;
  const rec = Buffer.allocUnsafe(PREFIX + (body ? body.byteLength : 0));
  rec[0] = 1;
  rec[1] = head.sealedEnd === null ? 0 : 1;
  rec.writeBigInt64LE(head.sealedEnd ?? 0n, 2);
  rec.writeDoubleLE(head.lastWriteMs, 10);
  if (body) rec.set(body, PREFIX);
  env.heads.putSync(series, rec);
}
