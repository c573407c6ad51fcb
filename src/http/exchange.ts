// One request's state on the HTTP thread: what was copied out of the uWS request before
// any await (uWS request objects are stack-allocated, STACK-NOTES §10.2), the response with
// its aborted/done flags, and what the pipeline learns on the way (the principal's name for
// the log line, a lent body's release on abort). A class, so every request has one shape.
import type { ServiceContext } from '../service-context.js';
import type { LiveResponse } from './respond.js';
import type { us_socket_context_t } from 'uWebSockets.js';
import type { BodyStream } from './body-stream.js';

export class Exchange {
  /** Filled by authentication; written to the request's log line. */
  principalName: string | null = null;
  /** Made on first use: most requests need no abort signal, and one costs more than routing. */
  private ac: AbortController | null = null;
  /**
   * Runs when the client leaves: a lent body's release. A plain callback, because an
   * AbortController and its listener cost ~13 us a request (profiled), a tenth of a
   * one-point read's HTTP thread time.
   */
  onAbort: (() => void) | null = null;
  /** Set when the request arrived as a WebSocket upgrade: the context res.upgrade needs (websocket.ts). */
  upgrade: us_socket_context_t | null = null;
  /** The body of a streamBody route, read by the handler (body-stream.ts). */
  bodyStream: BodyStream | null = null;

  constructor(
    readonly res: LiveResponse,
    readonly started: bigint,
    /** Lower-case, as uWS gives it. */
    readonly method: string,
    /** Raw (percent-encoded) path. */
    readonly path: string,
    readonly rawQuery: string | undefined,
    /** Lower-case names. */
    readonly headers: Map<string, string>,
    readonly correlationId: string,
    readonly remoteAddress: string,
  ) {}

  /** Marks the response aborted; attached with res.onAborted before the first await. */
  aborted(): void {
    this.res.aborted = true;
    this.ac?.abort();
    this.onAbort?.();
  }

  signal(): AbortSignal {
    if (!this.ac) { this.ac = new AbortController(); if (this.res.aborted) this.ac.abort(); }
    return this.ac.signal;
  }

  /** Writes the request's one log line. */
  logLine(log: ServiceContext['log'], status: number, quiet: boolean, err?: unknown): void {
    const ms = Number(process.hrtime.bigint() - this.started) / 1e6;
    const line = { correlation_id: this.correlationId, method: this.method.toUpperCase(), path: this.path, status, ms: Math.round(ms * 1000) / 1000, principal: this.principalName };
    if (status >= 500) log.error({ ...line, err }, 'request failed');
    else if (quiet && status < 400) log.debug(line, 'request');
    else log.info(line, 'request');
  }
}
