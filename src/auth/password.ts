// Password hashing with scrypt (memory-hard, in node:crypto, no dependency). The hash
// string carries its own parameters and salt, so the cost can be raised later without
// invalidating stored hashes: verify() reads them back from the string.
//
// Cost: N = 2^16, r = 8, p = 1 is 64 MiB and ~180 ms per hash on the 2-core box
// (measured 2026 with a scratch loop: 2^15 = 88 ms, 2^16 = 179 ms, 2^17 = 399 ms).
// scrypt runs on libuv's thread pool, so the event loop stays free; PasswordHasher caps
// how many run at once so a login flood cannot take both cores and all the memory.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ServiceError } from '../errors.js';

export interface ScryptParams { log2N: number; r: number; p: number }

export const DEFAULT_SCRYPT: ScryptParams = { log2N: 16, r: 8, p: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;

function scryptAsync(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const N = 2 ** params.log2N;
  const opts: ScryptOptions = { N, r: params.r, p: params.p, maxmem: 256 * N * params.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, opts, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export function formatHash(params: ScryptParams, salt: Buffer, key: Buffer): string {
  return `scrypt$${params.log2N}$${params.r}$${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export function parseHash(stored: string): { params: ScryptParams; salt: Buffer; key: Buffer } | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [log2N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![log2N, r, p].every((n) => Number.isInteger(n) && n > 0) || log2N > 22 || r > 32 || p > 16) return null;
  return { params: { log2N, r, p }, salt: Buffer.from(parts[4], 'base64'), key: Buffer.from(parts[5], 'base64') };
}

/**
 * Runs scrypt with at most `maxConcurrent` hashes in flight and at most `maxQueued`
 * waiting; beyond that a login is refused with 429 at once instead of queueing work
 * the machine cannot do. Counts every hash, so tests can show that an unknown user and
 * a wrong password cost the same work.
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private hashes = 0;
  private dummy: Promise<string> | undefined;

  constructor(
    readonly params: ScryptParams = DEFAULT_SCRYPT,
    private readonly maxConcurrent = 2,
    private readonly maxQueued = 32,
  ) {}

  /** How many scrypt computations this hasher has run. */
  get hashCount(): number { return this.hashes; }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_BYTES);
    const key = await this.run(password, salt, this.params);
    return formatHash(this.params, salt, key);
  }

  /** Verifies against a stored hash, or against a dummy hash of the same cost when there is none. */
  async verify(password: string, stored: string | null): Promise<boolean> {
    const target = stored === null ? null : parseHash(stored);
    if (target === null) {
      // Same work as a real verification, so an unknown user cannot be told by timing.
      const dummy = parseHash(await this.dummyHash());
      if (dummy) await this.run(password, dummy.salt, dummy.params);
      return false;
    }
    const key = await this.run(password, target.salt, target.params);
    return key.length === target.key.length && timingSafeEqual(key, target.key);
  }

  private dummyHash(): Promise<string> {
    // Computed without the counter or the gate: it is made once, not per request.
    this.dummy ??= (async () => {
      const salt = randomBytes(SALT_BYTES);
      return formatHash(this.params, salt, await scryptAsync(randomBytes(16).toString('hex'), salt, this.params));
    })();
    return this.dummy;
  }

  private async run(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
    await this.acquire();
    try {
      this.hashes++;
      return await scryptAsync(password, salt, params);
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.running < this.maxConcurrent) { this.running++; return Promise.resolve(); }
    if (this.waiting.length >= this.maxQueued) {
      return Promise.reject(new ServiceError('too-many-requests', 'Too many logins are being checked; retry shortly', undefined, { 'Retry-After': '1' }));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next(); // the slot passes straight to the next waiter
    else this.running--;
  }
}
