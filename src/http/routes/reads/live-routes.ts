// Live resolved updates: POST /v1/read/subscribe (Server-Sent Events, one subscription per
// stream, resumable with Last-Event-ID) and GET /v1/stream (a WebSocket multiplexing
// subscriptions under client-chosen ids). Both run src/reads/live; the protocol is
// docs/live-updates.md. Authentication happens once, when the stream opens or the socket
// upgrades (session cookie or bearer token); each subscription's attributes are filtered
// to what the principal may read, again after every model change.
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { defineRoute, type AnyRoute, type HandlerContext, type SseSink, type WebSocketHandlers, type WebSocketLink } from '../../route.js';
import { ServiceError, bug } from '../../../errors.js';
import { parseJson } from '../../../json/json.js';
import { assertSameOrigin } from '../../../auth/csrf.js';
import type { ResolveRequest } from '../../../reads/read-resolution.js';
import { LiveSubscription, checkLiveResolve, type LiveAccess, type LiveEvent, type LiveOptions, type LiveOutput } from '../../../reads/live/live-subscription.js';
import type { LiveHub } from '../../../reads/live/live-hub.js';
import { PAYLOAD_HEADROOM, putAsciiAt, type PointsPayload } from '../../../reads/live/live-bytes.js';
import { ExcludeQuality, ReadResolve, ReadUnits } from './schemas.js';

const closed = { additionalProperties: false } as const;
const AREA = 'Reads';

/** What a subscription may ask besides `resolve`: the resolved reads' unit and quality options. */
const liveOptionMembers = {
  units: Type.Optional(ReadUnits),
  exclude_quality: Type.Optional(ExcludeQuality),
};

export const SubscribeBody = Type.Object({ resolve: ReadResolve, ...liveOptionMembers }, closed);

/** A client's messages on /v1/stream, checked by their `type` so errors name the member at fault. */
const SubscribeMessageSchema = Type.Object({
  type: Type.Literal('subscribe'),
  id: Type.String({ minLength: 1, maxLength: 128 }),
  resolve: ReadResolve,
  ...liveOptionMembers,
  resume_after: Type.Optional(Type.String({ maxLength: 64 })),
}, closed);
const UnsubscribeMessageSchema = Type.Object({ type: Type.Literal('unsubscribe'), id: Type.String({ minLength: 1, maxLength: 128 }) }, closed);
const checkers = { subscribe: TypeCompiler.Compile(SubscribeMessageSchema), unsubscribe: TypeCompiler.Compile(UnsubscribeMessageSchema) };
type SubscribeMessage = Static<typeof SubscribeMessageSchema>;
type ClientMessage = SubscribeMessage | Static<typeof UnsubscribeMessageSchema>;

/** The message, or a ServiceError naming each offending member (`message.<path>`). */
function checkMessage(parsed: unknown): ClientMessage {
  const type = typeof parsed === 'object' && parsed !== null ? (parsed as { type?: unknown }).type : undefined;
  if (type !== 'subscribe' && type !== 'unsubscribe') {
    throw new ServiceError('invalid-request', 'message.type: expected "subscribe" or "unsubscribe" (a message is {"type":"subscribe","id","resolve"} or {"type":"unsubscribe","id"})', { errors: [{ field: 'message.type', problem: 'expected subscribe or unsubscribe' }] });
  }
  const checker = checkers[type];
  if (checker.Check(parsed)) return parsed as ClientMessage;
  const errors: Array<{ field: string; problem: string }> = [];
  for (const err of checker.Errors(parsed)) {
    const field = `message${err.path.replaceAll('/', '.')}`;
    if (!errors.some((x) => x.field === field)) errors.push({ field, problem: err.message });
    if (errors.length >= 20) break;
  }
  const first = errors[0] ?? { field: 'message', problem: 'invalid' };
  throw new ServiceError('invalid-request', `${first.field}: ${first.problem}`, { errors });
}

/** Subscriptions one WebSocket may hold at once. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 100;
/** Largest JSON nesting accepted in a message (as for request bodies). */
const MAX_JSON_DEPTH = 64;
const HEARTBEAT_MS = 15_000;

function hubOf(ctx: HandlerContext): LiveHub {
  const hub = ctx.service.parts.live;
  if (!hub) throw new ServiceError('model-unavailable', 'live updates need the ingest and model parts, which are not started');
  return hub;
}

/**
 * The subscriber's read permission, asked again at every resolution: its credentials are
 * authenticated afresh (a logout, a revoked token or a changed grant ends or narrows a
 * long-lived subscription), or null when they no longer authenticate or grant read.
 */
function accessOf(ctx: HandlerContext): LiveAccess {
  const access = ctx.service.access;
  const p0 = ctx.principal;
  if (access.mode !== 'enforced' || !p0 || p0.via === 'disabled-mode') return async () => (c, t) => ctx.can(c, t);
  return async () => {
    const p = await access.authenticate({
      authorization: ctx.headers.get('authorization'), cookie: ctx.headers.get('cookie'), remoteAddress: ctx.remoteAddress, correlationId: ctx.correlationId,
    });
    if (!p || p.id !== p0.id || !(await access.holdsAnywhere(p, 'read'))) return null;
    return (c, t) => access.allows(p, c, t);
  };
}

