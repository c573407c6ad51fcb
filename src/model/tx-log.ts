// Every model change commits through modelTransaction: it allocates the tx_id first (so
// entities written in the same database transaction carry it), collects the events the
// change emits, and records both with the principal and reason. Readers of
// GET /v1/model/events therefore see exactly the committed changes, in tx_id order.
import { sqlTextArray, type Db, type Queryable } from './db.js';
import { stringifyJson } from '../json/json.js';
import { nowNs } from '../clock.js';

export interface ModelEvent {
  entity_kind: string;
  entity_id: string;
  action: string;
  details: Record<string, unknown>;
}

export interface EventSink {
  emit(entityKind: string, entityId: string, action: string, details?: Record<string, unknown>): void;
}

export interface Committed<T> {
  result: T;
  txId: bigint;
  committedNs: bigint;
  events: ModelEvent[];
}

export interface Who {
  principal: string;
  reason?: string;
}

type Listener = (tx: { tx_id: bigint; committed_ns: bigint; principal: string; reason: string; events: ModelEvent[] }) => void;
const listeners = new Set<Listener>();

/** Live feed of committed transactions inside this process (for SSE subscriptions). */
export function onModelCommit(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function modelTransaction<T>(
  db: Db,
  who: Who,
  fn: (tx: Queryable, txId: bigint, events: EventSink) => Promise<T>,
): Promise<Committed<T>> {
  const reason = who.reason ?? '';
  const out = await db.transaction(async (tx) => {
    // committed_ns is taken at allocation; the row lock on model_tx orders it with tx_id.
    const committedNs = nowNs();
    const { rows } = await tx.query<{ tx_id: bigint }>(
      'INSERT INTO model_tx (committed_ns, principal, reason) VALUES ($1, $2, $3) RETURNING tx_id',
      [committedNs, who.principal, reason],
    );
    const txId = rows[0].tx_id;
    const events: ModelEvent[] = [];
    const sink: EventSink = {
      emit(entity_kind, entity_id, action, details = {}) { events.push({ entity_kind, entity_id, action, details }); },
    };
    const result = await fn(tx, txId, sink);
    if (events.length > 0) {
      // One insert of unnested arrays: a bulk change stays one round trip with six
      // parameters, however many events (a VALUES row per event hit PostgreSQL's 65,535
      // parameters at 10,923 events, and a 5,000-series ingest batch was 30,000 of them).
      await tx.query(
        `INSERT INTO model_event (tx_id, seq, entity_kind, entity_id, action, details)
         SELECT $1::bigint, u.ord - 1, u.kind, u.id, u.action, u.details
           FROM unnest($2::text[], $3::uuid[], $4::text[], $5::jsonb[]) WITH ORDINALITY AS u(kind, id, action, details, ord)`,
        [txId, sqlTextArray(events.map((e) => e.entity_kind)), sqlTextArray(events.map((e) => e.entity_id)),
          sqlTextArray(events.map((e) => e.action)), sqlTextArray(events.map((e) => stringifyJson(e.details)))]);
    }
    return { result, txId, committedNs, events };
  });
  const feed = { tx_id: out.txId, committed_ns: out.committedNs, principal: who.principal, reason, events: out.events };
  for (const l of listeners) {
    try { l(feed); } catch { /* a faulty subscriber must not undo a committed change */ }
  }
  return out;
}

/** Resolves as_of_ns to the newest tx_id committed at or before it (0 when none). */
export async function txAsOf(q: Queryable, asOfNs: bigint): Promise<bigint> {
  const { rows } = await q.query<{ tx_id: bigint | null }>('SELECT max(tx_id) AS tx_id FROM model_tx WHERE committed_ns <= $1', [asOfNs]);
  return rows[0]?.tx_id ?? 0n;
}
