// Ids a model job will give the things it creates, fixed in its preview: derived from a
// random seed stored in the preview and a key naming the thing ("asset:<parent>/<name>").
// The commit re-derives the preview with the stored seed, so the same plan yields the
// same ids and the canonical comparison holds; the caller sees in the preview exactly
// which ids the commit will create.
import { createHash, randomBytes } from 'node:crypto';
import { ServiceError } from '../../errors.js';
import { UUID_RE } from '../../uuid.js';

export function newIdSeed(): string {
  return randomBytes(16).toString('hex');
}

/** The seed a stored preview carries (a commit reuses it). */
export function storedIdSeed(preview: unknown): string {
  const seed = (preview as { id_seed?: unknown } | null)?.id_seed;
  if (typeof seed !== 'string' || !/^[0-9a-f]{32}$/.test(seed)) throw new Error('BUG: a stored job preview has no id_seed');
  return seed;
}

/** A UUID (version 8, RFC 9562 custom) from SHA-256 of the seed and the key. */
export function plannedId(seed: string, key: string): string {
  const h = createHash('sha256').update(`${seed}\u0000${key}`).digest();
  h[6] = (h[6] & 0x0f) | 0x80;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export const badParam = (field: string, problem: string) => new ServiceError('invalid-request', `${field}: ${problem}`, { errors: [{ field, problem }] });

export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_RE.test(s);

/** Refuses fields a params object does not know, naming the first one. */
export function checkKnownFields(p: unknown, known: readonly string[], shape: string): Record<string, unknown> {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) throw badParam('params', `must be an object ${shape}`);
  const extra = Object.keys(p).find((k) => !known.includes(k));
  if (extra !== undefined) throw badParam(`params.${extra}`, `unknown field (${known.join(', ')})`);
  return p as Record<string, unknown>;
}
