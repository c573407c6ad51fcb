// The HTTP front end on uWebSockets.js. One catch-all handler copies what it needs out of
// the request, routes it (404/405), starts reading the body, and hands the request to the
// pipeline (handle-request.ts: authenticate, authorize, validate, idempotency, handler,
// reply); any error it throws becomes an ErrorEnvelope in error-handler.ts.
//
// uWS rules kept here (STACK-NOTES §10): onAborted is attached before the first await;
// headers and params are copied out of the request synchronously; later writes are
// corked; nothing touches a response after abort or end.
import uWS from 'uWebSockets.js';
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../service-context.js';
import type { AnyRoute, SseSink, WebSocketLink } from './route.js';
import { webSocketBehavior } from './websocket.js';
import { Router } from './router.js';
import { readBody, type BodyReader } from './body.js';
import { BodyStream } from './body-stream.js';
import type { LiveResponse } from './respond.js';
import { ServiceError } from '../errors.js';
import { Exchange } from './exchange.js';
import { compileRoute, type CompiledRoute } from './compiled-route.js';
import { handleRequest } from './handle-request.js';
import { sendError } from './error-handler.js';
import { checkRequestHead } from './request-limits.js';

export interface HttpServer {
  readonly port: number;
  readonly router: Router;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

export async function startHttpServer(service: ServiceContext, routes: AnyRoute[]): Promise<HttpServer> {
  const router = new Router();
  const compiled = new Map<AnyRoute, CompiledRoute>();
  for (const route of routes) {
    router.add(route);
    compiled.set(route, compileRoute(route));
  }

  const { log, config } = service;
  let inflight = 0;
  let closing = false;
  let drained: (() => void) | null = null;
  const streams = new Set<SseSink>();
  const app = uWS.App();

  const links = new Set<WebSocketLink>();
  // An upgrade request (any path) runs the same pipeline; only a route answering
  // {kind: 'websocket'} upgrades it (websocket.ts). Other requests reach app.any below.
  app.ws('/*', webSocketBehavior(links, (res, req, context) => onRequest(res, req, context)));
  app.any('/*', (res: LiveResponse, req) => onRequest(res, req, null));

  function onRequest(res: LiveResponse, req: uWS.HttpRequest, upgrade: uWS.us_socket_context_t | null): void {
    const headers = new Map<string, string>();
    let headerBytes = 0;
    req.forEach((k, v) => { headers.set(k, v); headerBytes += k.length + v.length + 4; });
    const ex = new Exchange(res, process.hrtime.bigint(), req.getMethod(), req.getUrl(), req.getQuery(), headers, randomUUID(),
      Buffer.from(res.getRemoteAddressAsText()).toString());
    const fail = (e: unknown) => {
      const status = sendError(res, e, ex.correlationId, log);
      ex.logLine(log, status, false, status >= 500 ? e : undefined);
    };

    if (closing) { fail(new ServiceError('shutting-down', 'the service is shutting down')); return; }
    const tooBig = checkRequestHead(ex, headerBytes);
    if (tooBig) { fail(tooBig); return; }
    const match = router.match(ex.method, ex.path);
    if (match.kind === 'not-found') { fail(new ServiceError('route-not-found', `no operation at ${ex.path}`)); return; }
    if (match.kind === 'method-not-allowed') {
      const allow = match.allow.map((m) => m.toUpperCase()).join(', ');
      fail(new ServiceError('method-not-allowed', `${ex.method.toUpperCase()} is not allowed on ${ex.path}; allowed: ${allow}`, { allow: match.allow.map((m) => m.toUpperCase()) }, { Allow: allow }));
      return;
    }
    const c = compiled.get(match.route) as CompiledRoute;

    res.onAborted(() => { ex.aborted(); });
    const m = ex.method;
    const hasBody = m === 'post' || m === 'put' || m === 'patch' || m === 'delete';
    let body: BodyReader | null = null;
    if (hasBody && c.route.streamBody) {
      const limit = c.route.streamBody.limit(config);
      const refusal = BodyStream.refusalFor(headers.get('content-length') ?? '', limit);
      if (refusal) { fail(refusal); return; }
      ex.bodyStream = new BodyStream(res, Number(headers.get('content-length') || -1), limit);
    } else if (hasBody) {
      body = readBody(res, headers.get('content-length') ?? '', c.route.bodyLimit ?? config.bodyLimit);
    }

    ex.upgrade = upgrade;
    inflight++;
    handleRequest(service, c, ex, match.params, body, streams).catch(fail).finally(() => {
      inflight--;
      if (closing && inflight === 0 && drained) drained();
    });
  }

  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen(config.host, config.httpPort, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${config.host}:${config.httpPort}`))));
  });
  const port = uWS.us_socket_local_port(listenSocket);
  log.info({ host: config.host, port }, 'http listening');

  return {
    port,
    router,
    async close(graceMs = 10_000) {
      if (closing) return;
      closing = true;
      uWS.us_listen_socket_close(listenSocket);
      if (inflight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, graceMs).unref();
        });
      }
      for (const s of streams) s.close();
      for (const l of [...links]) l.end(1001, 'the service is shutting down');
      // Keep-alive sockets would otherwise keep the process alive (STACK-NOTES §10.9).
      (app as unknown as { close(): void }).close();
    },
  };
}
