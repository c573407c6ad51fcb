// The model event feed: committed transactions in tx_id order with their events, read
// back from the transaction log, and filtered to what a reader may see. An event is
// anchored to an asset through details.asset_id (links to both their ends), to a view
// by its id; template events are model-wide definitions every reader sees.
import type { Queryable } from '../db.js';
import type { ModelEvent } from '../tx-log.js';

export interface EventTransaction {
  tx_id: bigint;
  committed_ns: bigint;
  principal: string;
  reason: string;
  events: ModelEvent[];
}

export interface EventVisibility {
  asset(assetId: string): Promise<boolean>;
  view(viewId: string): Promise<boolean>;
  /** True when the reader sees everything (no filtering needed). */
  everything: boolean;
}

async function readBatch(q: Queryable, sinceTx: bigint, limit: number): Promise<EventTransaction[]> {
  const { rows: txs } = await q.query<{ tx_id: bigint; committed_ns: bigint; principal: string; reason: string }>(
    'SELECT tx_id, committed_ns, principal, reason FROM model_tx WHERE tx_id > $1 ORDER BY tx_id LIMIT $2', [sinceTx, limit]);
  if (txs.length === 0) return [];
  const { rows: evs } = await q.query<ModelEvent & { tx_id: bigint }>(
    'SELECT tx_id, entity_kind, entity_id, action, details FROM model_event WHERE tx_id >= $1 AND tx_id <= $2 ORDER BY tx_id, seq',
    [txs[0].tx_id, txs[txs.length - 1].tx_id]);
  const byTx = new Map<bigint, ModelEvent[]>();
  for (const e of evs) {
    const list = byTx.get(e.tx_id) ?? [];
    list.push({ entity_kind: e.entity_kind, entity_id: e.entity_id, action: e.action, details: e.details });
    byTx.set(e.tx_id, list);
  }
  return txs.map((t) => ({ ...t, events: byTx.get(t.tx_id) ?? [] }));
}

/** The events of a transaction the reader may see; null when none (the transaction is hidden). */
export async function visiblePart(t: EventTransaction, v: EventVisibility): Promise<EventTransaction | null> {
  if (v.everything) return t;
  const kept: ModelEvent[] = [];
  for (const e of t.events) {
    const d = e.details as { asset_id?: unknown; to_asset?: unknown };
    let ok: boolean;
    if (e.entity_kind === 'view') ok = await v.view(e.entity_id);
    else if (typeof d.asset_id === 'string') ok = await v.asset(d.asset_id) && (typeof d.to_asset !== 'string' || await v.asset(d.to_asset));
    else ok = e.entity_kind === 'template';
    if (ok) kept.push(e);
  }
  return kept.length > 0 ? { ...t, events: kept } : null;
}

/** Up to limit visible transactions after sinceTx, ascending. */
export async function eventsSince(q: Queryable, sinceTx: bigint, limit: number, v: EventVisibility): Promise<EventTransaction[]> {
  const out: EventTransaction[] = [];
  let after = sinceTx;
  for (;;) {
    const batch = await readBatch(q, after, Math.max(limit * 2, 100));
    if (batch.length === 0) return out;
    for (const t of batch) {
      const part = await visiblePart(t, v);
      if (part) out.push(part);
      if (out.length >= limit) return out;
    }
    after = batch[batch.length - 1].tx_id;
  }
}