/** SSE: `id:`, `event:`, `data:` per event; the final `closing` event ends the stream. */
function sseOutput(sink: SseSink): LiveOutput {
  return {
    event: (type: LiveEvent, id: string | null, payload: string) => { sink.send(type, payload, id ?? undefined); },
    // `id: …\nevent: points\ndata: ` before the payload, the blank line after it (JSON text has no raw line break)
    points: (id: string, p: PointsPayload) => {
      const head = `id: ${id}\nevent: points\ndata: `;
      const from = p.start - head.length;
      putAsciiAt(p.buf, from, head);
      p.buf[p.end] = 10;
      p.buf[p.end + 1] = 10;
      sink.sendFrame(p.buf.subarray(from, p.end + 2));
    },
    backlogBytes: () => sink.backlogBytes,
    end: (payload: string) => { sink.close({ event: 'closing', data: payload }); },
    get closed() { return sink.closed; },
  };
}

/** One subscription's view of a WebSocket: each message `{"type", "id", "event_id"?, …payload}`. */
function wsOutput(link: WebSocketLink, id: string, endAll: (payload: string, except: string) => void, dropOne: () => void): LiveOutput {
  const idText = JSON.stringify(id);
  /** `{"type":"points","id":…,"event_id":"` as UTF-8 (the id is the client's). */
  const pointsHead = Buffer.from(`{"type":"points","id":${idText},"event_id":"`, 'utf8');
  return {
    event: (type: LiveEvent, eventId: string | null, payload: string) => {
      link.send(`{"type":"${type}","id":${idText}${eventId === null ? '' : `,"event_id":"${eventId}"`}${payload === '{}' ? '' : `,${payload.slice(1, -1)}`}}`);
    },
    // the members before the payload's own, over its opening brace (put back for the next transport)
    points: (eventId: string, p: PointsPayload) => {
      const from = p.start + 1 - (pointsHead.byteLength + eventId.length + 2);
      if (p.start - from > PAYLOAD_HEADROOM) throw bug('points prefix', `${p.start - from} bytes, past the payload's headroom (a subscription id is at most 128 characters)`);
      p.buf.set(pointsHead, from);
      const at = putAsciiAt(p.buf, from + pointsHead.byteLength, eventId);
      p.buf[at] = 34; // "
      p.buf[at + 1] = 44; // , over the payload's {
      link.send(p.buf.subarray(from, p.end));
      p.buf[p.start] = 123;
    },
    backlogBytes: () => link.bufferedBytes(),
    end: (payload: string, wholeConnection: boolean) => {
      link.send(`{"type":"closing","id":${idText},${payload.slice(1, -1)}}`);
      if (wholeConnection) endAll(payload, id); else dropOne();
    },
    get closed() { return link.closed; },
  };
}

function errorMessage(id: string | null, e: unknown): string {
  const err = e instanceof ServiceError ? e : new ServiceError('internal', 'an unexpected fault occurred');
  const details = err.details ? `,"details":${JSON.stringify(err.details, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}` : '';
  return `{"type":"error","id":${JSON.stringify(id)},"code":"${err.code}","error":${JSON.stringify(err.message)}${details}}`;
}

