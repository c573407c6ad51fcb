// The service's JSON codec. Request bodies are parsed losslessly and defensively:
// strict UTF-8, RFC 8259 grammar, a nesting limit, no duplicate or prototype-touching
// member names, and integers beyond ±(2^53-1) as exact bigint (ns timestamps exceed 2^53).
// Responses are written with bigint as bare digits. See docs/decisions.md.
//
// parseJson runs one validating byte scan first. When the body holds no unsafe integer
// (the usual case) the decoded text goes to JSON.parse, which is then guaranteed to
// succeed and to give the same values; otherwise the exact builder makes the values.
import { ServiceError } from '../errors.js';
import { scanJson } from './scan.js';
import { buildJson } from './build.js';

export { stringifyJson, jsonBytes } from './stringify.js';

export const DEFAULT_MAX_DEPTH = 64;

export interface ParseJsonOptions {
  /** Deepest allowed nesting of arrays and objects; a top-level scalar has depth 0. Default 64. */
  maxDepth?: number;
}

/**
 * Parses a request body. Throws ServiceError('invalid-json') with the byte offset
 * (details.offset) of the first problem.
 */
export function parseJson(bytes: Uint8Array, opts?: ParseJsonOptions): unknown {
  if (!(bytes instanceof Uint8Array)) throw new ServiceError('internal', 'parseJson expects the body as bytes (Uint8Array)');
  const maxDepth = opts?.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 0) throw new ServiceError('internal', `parseJson: maxDepth must be a non-negative integer, got ${String(maxDepth)}`);
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const exact = scanJson(buf, maxDepth);
  return exact ? buildJson(buf) : JSON.parse(buf.toString('utf8'));
}

/**
 * Deepest nesting a stored document may have. Request bodies are limited to 64 levels, and
 * the model wraps them a few levels deeper at most (change-set operations, job params); the
 * limit only bounds the scan's scratch, the builder is iterative.
 */
const STORED_MAX_DEPTH = 4096;

/** An integer literal of 16 or more digits may lie beyond 2^53 - 1; 15 digits never do. */
const LONG_DIGIT_RUN = /\d{16}/;

/**
 * Parses JSON text that the service stored itself (a jsonb column read back from
 * PostgreSQL or PGlite), keeping integers of any size exact: beyond ±(2^53-1) they come
 * back as bigint, as they arrived in the request. Text with no run of 16 digits cannot
 * hold such an integer and goes straight to JSON.parse; anything else takes the exact
 * path (a long run inside a string or a fraction only costs the slower parse).
 */
export function parseStoredJson(text: string): unknown {
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
  return parseJson(Buffer.from(text, 'utf8'), { maxDepth: STORED_MAX_DEPTH });
}
