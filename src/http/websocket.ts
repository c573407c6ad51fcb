// WebSockets on uWebSockets.js. An upgrade request runs the same pipeline as any request
// (authentication at upgrade by session cookie or bearer token, capability, the route's
// handler); a handler that answers `{kind: 'websocket'}` gets the connection, and any other
// answer (an error envelope, say) is sent as a plain HTTP response, refusing the upgrade.
// A GET without an upgrade on such a route is 426 upgrade-required.
//
// Sends are corked and ignored once the socket closed (uWS forbids touching a closed
// WebSocket); a message given as bytes is sent as a text frame (uWS copies what it
// cannot send at once, so the caller may reuse them). maxBackpressure is set above what
// routes let a client leave unread (they check bufferedBytes() and close a slow consumer
// themselves, after a final message), so uWS never drops a message silently.
import type uWS from 'uWebSockets.js';
import type { Reply, WebSocketHandlers, WebSocketLink } from './route.js';
import type { LiveResponse } from './respond.js';
import { ServiceError } from '../errors.js';

/** Largest message a client may send (a subscribe message with a long select); uWS closes the connection above it. */
export const WS_MAX_MESSAGE_BYTES = 256 * 1024;
/** uWS's own bound on a socket's unsent bytes: above the live-update limit (1 MiB) plus a final message. */
const WS_MAX_BACKPRESSURE = 8 << 20;
/** uWS closes a connection silent for this long; it sends pings on its own before that. */
const WS_IDLE_TIMEOUT_S = 60;

interface SocketData {
  open: Extract<Reply, { kind: 'websocket' }>['open'];
  link: Link | null;
  handlers: WebSocketHandlers | null;
}

class Link implements WebSocketLink {
  closed = false;
  constructor(private readonly ws: uWS.WebSocket<SocketData>) {}

  send(text: string | Uint8Array): boolean {
    if (this.closed) return false;
    let status = 0;
    this.ws.cork(() => { status = this.ws.send(text, false); });
    return status !== 2;
  }

  bufferedBytes(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount();
  }

  end(code: number, reason: string): void {
    if (this.closed) return;
    // The close handler runs inside end() and marks the link closed.
    this.ws.cork(() => { this.ws.end(code, reason.slice(0, 120)); });
  }
}

/** Upgrades the request once the pipeline has accepted it. */
export function acceptUpgrade(res: LiveResponse, headers: ReadonlyMap<string, string>, context: uWS.us_socket_context_t, reply: Extract<Reply, { kind: 'websocket' }>): void {
  if (res.aborted || res.done) return;
  res.done = true;
  const data: SocketData = { open: reply.open, link: null, handlers: null };
  res.cork(() => {
    res.upgrade(data, headers.get('sec-websocket-key') ?? '', headers.get('sec-websocket-protocol') ?? '', headers.get('sec-websocket-extensions') ?? '', context);
  });
}

/** The 426 a handler's websocket reply becomes on a request that asked for no upgrade. */
export function upgradeRequired(path: string): ServiceError {
  return new ServiceError('upgrade-required', `${path} is a WebSocket: send a GET with Upgrade: websocket (see docs/live-updates.md)`, undefined, { Upgrade: 'websocket' });
}

/** The behaviour of every WebSocket route; `upgrade` is the server's request pipeline. */
export function webSocketBehavior(
  links: Set<WebSocketLink>,
  upgrade: (res: LiveResponse, req: uWS.HttpRequest, context: uWS.us_socket_context_t) => void,
): uWS.WebSocketBehavior<SocketData> {
  return {
    maxPayloadLength: WS_MAX_MESSAGE_BYTES,
    maxBackpressure: WS_MAX_BACKPRESSURE,
    idleTimeout: WS_IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,
    upgrade,
    open(ws) {
      const data = ws.getUserData();
      const link = new Link(ws);
      data.link = link;
      links.add(link);
      data.handlers = data.open(link);
    },
    message(ws, message, isBinary) {
      const data = ws.getUserData();
      // The ArrayBuffer is neutered when this callback returns: decode (copy) it now.
      const text = Buffer.from(message).toString('utf8');
      data.handlers?.message(text, isBinary);
    },
    drain(ws) {
      ws.getUserData().handlers?.drain?.();
    },
    close(ws, code, message) {
      const data = ws.getUserData();
      if (data.link) { data.link.closed = true; links.delete(data.link); }
      const reason = Buffer.from(message).toString('utf8');
      data.handlers?.closed(code, reason);
    },
  };
}
