// The model event feed: committed transactions, ascending, filtered to what the caller
// may read; and a live subscription over SSE. SSE format (docs/decisions.md):
//   event: model-tx
//   id: <tx_id>
//   data: <Model event transaction as JSON, int64 exact>
// An optional since_tx replays the backlog first; live transactions that commit during
// the replay are held and sent after it, so none is lost or repeated. A comment line
// every 15 s keeps proxies from closing an idle stream.
import { defineRoute, type AnyRoute, type HandlerContext, type SseSink } from '../../route.js';
import { stringifyJson } from '../../../json/json.js';
import { onModelCommit } from '../../../model/tx-log.js';
import { eventsSince, visiblePart, type EventTransaction, type EventVisibility } from '../../../model/events/events.js';
import { modelOf, assetReader } from './context.js';
import { EventsQuery, EventTransaction as EventTransactionSchema, SubscribeBody } from './schemas.js';
import { Type } from '@sinclair/typebox';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;
const HEARTBEAT_MS = 15_000;
const REPLAY_BATCH = 500;

async function visibilityFor(ctx: HandlerContext): Promise<EventVisibility> {
  const reader = await assetReader(ctx);
  const views = new Map<string, boolean>();
  return {
    everything: reader.everything,
    asset: (id) => reader.asset(id),
    async view(id) {
      let ok = views.get(id);
      if (ok === undefined) { ok = await ctx.can('read', { kind: 'view', id }); views.set(id, ok); }
      return ok;
    },
  };
}

function subscribe(ctx: HandlerContext, sink: SseSink, since: bigint | null, kinds: Set<string> | null, v: EventVisibility): void {
  const db = modelOf(ctx).db;
  let lastSent = since ?? -1n;
  let replaying = since !== null;
  const held: EventTransaction[] = [];
  let chain: Promise<void> = Promise.resolve();

  const send = async (t: EventTransaction): Promise<void> => {
    if (sink.closed || t.tx_id <= lastSent) return;
    const filtered = kinds ? { ...t, events: t.events.filter((e) => kinds.has(e.entity_kind)) } : t;
    lastSent = t.tx_id;
    if (filtered.events.length === 0) return;
    const part = await visiblePart(filtered, v);
    if (part && !sink.closed) sink.send('model-tx', stringifyJson(part), String(part.tx_id));
  };
  const unsubscribe = onModelCommit((t) => {
    const tx: EventTransaction = { tx_id: t.tx_id, committed_ns: t.committed_ns, principal: t.principal, reason: t.reason, events: t.events };
    if (replaying) held.push(tx);
    else chain = chain.then(() => send(tx)).catch((e) => ctx.log.warn({ err: e }, 'model event subscription: send failed'));
  });
  const heartbeat = setInterval(() => { if (!sink.closed) sink.comment('keep-alive'); }, HEARTBEAT_MS);
  heartbeat.unref();
  sink.onClose(() => { unsubscribe(); clearInterval(heartbeat); });
  sink.comment('subscribed');

  if (since !== null) {
    chain = (async () => {
      for (;;) {
        const batch = await eventsSince(db, lastSent, REPLAY_BATCH, { everything: true, asset: async () => true, view: async () => true });
        for (const t of batch) await send(t);
        if (batch.length < REPLAY_BATCH || sink.closed) break;
      }
      replaying = false;
      for (const t of held.splice(0)) await send(t);
    })().catch((e) => { ctx.log.warn({ err: e }, 'model event subscription: replay failed'); sink.close(); });
  }
}

export function eventRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listModelEvents', method: 'get', path: '/v1/model/events', area: 'Model',
      summary: 'Committed model transactions after since_tx, ascending, with the events the caller may read',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      query: EventsQuery,
      response: { status: 200, schema: Type.Array(EventTransactionSchema) },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const limit = Math.min(Number(ctx.query.limit ?? DEFAULT_LIMIT), MAX_LIMIT);
        const since = BigInt(ctx.query.since_tx ?? 0);
        return { body: await eventsSince(modelOf(ctx).db, since, limit, await visibilityFor(ctx)) };
      },
    }),
    defineRoute({
      operationId: 'subscribeModelEvents', method: 'post', path: '/v1/model/events/subscribe', area: 'Model',
      summary: 'A live feed (SSE) of committed model transactions, filtered to what the caller may read',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      body: SubscribeBody,
      response: { status: 200, contentType: 'text/event-stream', description: 'event: model-tx, id: tx_id, data: a Model event transaction' },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const v = await visibilityFor(ctx);
        const since = ctx.body.since_tx === undefined ? null : BigInt(ctx.body.since_tx);
        const kinds = ctx.body.entity_kinds ? new Set(ctx.body.entity_kinds) : null;
        return { kind: 'sse', start: (sink) => subscribe(ctx, sink, since, kinds, v) };
      },
    }),
  ];
}
