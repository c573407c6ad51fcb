// Throttles consecutive failed logins per (username, remote address). It is consulted
// BEFORE any password hashing, so a guessing loop costs us a map lookup, not 180 ms of
// scrypt. Keyed on the pair (not the username alone) so an attacker elsewhere cannot
// lock a real user out from their own workstation.
//
// Policy: the first FREE_FAILURES failures are free; after that each further failure
// doubles the wait (1 s, 2 s, 4 s ... capped at MAX_DELAY_MS). A success clears the pair.
// State is in memory: a restart forgets it, which is acceptable because the hash
// gate still bounds the work (see docs/decisions.md).

const FREE_FAILURES = 5;
const BASE_DELAY_MS = 1000;
const MAX_DELAY_MS = 15 * 60 * 1000;
/** Bounds memory under a spray of distinct usernames: the oldest pairs are forgotten first. */
const MAX_TRACKED = 10_000;

interface Failures { count: number; blockedUntilMs: number }

export class LoginThrottle {
  private readonly pairs = new Map<string, Failures>();

  constructor(private readonly now: () => number = Date.now) {}

  private key(username: string, address: string): string {
    return `${username.toLowerCase()}\u0000${address}`;
  }

  /** Milliseconds the caller must wait before trying again, 0 when a try is allowed now. */
  retryAfterMs(username: string, address: string): number {
    const f = this.pairs.get(this.key(username, address));
    if (!f) return 0;
    return Math.max(0, f.blockedUntilMs - this.now());
  }

  recordFailure(username: string, address: string): void {
    const k = this.key(username, address);
    const f = this.pairs.get(k) ?? { count: 0, blockedUntilMs: 0 };
    f.count++;
    if (f.count >= FREE_FAILURES) {
      const delay = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (f.count - FREE_FAILURES));
      f.blockedUntilMs = this.now() + delay;
    }
    this.pairs.delete(k); // re-insert so Map order is least-recently-failed first
    this.pairs.set(k, f);
    if (this.pairs.size > MAX_TRACKED) {
      const oldest = this.pairs.keys().next().value;
      if (oldest !== undefined) this.pairs.delete(oldest);
    }
  }

  recordSuccess(username: string, address: string): void {
    this.pairs.delete(this.key(username, address));
  }
}
