// The request pipeline after routing, one step a module, in this order:
//   1. authenticate.ts    who is calling (401), cross-site browser requests (403 csrf-rejected)
//   2. validate.ts        path parameters (400), then authorize.ts: capability and scope (403/404)
//   3. request-input.ts   query and body (400, 413, 415)
//   4. idempotency.ts     replay a stored answer, or claim the key
//   5. the route's handler
//   6. reply.ts / sse.ts  the answer; idempotency.ts stores it under the key
// Any throw ends in error-handler.ts (server.ts catches it), the one place an error
// becomes an ErrorEnvelope.
import type { ServiceContext } from '../service-context.js';
import type { Reply, SseSink } from './route.js';
import type { Exchange } from './exchange.js';
import type { BodyReader } from './body.js';
import type { CompiledRoute } from './compiled-route.js';
import { authenticate } from './authenticate.js';
import { assertAcceptedText } from '../text-policy.js';
import { Authorizer } from './authorize.js';
import { readQuery, readJsonBody } from './request-input.js';
import { claimKey, settleClaim, releaseClaim } from './idempotency.js';
import { encodeReply } from './reply.js';
import { openStream } from './sse.js';
import { acceptUpgrade, upgradeRequired } from './websocket.js';
import { RequestContext } from './request-context.js';
import { writeResponse } from './respond.js';

export async function handleRequest(
  service: ServiceContext, c: CompiledRoute, ex: Exchange, params: Record<string, string>, body: BodyReader | null, streams: Set<SseSink>,
): Promise<void> {
  try {
    await handle(service, c, ex, params, body, streams);
  } finally {
    // A streamed body the handler did not read (refused before, or answered without it) is
    // drained, so that the paused socket carries the answer and the next request.
    ex.bodyStream?.discard();
  }
}

async function handle(
  service: ServiceContext, c: CompiledRoute, ex: Exchange, params: Record<string, string>, body: BodyReader | null, streams: Set<SseSink>,
): Promise<void> {
  const route = c.route;
  // 1. who is calling
  const principal = await authenticate(service, route, ex);

  // 2. path parameters, then capability and scope (before the body, so 401/403 never depend on a valid body)
  if (c.params) c.params.check('path', params);
  else assertAcceptedText('path', params);
  const authorizer = new Authorizer(service, principal, ex);
  await authorizer.authorizeRoute(route, params);

  // 3. query and body
  const query = readQuery(c, ex);
  const { raw, parsed } = await readJsonBody(c, ex, body);

  // 4. idempotency
  const claim = await claimKey(service, route, ex, principal, raw);
  if (claim === 'replayed') return;

  // 5. the handler
  const secure = service.config.trustProxy && (ex.headers.get('x-forwarded-proto') ?? '').toLowerCase() === 'https';
  const ctx = new RequestContext(ex, params, query, parsed, secure, principal, service, authorizer);
  let reply: Reply;
  try {
    reply = await route.handler(ctx);
  } catch (e) {
    await releaseClaim(claim);
    throw e;
  }

  // 6. the answer
  if (reply.kind === 'sse') { openStream(ex.res, reply, ex.correlationId, streams); ex.logLine(service.log, 200, true); return; }
  if (reply.kind === 'websocket') {
    if (!ex.upgrade) throw upgradeRequired(ex.path);
    acceptUpgrade(ex.res, ex.headers, ex.upgrade, reply);
    ex.logLine(service.log, 101, false);
    return;
  }
  const { status, out, headers } = encodeReply(reply, route.response.status);
  // A body lent by a read worker goes back to it once sent, or when the client leaves.
  const release = reply.kind === 'bytes' ? reply.release : undefined;
  if (release) ex.onAbort = release;
  try {
    await settleClaim(claim, status, headers, out);
  } catch (e) {
    release?.();
    throw e;
  }
  writeResponse(ex.res, status, [['X-Correlation-Id', ex.correlationId], ...headers], out, { onSent: release });
  ex.logLine(service.log, status, c.quietLog);
}
