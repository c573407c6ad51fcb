// A copy of the series env with every table rewritten in key order: a maintenance
// compaction that also packs leaf pages. LMDB's own compacting copy (`compactCopy`,
// mdb_env_copy with MDB_CP_COMPACT) drops free pages but keeps each page as it is, and
// pages that grew by inserts spread over the key space (chunks of 1,000 series sealed in
// turn, rollup blocks growing in place) split half-empty: the fleet benchmark's chunk leaf
// pages are ~57% full, rollup and meta pages ~65%. Appending every entry in key order
// (MDB_APPEND) fills each leaf page before starting the next. Measured 2026-11-21 on the
// fleet (bench:storage-engine, 1,000 x 10,000 points, sealed): leaf pages chunks 153-157 ->
// 106, rollups 94-97 -> 66; 1.331 B/pt live, 1.314 compactCopy, 1.280 repacked (no free
// list either); the 10M-point series 0.438 -> 0.436. Later inserts split the
// packed pages they land in, so a live store drifts back towards the insert-order fill
// where it keeps writing (series' newest chunks, current rollup days); history stays packed.
// The copy also migrates rollup day blocks to their current form (a day row stored where
// all 24 hours hold points, 2026-11-28): the rewrite of stores written before it.
// Like compactCopy, swapping the copy in is a maintenance step with the service stopped.
import { join } from 'node:path';
import { openSeriesEnv, type SeriesEnv } from './series-env.js';
import { readTime } from './keys.js';
import { upgradeDayBlock } from './rollup-block.js';
import { DAY_BLOCK_CODE, HOUR_NS } from './rollup-read.js';

/** Rollup day blocks are written in the current form (version 3 where it applies, rollup-block.ts); other values as they are. */
function currentForm(name: TableName, key: Buffer, value: Buffer): Buffer {
  return name === 'rollups' && key.length === 25 && key[16] === DAY_BLOCK_CODE ? upgradeDayBlock(value, readTime(key, 17), HOUR_NS) : value;
}

/** Dirty bytes a write transaction of the copy may gather (a chunk is one page). */
const TXN_BYTES = 40 * 2 ** 20;

type TableName = 'chunks' | 'heads' | 'segments' | 'audit' | 'rollups' | 'meta' | 'tailPacks';
/** Every table of the series env, as repackCopy copies them (storage:repack checks each). */
export const TABLES: readonly TableName[] = ['chunks', 'heads', 'segments', 'audit', 'rollups', 'meta', 'tailPacks'];

/**
 * Writes a packed copy of `env` (one read snapshot of it) into the empty directory `dir`
 * and returns the path of its data file. The source may keep taking writes meanwhile:
 * they are not in the copy.
 */
export async function repackCopy(env: SeriesEnv, dir: string): Promise<string> {
  // the copy keeps the source's page size: its chunks were budgeted to the source's pages
  const out = openSeriesEnv(dir, { pageSize: env.pageSize });
  const entriesPerTxn = Math.max(1, Math.floor(TXN_BYTES / env.pageSize));
  const txn = env.root.useReadTransaction();
  try {
    for (const name of TABLES) {
      const it = env[name].getRange({ transaction: txn })[Symbol.iterator]();
      for (let done = false; !done;) {
        out.root.transactionSync(() => {
          for (let n = 0; n < entriesPerTxn; n++) {
            const r = it.next();
            if (r.done === true) { done = true; return; }
            // keys come in the table's order, so each lands at the end of its tree
            out[name].putSync(r.value.key, currentForm(name, r.value.key, r.value.value), { append: true });
          }
        });
      }
    }
    await out.root.flushed;
  } finally {
    txn.done();
    await out.close();
  }
  return join(dir, 'data.mdb');
}