/** The WebSocket session: its subscriptions by client id. */
function streamSession(ctx: HandlerContext, hub: LiveHub, link: WebSocketLink): WebSocketHandlers {
  const subs = new Map<string, LiveSubscription>();
  const heartbeat = setInterval(() => { link.send(`{"type":"heartbeat","position":"${hub.position()}"}`); }, HEARTBEAT_MS);
  heartbeat.unref();
  /** The connection's backlog is over the limit: every subscription gets the closing message, then the socket closes. */
  const endAll = (payload: string, except: string) => {
    const all = [...subs];
    subs.clear();
    for (const [id, s] of all) {
      if (id !== except) link.send(`{"type":"closing","id":${JSON.stringify(id)},${payload.slice(1, -1)}}`);
      s.close(null, '');
    }
    link.end(1008, 'slow consumer: see the closing message');
  };

  const subscribe = async (m: SubscribeMessage): Promise<void> => {
    if (subs.has(m.id)) throw new ServiceError('invalid-request', `id: subscription "${m.id}" already exists on this socket; unsubscribe it first or choose another id`, { errors: [{ field: 'message.id', problem: 'already subscribed' }] });
    if (subs.size >= MAX_SUBSCRIPTIONS_PER_SOCKET) throw new ServiceError('read-too-large', `at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions per socket`, { limit: MAX_SUBSCRIPTIONS_PER_SOCKET, field: 'message' });
    const req = m.resolve as ResolveRequest;
    checkLiveResolve(req, 'message.resolve');
    const options: LiveOptions = { units: m.units, exclude_quality: m.exclude_quality };
    const sub = new LiveSubscription(hub, accessOf(ctx), req, () => { if (subs.get(m.id) === sub) subs.delete(m.id); }, options);
    subs.set(m.id, sub);
    try {
      await sub.prepare();
    } catch (e) {
      subs.delete(m.id);
      sub.abandon();
      throw e;
    }
    if (link.closed || subs.get(m.id) !== sub) { sub.abandon(); return; }
    sub.begin(wsOutput(link, m.id, endAll, () => sub.close(null, '')), m.resume_after ?? null);
  };

  return {
    message(text, binary) {
      let parsed: unknown;
      let m: ClientMessage;
      let id: string | null = null;
      try {
        if (binary) throw new ServiceError('invalid-request', 'message: send JSON text frames, not binary ones', { errors: [{ field: 'message', problem: 'binary frame' }] });
        parsed = parseJson(Buffer.from(text, 'utf8'), { maxDepth: MAX_JSON_DEPTH });
        if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { id?: unknown }).id === 'string') id = (parsed as { id: string }).id;
        m = checkMessage(parsed);
      } catch (e) {
        link.send(errorMessage(id, e));
        return;
      }
      if (m.type === 'unsubscribe') {
        const sub = subs.get(m.id);
        if (!sub) { link.send(errorMessage(m.id, new ServiceError('not-found', `id: no subscription "${m.id}" on this socket`))); return; }
        subs.delete(m.id);
        sub.close(null, '');
        link.send(`{"type":"unsubscribed","id":${JSON.stringify(m.id)}}`);
        return;
      }
      subscribe(m).catch((e: unknown) => {
        if (!(e instanceof ServiceError)) ctx.log.error({ err: e }, 'live subscription failed');
        link.send(errorMessage(m.id, e));
      });
    },
    closed() {
      clearInterval(heartbeat);
      for (const s of subs.values()) s.close(null, '');
      subs.clear();
    },
  };
}

export function liveRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'subscribeRead', method: 'post', path: '/v1/read/subscribe', area: AREA,
      summary: 'Live resolved updates over Server-Sent Events: the latest value per attribute, then every committed point; rebinds and scope changes followed',
      description: 'Events `snapshot`, `points`, `resolved`, `resumed`, `reset`, `heartbeat` and a final `closing`; ids `<boot>-<seq>`. '
        + '`units` and `exclude_quality` as in the resolved reads (values in another unit of the same quantity kind; bad or bad-and-uncertain points left out). '
        + 'Send `Last-Event-ID` to resume within the resume window (60 s, bounded). A client that leaves more than 1 MiB unread gets `closing` '
        + '(code slow-consumer) and the stream ends. `as_of_ns` and `range` are refused: a subscription follows the current model from now. See docs/live-updates.md.',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      body: SubscribeBody,
      response: { status: 200, contentType: 'text/event-stream', description: 'Server-Sent Events; formats in docs/live-updates.md' },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const hub = hubOf(ctx);
        const req = ctx.body.resolve as ResolveRequest;
        checkLiveResolve(req);
        const lastId = ctx.headers.get('last-event-id') ?? null;
        const sub = new LiveSubscription(hub, accessOf(ctx), req, undefined, { units: ctx.body.units, exclude_quality: ctx.body.exclude_quality });
        await sub.prepare();
        let begun = false;
        const signal = ctx.signal;
        if (signal.aborted) { sub.abandon(); return { kind: 'empty', status: 204 }; }
        signal.addEventListener('abort', () => { if (!begun) sub.abandon(); }, { once: true });
        return {
          kind: 'sse',
          start: (sink) => {
            begun = true;
            sink.onClose(() => sub.close(null, ''));
            sub.begin(sseOutput(sink), lastId);
          },
        };
      },
    }),
    defineRoute({
      operationId: 'openStream', method: 'get', path: '/v1/stream', area: AREA,
      summary: 'Live resolved updates over a WebSocket: many subscriptions on one connection, under ids the client chooses',
      description: 'Upgrade with a session cookie or a bearer token (authenticated once, at the upgrade; a cookie-authenticated upgrade from another site is refused). '
        + 'Client messages: `{"type":"subscribe","id","resolve","units"?,"exclude_quality"?,"resume_after"?}` and `{"type":"unsubscribe","id"}`. '
        + 'Server messages carry `type` and the subscription `id`: `snapshot`, `points`, `resolved`, `resumed`, `reset`, `closing`, `error` (a bad message or a refused subscription; the socket stays open), `unsubscribed`; '
        + 'and `heartbeat` for the connection. A client that leaves more than 1 MiB unread gets `closing` (code slow-consumer) on each subscription and close code 1008. See docs/live-updates.md.',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      response: { status: 101, description: 'Switching Protocols: the connection is a WebSocket carrying the messages of docs/live-updates.md' },
      errors: [401, 403, 426, 503],
      handler: async (ctx) => {
        const hub = hubOf(ctx);
        // Browsers send cookies on cross-site WebSocket upgrades: refuse those as for a state-changing request.
        assertSameOrigin(ctx.principal, 'post', ctx.headers, ctx.service.config);
        return { kind: 'websocket', open: (link) => streamSession(ctx, hub, link) };
      },
    }),
  ];
}
