// What the contract says about a request before it is sent: does the operation's schema
// accept it? The answer comes from the operation's own TypeBox schemas, checked with the
// same routing, query coercion, JSON reading and text policy the server declares
// (src/http/router.ts, query.ts, request-input.ts, validate.ts), so "invalid accepted"
// means the server let through what its own contract refuses.
import type { AnyRoute } from '../../src/http/route.js';
import type { Exchange } from '../../src/http/exchange.js';
import type { CompiledRoute } from '../../src/http/compiled-route.js';
import { compileRoute } from '../../src/http/compiled-route.js';
import { Router } from '../../src/http/router.js';
import { readQuery, readJsonBody } from '../../src/http/request-input.js';
import { assertAcceptedText } from '../../src/text-policy.js';
import { MAX_URL_BYTES } from '../../src/http/request-limits.js';
import type { HostileRequest } from './mutations.js';

/** `valid`: the schema accepts it; `invalid`: it refuses it; `elsewhere`: the URL routes to another operation (or none). */
export type Verdict = { kind: 'valid' } | { kind: 'invalid'; why: string } | { kind: 'elsewhere' };

const IDEMPOTENCY_KEY = /^[\x21-\x7e]+$/;

export class ContractOracle {
  private readonly router = new Router();
  private readonly compiled = new Map<AnyRoute, CompiledRoute>();

  constructor(routes: AnyRoute[], private readonly bodyLimit: number) {
    for (const r of routes) { this.router.add(r); this.compiled.set(r, compileRoute(r)); }
  }

  async verdict(route: AnyRoute, req: HostileRequest): Promise<Verdict> {
    const url = req.path + (req.query ? `?${req.query}` : '');
    if (Buffer.byteLength(url) > MAX_URL_BYTES) return { kind: 'invalid', why: 'url too long' };
    const match = this.router.match(route.method, req.path);
    if (match.kind !== 'route' || match.route !== route) return { kind: 'elsewhere' };
    const c = this.compiled.get(route) as CompiledRoute;
    const headers = new Map(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
    try {
      if (c.params) c.params.check('path', match.params);
      else assertAcceptedText('path', match.params);
      // A stand-in for the server's Exchange: the two readers only look at these members.
      const ex = { rawQuery: req.query === '' ? undefined : req.query, headers } as unknown as Exchange;
      readQuery(c, ex);
      const sent = req.body ?? new Uint8Array(0);
      const hasBody = route.method !== 'get';
      if (hasBody && sent.byteLength > (route.bodyLimit ?? this.bodyLimit)) return { kind: 'invalid', why: 'body too large' };
      if (hasBody) await readJsonBody(c, ex, { done: Promise.resolve(Buffer.from(sent)) });
    } catch (e) {
      return { kind: 'invalid', why: e instanceof Error ? e.message.slice(0, 200) : String(e) };
    }
    // uWS drops a header value's trailing bytes >= 0x80 before the service sees it (documented in src/http/request-limits.ts)
    const key = headers.get('idempotency-key')?.replace(/[\u0080-\uffff]+$/, '');
    if (route.idempotency) {
      if (key === undefined && route.idempotency === 'required') return { kind: 'invalid', why: 'idempotency key required' };
      if (key !== undefined && (key.length > 255 || !IDEMPOTENCY_KEY.test(key))) return { kind: 'invalid', why: 'bad idempotency key' };
    }
    return { kind: 'valid' };
  }
}
