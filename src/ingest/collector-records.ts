// The model side of ingest (main thread): collector rows (epochs and diagnostic counters),
// collector identities for mTLS, and the series behind each declared stream.
import { jsonbParam, type Db, type Queryable } from '../model/db.js';
import { nowNs } from '../clock.js';
import type { CollectorRow } from './thread-messages.js';

interface Row {
  collector_id: string;
  session_epoch: bigint;
  streams: unknown;
  last_batch_arrival_ns: bigint;
  last_collector_receipt_ns: bigint;
  watermark_ns: bigint;
  fenced_streams_total: bigint;
  last_fenced_ns: bigint | null;
}

const COLUMNS = 'collector_id, session_epoch, streams, last_batch_arrival_ns, last_collector_receipt_ns, watermark_ns, fenced_streams_total, last_fenced_ns';

function toRow(r: Row): CollectorRow {
  const streams = r.streams; // jsonb arrives parsed (db.ts)
  return {
    collector_id: r.collector_id,
    session_epoch: BigInt(r.session_epoch),
    streams: Array.isArray(streams) ? streams.map(String) : [],
    last_batch_arrival_ns: BigInt(r.last_batch_arrival_ns),
    last_collector_receipt_ns: BigInt(r.last_collector_receipt_ns),
    watermark_ns: BigInt(r.watermark_ns),
    fenced_streams_total: BigInt(r.fenced_streams_total),
    last_fenced_ns: r.last_fenced_ns === null ? null : BigInt(r.last_fenced_ns),
  };
}

export async function listCollectorRows(q: Queryable): Promise<CollectorRow[]> {
  return (await q.query<Row>(`SELECT ${COLUMNS} FROM ingest_collector ORDER BY collector_id`)).rows.map(toRow);
}

/**
 * Records a session's epoch if it is not below the one recorded. Returns null when it is
 * accepted, else the recorded (higher) epoch: the session is stale.
 */
export async function claimEpoch(db: Db, collectorId: string, epoch: bigint, identity: string): Promise<bigint | null> {
  const t = nowNs();
  const { rows } = await db.query<{ session_epoch: bigint }>(
    `INSERT INTO ingest_collector (collector_id, session_epoch, identity, updated_ns) VALUES ($1, $2, $3, $4)
     ON CONFLICT (collector_id) DO UPDATE SET session_epoch = EXCLUDED.session_epoch, identity = EXCLUDED.identity, updated_ns = EXCLUDED.updated_ns
     WHERE ingest_collector.session_epoch <= EXCLUDED.session_epoch
     RETURNING session_epoch`, [collectorId, epoch, identity, t]);
  if (rows.length > 0) return null;
  const cur = await db.query<{ session_epoch: bigint }>('SELECT session_epoch FROM ingest_collector WHERE collector_id = $1', [collectorId]);
  return BigInt(cur.rows[0]?.session_epoch ?? 0n);
}

/** Saves the worker's counters; the epoch only ever rises. */
export async function saveCollectorRows(db: Db, rows: CollectorRow[]): Promise<void> {
  const t = nowNs();
  for (const r of rows) {
    await db.query(
      `INSERT INTO ingest_collector (collector_id, session_epoch, streams, last_batch_arrival_ns, last_collector_receipt_ns, watermark_ns, fenced_streams_total, last_fenced_ns, updated_ns)
       VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (collector_id) DO UPDATE SET
         session_epoch = GREATEST(ingest_collector.session_epoch, EXCLUDED.session_epoch),
         streams = EXCLUDED.streams, last_batch_arrival_ns = EXCLUDED.last_batch_arrival_ns,
         last_collector_receipt_ns = EXCLUDED.last_collector_receipt_ns, watermark_ns = EXCLUDED.watermark_ns,
         fenced_streams_total = EXCLUDED.fenced_streams_total, last_fenced_ns = EXCLUDED.last_fenced_ns, updated_ns = EXCLUDED.updated_ns`,
      [r.collector_id, r.session_epoch, jsonbParam(r.streams), r.last_batch_arrival_ns, r.last_collector_receipt_ns, r.watermark_ns, r.fenced_streams_total, r.last_fenced_ns, t],
    );
  }
}

/** Collector identities named by any of the names (mTLS SANs), enabled ones only. */
export async function collectorIdentitiesNamed(q: Queryable, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const { rows } = await q.query<{ subject: string }>(
    `SELECT subject FROM auth_principal WHERE kind = 'collector' AND NOT disabled AND subject IN (SELECT jsonb_array_elements_text($1::jsonb))`,
    [names]);
  return rows.map((r) => r.subject);
}
