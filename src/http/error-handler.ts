// The one place an error becomes an answer: a ServiceError maps to its status and an
// ErrorEnvelope {error, code, correlation_id, details?}; anything else is a 500 `internal`
// logged with its stack; a client that left (AbortError) gets nothing.
import type { ServiceContext } from '../service-context.js';
import type { Headers } from './route.js';
import type { LiveResponse } from './respond.js';
import { writeResponse } from './respond.js';
import { ServiceError } from '../errors.js';
import { stringifyJson } from '../json/json.js';
import { JSON_TYPE } from './reply.js';
import { leftUnread } from './body.js';
import { isDiskFull } from '../model/db.js';

/** Writes the ErrorEnvelope and returns the status for the log line (499 when the client left). */
export function sendError(res: LiveResponse, e: unknown, correlationId: string, log: ServiceContext['log']): number {
  let err: ServiceError;
  if (e instanceof ServiceError) err = e;
  else if (e instanceof Error && e.name === 'AbortError') return 499; // the client left; nothing to write
  else if (isDiskFull(e)) {
    log.warn({ correlation_id: correlationId, err: e }, 'the model database is out of disk space');
    err = new ServiceError('storage-full', 'the model database is out of disk space; writes are refused until space returns, reads still work');
  } else {
    log.error({ correlation_id: correlationId, err: e }, 'unexpected fault');
    err = new ServiceError('internal', 'an unexpected fault occurred; quote the correlation id when reporting it');
  }
  const envelope: Record<string, unknown> = { error: err.message, code: err.code, correlation_id: correlationId };
  if (err.details) envelope.details = err.details;
  const h: Headers = [['X-Correlation-Id', correlationId], ['Content-Type', JSON_TYPE]];
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) h.push([k, v]);
  // A refused body that was not read to its end (body.ts stops discarding at a bound) leaves the connection unusable.
  writeResponse(res, err.status, h, stringifyJson(envelope), { closeConnection: leftUnread(err) });
  return err.status;
}
