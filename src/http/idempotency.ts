// Step 4 of the pipeline: Idempotency-Key (src/model/idempotency-store.ts holds the
// mechanism). A key already answered replays the stored response with a fresh correlation
// id; a first request claims the key, and the claim is settled with the response (2xx
// stored, anything else releases the key so the client can retry).
import type { ServiceContext } from '../service-context.js';
import type { Claim } from '../model/idempotency-store.js';
import type { Principal } from '../auth/access-types.js';
import type { AnyRoute, Headers } from './route.js';
import type { Exchange } from './exchange.js';
import { writeResponse, type ResponseBody } from './respond.js';

/** The claim to settle after the handler, or null; 'replayed' when the stored response was written. */
export async function claimKey(service: ServiceContext, route: AnyRoute, ex: Exchange, principal: Principal | null, rawBody: Buffer): Promise<Claim | null | 'replayed'> {
  if (!route.idempotency) return null;
  const key = service.idempotency.validateKey(ex.headers.get('idempotency-key'), route.idempotency === 'required');
  if (key === null) return null;
  const claim = await service.idempotency.claim(principal?.id ?? 'anonymous', route.operationId, key, rawBody, ex.signal());
  if (claim.kind === 'proceed') return claim;
  const r = claim.response;
  const h: Headers = [...r.headers, ['X-Correlation-Id', ex.correlationId], ['X-Service-Idempotent-Replay', 'true']];
  writeResponse(ex.res, r.status, h, r.body);
  ex.logLine(service.log, r.status, false);
  return 'replayed';
}

/** Stores a 2xx response under the key, or releases the key. `headers` must not hold the correlation id. */
export async function settleClaim(claim: Claim | null, status: number, headers: Headers, body: ResponseBody): Promise<void> {
  if (claim?.kind !== 'proceed') return;
  if (status < 300) await claim.complete({ status, headers, body: Array.isArray(body) ? Buffer.concat(body) : Buffer.from((body as Uint8Array | string | null) ?? '') });
  else await claim.release();
}

/** Releases the key after a handler failed. */
export async function releaseClaim(claim: Claim | null): Promise<void> {
  if (claim?.kind === 'proceed') await claim.release().catch(() => undefined);
}
