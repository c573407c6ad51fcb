// The one UUID syntax check of the service (any version, either case), shared by the HTTP
// schemas, the storage keys, ingest and the model, so a UUID accepted in one layer is
// accepted in all.
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(v: unknown): v is string {
  return typeof v === 'string' && UUID_RE.test(v);
}
