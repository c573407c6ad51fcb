// Step 6 of the pipeline: a handler's Reply becomes status, headers and bytes. JSON goes
// through the lossless writer (src/json/), so int64 values leave as exact digits.
import type { Headers, Reply } from './route.js';
import { stringifyJson } from '../json/json.js';
import type { ResponseBody } from './respond.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

export interface EncodedReply {
  status: number;
  out: ResponseBody;
  /** Every header but X-Correlation-Id (a replay gets a fresh one). */
  headers: Headers;
}

export function encodeReply(reply: Exclude<Reply, { kind: 'sse' } | { kind: 'websocket' }>, defaultStatus: number): EncodedReply {
  let status: number, out: ResponseBody, contentType: string | null;
  switch (reply.kind) {
    case 'empty': status = reply.status; out = null; contentType = null; break;
    case 'bytes': status = reply.status ?? defaultStatus; out = reply.bytes; contentType = reply.contentType; break;
    default: status = reply.status ?? defaultStatus; out = stringifyJson(reply.body); contentType = JSON_TYPE;
  }
  const headers: Headers = [];
  if (contentType) headers.push(['Content-Type', contentType]);
  if (reply.headers) headers.push(...reply.headers);
  return { status, out, headers };
}
