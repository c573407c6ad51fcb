// In-process cache of the two model lookups every per-series read makes (the series
// record and its scope), so a raw, render or rollup read does not wait on the model
// database: ~0.9 ms of service CPU per request with PostgreSQL before this cache.
//
// Coherence follows the auth caches (auth/access-control.ts) and the asset model: every
// model change commits through modelTransaction, whose commit feed (onModelCommit)
// reaches this process synchronously before the writer's response. Any commit empties
// both maps and bumps a generation, so a load that started before the change cannot put
// stale data back; bindings, unbindings, writable-class changes, attribute and asset
// changes all commit that way. A scope is kept only until the next binding boundary of its
// series, since a binding with a future start or end changes the scope without a commit.
// Absent series are not cached: creating one needs no invalidation to become visible.
//
// Should another process share the model database (the architecture runs one per model
// database), its commits do not reach the feed. Every `checkMs` the cache asks the model
// for its version, the newest tx_id (every commit adds one), and empties itself when it
// moved: one indexed query per interval for the whole cache. Until 2026-11-27 each entry
// expired after 30 s instead, and a fleet read every few seconds refetched every series'
// record and scope in one burst each time (1,000 series: ~2 s of PGlite CPU, 2 queries a
// series). Entries are still refetched after `maxAgeMs`, for a commit that got its tx_id
// before one this cache saw and committed after it.
import type { Db } from '../model/db.js';
import { onModelCommit } from '../model/tx-log.js';
import type { AccessTarget } from '../auth/access-types.js';
import { nowNs } from '../clock.js';
import { seriesById, type SeriesRecord } from './records.js';
import { seriesScopeAt } from './series-scope.js';

/** Entries kept per map; beyond it the map is emptied (reads of a huge fleet refill it). */
const MAX_ENTRIES = 100_000;

export interface LookupTimings {
  /** How often the model's version is checked (a foreign commit is seen within this). */
  checkMs: number;
  /** Entries are refetched at least this often, whatever the version says. */
  maxAgeMs: number;
}

export const DEFAULT_LOOKUP_TIMINGS: LookupTimings = { checkMs: 30_000, maxAgeMs: 10 * 60_000 };

interface Entry<T> { value: T; expiresMs: number }
interface ScopeEntry { scope: AccessTarget; expiresMs: number; untilNs: bigint | null }

/** The model's version: the newest committed tx_id (0 before the first commit). */
async function modelVersion(db: Db): Promise<bigint> {
  const { rows } = await db.query<{ v: bigint | string | null }>('SELECT max(tx_id) AS v FROM model_tx');
  const v = rows[0]?.v ?? null;
  return v === null ? 0n : BigInt(v);
}

export class SeriesLookups {
  private readonly records = new Map<string, Entry<SeriesRecord>>();
  private readonly scopes = new Map<string, ScopeEntry>();
  private generation = 0;
  /** The model version the entries were last checked against (null: not yet), and until when that check holds. */
  private version: bigint | null = null;
  private checkedUntilMs = 0;
  private checking: Promise<void> | null = null;
  private readonly unsubscribe: () => void;

  constructor(private readonly db: Db, private readonly timings: LookupTimings = DEFAULT_LOOKUP_TIMINGS) {
    this.unsubscribe = onModelCommit(() => this.invalidate());
  }

  close(): void {
    this.unsubscribe();
  }

  /** Drops everything; called on every model commit of this process. The next lookup checks the version again. */
  invalidate(): void {
    this.records.clear();
    this.scopes.clear();
    this.generation++;
    this.checkedUntilMs = 0;
  }

  /** The series record (frozen: it is shared by every reader), or null when absent. */
  async record(id: string): Promise<SeriesRecord | null> {
    if (Date.now() >= this.checkedUntilMs) await this.checkVersion();
    const hit = this.records.get(id);
    if (hit && hit.expiresMs > Date.now()) return hit.value;
    const gen = this.generation;
    const r = await seriesById(this.db, id);
    if (r && gen === this.generation) put(this.records, id, { value: Object.freeze(r), expiresMs: Date.now() + this.timings.maxAgeMs });
    return r;
  }

  /** Owning asset through the binding covering now, else the staging root. */
  async scope(id: string): Promise<AccessTarget> {
    if (Date.now() >= this.checkedUntilMs) await this.checkVersion();
    const now = nowNs();
    const hit = this.scopes.get(id);
    if (hit && hit.expiresMs > Date.now() && (hit.untilNs === null || now < hit.untilNs)) return hit.scope;
    const gen = this.generation;
    const s = await seriesScopeAt(this.db, id, now);
    if (gen === this.generation) put(this.scopes, id, { scope: Object.freeze(s.scope), expiresMs: Date.now() + this.timings.maxAgeMs, untilNs: s.untilNs });
    return s.scope;
  }

  /** One version check at a time, shared by the lookups that wait for it. */
  private checkVersion(): Promise<void> {
    this.checking ??= this.check().finally(() => { this.checking = null; });
    return this.checking;
  }

  private async check(): Promise<void> {
    const gen = this.generation;
    const v = await modelVersion(this.db);
    // a commit of this process meanwhile emptied the maps and wants a check of its own
    if (gen !== this.generation) return;
    if (v !== this.version) {
      // entries loaded before this read of the version may predate the commits it counts
      this.records.clear();
      this.scopes.clear();
      this.generation++;
      this.version = v;
    }
    this.checkedUntilMs = Date.now() + this.timings.checkMs;
  }
}

function put<V>(m: Map<string, V>, k: string, v: V): void {
  if (m.size >= MAX_ENTRIES && !m.has(k)) m.clear();
  m.set(k, v);
}
