// How a resource area declares its operations. The same declaration drives routing,
// validation (compiled once), authorization, idempotency and the OpenAPI contract, so
// the contract cannot drift from what the server enforces.
import type { Static, TSchema } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { Capability } from '../auth/capabilities.js';
import type { Principal, AccessTarget } from '../auth/access-types.js';
import type { ServiceContext } from '../service-context.js';
import type { BodyStream } from './body-stream.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * How the capability's scope is resolved (the spec's five kinds, plus `global`).
 * - `anywhere`: the capability held on any scope ("held anywhere").
 * - `global`: the capability held on the whole model (administration).
 * - `path-asset` / `path-view`: the asset or view named by path parameter `scopeParam`.
 * - `handler`: the handler resolves the target and calls ctx.authorize.
 * - `each-result`: the handler filters results with ctx.can; the capability must be held somewhere.
 * - `owner-or-admin`: the handler shows only what the caller owns unless it holds admin.
 */
export type ScopeKind = 'anywhere' | 'global' | 'path-asset' | 'path-view' | 'handler' | 'each-result' | 'owner-or-admin';

export type Access =
  | { kind: 'anonymous' }
  | { kind: 'authenticated'; scope: 'owner-or-admin' | 'self' }
  | { kind: 'capability'; capability: Capability; scope: ScopeKind; scopeParam?: string };

export interface ResponseSpec {
  /** 101: a WebSocket operation (its handler answers `{kind: 'websocket'}`). */
  status: 101 | 200 | 201 | 202 | 204 | 302;
  /** JSON schema of the body; omitted for 204/302 and for non-JSON bodies. */
  schema?: TSchema;
  /** Extra media types this operation can produce (e.g. application/x-msgpack), same shape. */
  alsoProduces?: string[];
  /** Schema of an `alsoProduces` media type whose body may take another shape (e.g. a columnar layout). */
  schemaFor?: Record<string, TSchema>;
  /** A non-JSON primary media type (text/plain, text/event-stream). */
  contentType?: string;
  description?: string;
}

export interface RouteSpec<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style path: /v1/series/{uuid}/raw */
  path: string;
  /** Resource area (OpenAPI tag). */
  area: string;
  summary: string;
  description?: string;
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  /** An empty body (no bytes, no content-type) is taken as `{}`: for bodies whose members are all optional. */
  bodyOptional?: boolean;
  /** Largest accepted body in bytes; defaults to the server-wide limit. */
  bodyLimit?: number;
  /**
   * The body is not buffered nor parsed: the handler reads it chunk by chunk from
   * ctx.bodyStream (uploads; body-stream.ts), up to `limit(config)` bytes. `mediaTypes`
   * names the accepted types in the contract. No `body` schema and no idempotency with it.
   */
  streamBody?: { limit: (config: ServiceContext['config']) => number; mediaTypes: string[]; description: string };
  response: ResponseSpec;
  /** Error statuses this operation can answer besides the universal ones. */
  errors: number[];
  idempotency?: 'optional' | 'required';
  handler: (ctx: HandlerContext<Static<P>, Static<Q>, Static<B>>) => Promise<Reply>;
}

// Route lists are heterogeneous; each route's own generics are checked where it is defined.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, any, any>;

/** Infers the generics of one route from its schemas. */
export function defineRoute<P extends TSchema, Q extends TSchema, B extends TSchema>(spec: RouteSpec<P, Q, B>): AnyRoute {
  return spec as unknown as AnyRoute;
}

export interface HandlerContext<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
  /** Lower-case header names; copied out of the uWS request before any await. */
  headers: ReadonlyMap<string, string>;
  remoteAddress: string;
  /** True when the client reached us over TLS or through a proxy that says so. */
  secure: boolean;
  principal: Principal | null;
  correlationId: string;
  log: Logger;
  service: ServiceContext;
  /** Aborted when the client goes away or the server shuts down. */
  signal: AbortSignal;
  /** Throws 403 (or 404 with hide=true, so existence does not leak) unless allowed. */
  authorize(capability: Capability, target: AccessTarget, opts?: { hide?: boolean }): Promise<void>;
  /** Whether the principal may use the capability on the target (for filtering results). */
  can(capability: Capability, target: AccessTarget): Promise<boolean>;
  /** Whether the request asked for the given media type (Accept negotiation). */
  accepts(mediaType: string): boolean;
  /** The unread body of a `streamBody` route; null on every other route. */
  bodyStream: BodyStream | null;
}

export type Headers = Array<[string, string]>;

export type Reply =
  | { kind?: 'json'; status?: number; body: unknown; headers?: Headers }
  /** `bytes` as an array: the body's pieces in order, sent without joining them (respond.ts). */
  | { kind: 'bytes'; status?: number; contentType: string; bytes: Uint8Array | string | readonly Uint8Array[]; headers?: Headers; release?: () => void }
  | { kind: 'empty'; status: 204 | 302 | 303; headers?: Headers }
  | { kind: 'sse'; headers?: Headers; start: (sink: SseSink) => void }
  /** Upgrades the request to a WebSocket (src/http/websocket.ts); `open` runs once it is open. */
  | { kind: 'websocket'; open: (link: WebSocketLink) => WebSocketHandlers };

/** A live Server-Sent Events response. Writes are corked and safe after the client left. */
export interface SseSink {
  /** Returns false when the client is gone or the send buffer is full (backpressure; the event is queued). */
  send(event: string, data: string, id?: string): boolean;
  /** Writes an event already framed (`id:`, `event:`, `data:` lines and the blank line) as UTF-8 bytes; the caller may reuse them after the call. */
  sendFrame(frame: Uint8Array): boolean;
  comment(text: string): boolean;
  readonly closed: boolean;
  /** Bytes written that the client has not taken yet (queued while the socket is full). */
  readonly backlogBytes: number;
  onClose(cb: () => void): void;
  /** Ends the stream; a `final` event is written after dropping whatever is still queued. */
  close(final?: { event: string; data: string }): void;
}

/** The server's side of an open WebSocket. Sends after close are ignored. */
export interface WebSocketLink {
  /** Sends one text message (a string, or its UTF-8 bytes, reusable after the call); false when the socket is closed or uWS dropped it. */
  send(text: string | Uint8Array): boolean;
  /** Bytes sent that the client has not taken yet. */
  bufferedBytes(): number;
  end(code: number, reason: string): void;
  readonly closed: boolean;
}

/** What a WebSocket route does with its connection. */
export interface WebSocketHandlers {
  /** One client message (text frames decoded as UTF-8). */
  message(text: string, binary: boolean): void;
  drain?(): void;
  closed(code: number, reason: string): void;
}
