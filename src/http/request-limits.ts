// Limits on the request head, answered where uWebSockets.js lets a request reach us.
//
// What the library itself does (truffle uWS 20.30, probed 2026-11-27 with raw sockets):
//   - more than 48 header fields (Host included): the request never reaches a handler; the
//     connection is held until uWS's idle timeout (~12 s) and closed with no answer;
//   - a request head (request line and headers) that arrives in more than one read is
//     buffered up to 4 KiB; past that the connection is closed with no answer;
//   - a head that arrives in one read is parsed whole up to about 100 KiB (one receive);
//     a 200 KiB path or header was reset.
//   - bytes of 0x80 and above at the END of a header value are dropped (trimmed as if they
//     were white space): `Idempotency-Key: cl\xE9` and `Idempotency-Key: clé` both reach us
//     as "cl"; such bytes inside a value arrive (as U+FFFD from forEach). So a key that ends
//     in non-ASCII is not refused but shortened: keys are visible ASCII by contract, and two
//     keys that differ only in such a tail share one stored answer.
// None of these can be answered from JavaScript. Below them, a URL longer than
// MAX_URL_BYTES is 414 and headers over MAX_HEADER_BYTES are 431, so a client that can be
// answered learns the limit.
import type { Exchange } from './exchange.js';
import { ServiceError } from '../errors.js';

/** Header fields uWS parses (Host included); a request with more never reaches us (see above). */
export const MAX_HEADER_FIELDS = 48;
/** Path plus query, in bytes as sent (percent-encoded). */
export const MAX_URL_BYTES = 8192;
/** Sum of `name: value\r\n` over the request's headers. */
export const MAX_HEADER_BYTES = 16384;

/** The refusal for an oversize URL or header block, or null. */
export function checkRequestHead(ex: Exchange, headerBytes: number): ServiceError | null {
  const urlBytes = ex.path.length + (ex.rawQuery === undefined ? 0 : ex.rawQuery.length + 1);
  if (urlBytes > MAX_URL_BYTES) {
    return new ServiceError('uri-too-long', `the URL of ${urlBytes} bytes exceeds the limit of ${MAX_URL_BYTES} bytes`, { limit_bytes: MAX_URL_BYTES });
  }
  if (headerBytes > MAX_HEADER_BYTES) {
    return new ServiceError('headers-too-large', `the request headers total ${headerBytes} bytes, over the limit of ${MAX_HEADER_BYTES} bytes`, { limit_bytes: MAX_HEADER_BYTES });
  }
  return null;
}
