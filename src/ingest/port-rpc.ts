// A small request/response protocol over a MessagePort (or a Worker, which has the same
// shape). The ingest worker asks the main thread to authenticate credentials, open
// sessions in the model and persist diagnostics; the main thread asks the worker for
// live diagnostics and to stop. Errors travel as {code, message, details} (structured
// clone drops classes) and are rebuilt as ServiceError by code.
import { ServiceError, type WireError } from '../errors.js';

interface Endpoint {
  postMessage(value: unknown, transfer?: readonly ArrayBuffer[]): void;
  on(event: 'message', listener: (value: unknown) => void): unknown;
  off(event: 'message', listener: (value: unknown) => void): unknown;
}

type Envelope =
  | { rpc: 'req'; id: number; op: string; arg: unknown }
  | { rpc: 'res'; id: number; ok: true; value: unknown }
  | { rpc: 'res'; id: number; ok: false; error: WireError }
  | { rpc: 'note'; op: string; arg: unknown };

export type Handler = (arg: never) => Promise<unknown> | unknown;

function isEnvelope(v: unknown): v is Envelope {
  return typeof v === 'object' && v !== null && 'rpc' in v;
}

export class PortRpc {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly handlers = new Map<string, Handler>();
  private closedError: Error | null = null;
  private readonly listener = (v: unknown) => this.receive(v);

  constructor(private readonly port: Endpoint) {
    port.on('message', this.listener);
  }

  /** Registers the handler of an operation the other side may call or notify. */
  handle<A>(op: string, fn: (arg: A) => Promise<unknown> | unknown): void {
    this.handlers.set(op, fn as Handler);
  }

  call<R>(op: string, arg: unknown): Promise<R> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.port.postMessage({ rpc: 'req', id, op, arg } satisfies Envelope);
    });
  }

  /** One-way message: no answer, no error report. Buffers in `transfer` are moved to the other side. */
  notify(op: string, arg: unknown, transfer?: readonly ArrayBuffer[]): void {
    if (!this.closedError) this.port.postMessage({ rpc: 'note', op, arg } satisfies Envelope, transfer);
  }

  /** Fails every outstanding call (the other side went away). */
  close(reason: Error): void {
    this.closedError = reason;
    this.port.off('message', this.listener);
    for (const p of this.pending.values()) p.reject(reason);
    this.pending.clear();
  }

  private receive(v: unknown): void {
    if (!isEnvelope(v)) return;
    if (v.rpc === 'res') {
      const p = this.pending.get(v.id);
      if (!p) return;
      this.pending.delete(v.id);
      if (v.ok) p.resolve(v.value);
      else p.reject(ServiceError.fromWire(v.error));
      return;
    }
    const fn = this.handlers.get(v.op);
    if (v.rpc === 'note') {
      if (fn) Promise.resolve().then(() => fn(v.arg as never)).catch(() => undefined);
      return;
    }
    const { id } = v;
    const reply = (m: Envelope) => { if (!this.closedError) this.port.postMessage(m); };
    if (!fn) {
      reply({ rpc: 'res', id, ok: false, error: { code: 'internal', message: `no handler for ${v.op}` } });
      return;
    }
    Promise.resolve()
      .then(() => fn(v.arg as never))
      .then(
        (value) => reply({ rpc: 'res', id, ok: true, value }),
        (e: unknown) => reply({
          rpc: 'res', id, ok: false,
          error: e instanceof ServiceError ? e.toWire() : { code: 'internal', message: e instanceof Error ? e.message : String(e) },
        }),
      );
  }
}
