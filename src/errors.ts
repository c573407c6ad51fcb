// One error type for the whole service. Deep code throws (or returns) a ServiceError
// with a stable code; the HTTP layer maps it once to an ErrorEnvelope and a status.
// Across worker threads and gRPC an error travels as {code, message, details} and is
// rebuilt with ServiceError.fromWire, because structured clone drops classes.

/** Every code the service emits, with its HTTP status and the condition it names. */
export const ERROR_CODES = {
  'invalid-request': { status: 400, meaning: 'The request (path, query or body) does not match the operation\'s schema; details.errors lists each field and problem.' },
  'invalid-json': { status: 400, meaning: 'The body is not well-formed JSON, is not valid UTF-8, nests deeper than the limit, or uses a forbidden key (__proto__, constructor, prototype).' },
  'invalid-cursor': { status: 400, meaning: 'The cursor is not one this service issued for this listing.' },
  'invalid-idempotency-key': { status: 400, meaning: 'The Idempotency-Key header is empty, longer than 255 characters, or contains characters outside visible ASCII.' },
  'idempotency-key-required': { status: 400, meaning: 'The operation requires an Idempotency-Key header.' },
  'unsupported-media-type': { status: 415, meaning: 'The body is not application/json.' },
  'read-too-large': { status: 400, meaning: 'A resolved read would answer more points or entries than its limit (details.limit, details.field); narrow the range or the selection, or raise the limit up to its maximum.' },
  'not-acceptable': { status: 406, meaning: 'None of the media types in Accept can be produced by this operation.' },
  'body-too-large': { status: 413, meaning: 'The body exceeds the size limit (details.limit_bytes).' },
  'uri-too-long': { status: 414, meaning: 'The URL (path and query) exceeds the limit (details.limit_bytes).' },
  'headers-too-large': { status: 431, meaning: 'The request headers together exceed the limit (details.limit_bytes).' },
  'unauthenticated': { status: 401, meaning: 'No credentials, or credentials that are unknown, expired or revoked.' },
  'invalid-credentials': { status: 401, meaning: 'Login failed: the username or the password is wrong (never says which).' },
  'forbidden': { status: 403, meaning: 'The principal lacks the capability or the scope the operation needs.' },
  'csrf-rejected': { status: 403, meaning: 'A browser sent a state-changing request from another site: Sec-Fetch-Site is neither same-origin nor none, or Origin is neither this service nor a trusted origin.' },
  'account-sealed': { status: 403, meaning: 'The account is disabled.' },
  'wrong-current-password': { status: 403, meaning: 'Changing one\'s own password needs the current password, and the one given is wrong.' },
  'route-not-found': { status: 404, meaning: 'No operation has this path.' },
  'not-found': { status: 404, meaning: 'The resource does not exist or is not visible to the principal.' },
  'upgrade-required': { status: 426, meaning: 'The operation is a WebSocket (GET /v1/stream): send the request with Upgrade: websocket.' },
  'method-not-allowed': { status: 405, meaning: 'The path exists but not with this method; the Allow header lists the methods.' },
  'conflict': { status: 409, meaning: 'The resource changed underneath the request (transaction or preview drift), or is in a final state.' },
  'name-conflict': { status: 409, meaning: 'The name is already taken where it must be unique.' },
  'idempotency-conflict': { status: 409, meaning: 'The Idempotency-Key was used before with a different body, or that first request is still running.' },
  'hash-mismatch': { status: 409, meaning: 'The preview_hash does not match the stored preview.' },
  'duplicate-entry': { status: 409, meaning: 'The dedupe gate found an exact or polarity variant of an existing registry entry.' },
  'too-many-requests': { status: 429, meaning: 'Too many attempts; retry after the Retry-After header.' },
  'internal': { status: 500, meaning: 'An unexpected fault; the correlation id finds it in the log.' },
  'operations-catalogue-failed': { status: 500, meaning: 'The operations catalogue could not be read.' },
  'identity-provider-unavailable': { status: 503, meaning: 'The configured OpenID Connect provider could not be reached; local login still works.' },
  'model-unavailable': { status: 503, meaning: 'The model database is not configured or not reachable.' },
  'capacity-exhausted': { status: 503, meaning: 'Read or render capacity is exhausted; retry later.' },
  'shutting-down': { status: 503, meaning: 'The service is stopping and accepts no new work.' },
  'storage-full': { status: 503, meaning: 'Free disk space is below the threshold; writes are refused, reads still work.' },
  'chunk-corrupt': { status: 500, meaning: 'A stored chunk failed its checksum; no value from it is returned.' },
  // Calculations: the expression language (src/calc/expression).
  'invalid-expression': { status: 400, meaning: 'An expression does not parse; details: field, position {offset, line, column}, expected (what could come there), found.' },
  'unknown-reference': { status: 400, meaning: 'An expression names an attribute, unit, enum member or function that does not exist; details: field, reference, position.' },
  'unit-mismatch': { status: 400, meaning: 'unit_check strict: operands of different quantity kinds are added, compared or combined, or the result\'s kind differs from the output attribute\'s; details: field, left and right {text, quantity_kind}, position.' },
  'type-mismatch': { status: 400, meaning: 'An expression combines values of incompatible types (number, bool, string, enum) or gives a result the output attribute cannot hold; details: field, expected, found, position.' },
  'calc-cycle': { status: 400, meaning: 'A calculation rule\'s output feeds its own input, directly or through other rules; details.cycle lists each step {rule_id, output, input}.' },
  // portal (issue 30)
  'portal-not-built': { status: 503, meaning: 'The portal\'s files are missing (dist/portal): run npm run build.' },
  // Episodes (issue #28): the rule an episode broke is named in details.rule.
  'episode-rule': { status: 400, meaning: 'An episode breaks a rule of its template (details.rule: role-unknown, role-cardinality, role-required, permitted-children, attribute-unknown); details.field names the member.' },
  'episode-overlap': { status: 409, meaning: 'The template forbids overlapping episodes on one asset (forbidden-per-asset) or on one asset in one role (forbidden-per-role); details.episode_id names the episode in the way.' },
  'episode-state': { status: 409, meaning: 'The episode is not in a state that allows the change (closing a closed or void episode, editing a void one); details.state is its state.' },
  // Annotations (issue 29): attachment uploads and their ranges.
  'attachment-type-mismatch': { status: 400, meaning: 'An uploaded attachment\'s bytes do not match its declared Content-Type (magic numbers of png, jpeg, gif, webp, pdf, zip; text must be valid UTF-8); details.declared names the type.' },
  'range-not-satisfiable': { status: 416, meaning: 'The Range header asks for bytes outside the attachment; the Content-Range header gives its size.' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** Extra response headers (Allow, Retry-After). */
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.details = details;
    this.headers = headers;
  }

  toWire(): WireError {
    return { code: this.code, message: this.message, details: this.details };
  }

  static fromWire(w: WireError): ServiceError {
    const code = (w.code in ERROR_CODES ? w.code : 'internal') as ErrorCode;
    return new ServiceError(code, w.message, w.details);
  }
}

export interface WireError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export function isServiceError(e: unknown): e is ServiceError {
  return e instanceof ServiceError;
}

/** Shorthands for the conditions raised most often. */
export const notFound = (what: string, details?: Record<string, unknown>) => new ServiceError('not-found', `${what} not found`, details);
export const invalid = (field: string, problem: string) =>
  new ServiceError('invalid-request', `${field}: ${problem}`, { errors: [{ field, problem }] });

/**
 * A broken invariant of our own code, never a client's mistake: callers validate their
 * input before it reaches the code that asserts (the codecs, say), so this surfaces as a
 * 500 `internal` and a log line, like VictoriaMetrics' "BUG:" panics, not as a 400.
 */
export class InvariantError extends Error {
  readonly field: string;
  constructor(field: string, problem: string) {
    super(`BUG: ${field}: ${problem}`);
    this.name = 'InvariantError';
    this.field = field;
  }
}

/** Shorthand for throwing an InvariantError naming what broke. */
export const bug = (field: string, problem: string) => new InvariantError(field, problem);
