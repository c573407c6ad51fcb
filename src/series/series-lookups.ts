// In-process cache of the two model lookups every per-series read makes (the series
// record and its scope), so a raw, render or rollup read does not wait on the model
// database: ~0.9 ms of service CPU per request with PostgreSQL before this cache.
//
// Coherence follows the auth caches (auth/access-control.ts) and the asset model: every
// model change commits through modelTransaction, whose commit feed (onModelCommit)
// reaches this process synchronously before the writer's response. Any commit empties
// both maps and bumps a generation, so a load that started before the change cannot put
// stale data back; bindings, unbindings, writable-class changes, attribute and asset
// changes all commit that way. Entries also expire after TTL_MS, which bounds staleness
// should another process share the model database (the architecture runs one per model
// database), and a scope is kept only until the next binding boundary of its series,
// since a binding with a future start or end changes the scope without a commit.
// Absent series are not cached: creating one needs no invalidation to become visible.
import type { Db } from '../model/db.js';
import { onModelCommit } from '../model/tx-log.js';
import type { AccessTarget } from '../auth/access-types.js';
import { nowNs } from '../clock.js';
import { seriesById, type SeriesRecord } from './records.js';
import { seriesScopeAt } from './series-scope.js';

const TTL_MS = 30_000;
/** Entries kept per map; beyond it the map is emptied (reads of a huge fleet refill it). */
const MAX_ENTRIES = 100_000;

interface Entry<T> { value: T; expiresMs: number }
interface ScopeEntry { scope: AccessTarget; expiresMs: number; untilNs: bigint | null }

export class SeriesLookups {
  private readonly records = new Map<string, Entry<SeriesRecord>>();
  private readonly scopes = new Map<string, ScopeEntry>();
  private generation = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly db: Db) {
    this.unsubscribe = onModelCommit(() => this.invalidate());
  }

  close(): void {
    this.unsubscribe();
  }

  /** Drops everything; called on every model commit of this process. */
  invalidate(): void {
    this.records.clear();
    this.scopes.clear();
    this.generation++;
  }

  /** The series record (frozen: it is shared by every reader), or null when absent. */
  async record(id: string): Promise<SeriesRecord | null> {
    const hit = this.records.get(id);
    if (hit && hit.expiresMs > Date.now()) return hit.value;
    const gen = this.generation;
    const r = await seriesById(this.db, id);
    if (r && gen === this.generation) put(this.records, id, { value: Object.freeze(r), expiresMs: Date.now() + TTL_MS });
    return r;
  }

  /** Owning asset through the binding covering now, else the staging root. */
  async scope(id: string): Promise<AccessTarget> {
    const now = nowNs();
    const hit = this.scopes.get(id);
    if (hit && hit.expiresMs > Date.now() && (hit.untilNs === null || now < hit.untilNs)) return hit.scope;
    const gen = this.generation;
    const s = await seriesScopeAt(this.db, id, now);
    if (gen === this.generation) put(this.scopes, id, { scope: Object.freeze(s.scope), expiresMs: Date.now() + TTL_MS, untilNs: s.untilNs });
    return s.scope;
  }
}

function put<V>(m: Map<string, V>, k: string, v: V): void {
  if (m.size >= MAX_ENTRIES && !m.has(k)) m.clear();
  m.set(k, v);
}
