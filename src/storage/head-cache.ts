// The writer's cache of open heads, keyed by series. Each SeriesStore (the HTTP side and
// the ingest worker each have one on the same env) stamps every head record it writes
// with a generation (its random writer id, a counter it never reuses). A cached head is
// used only when the stored record carries the generation the cache last wrote, so a
// head changed by the other writer, by lifecycle enforcement, or left half-done by an
// aborted transaction is reloaded from its segments instead.
import { randomInt } from 'node:crypto';
import type { ValueType } from './encoding/chunk-types.js';
import { loadStoredHead, readHeadRecord } from './head-record.js';
import { OpenHead, type Generation } from './open-head.js';
import type { ReadView } from './series-env.js';

/**
 * Default bound on cached head capacity in points (time, value and quality columns cost
 * ~20 B per float64 point: ~240 MB at 12 M). Heads beyond it are reloaded from their
 * segments (a decode of the head) on their next write.
 */
export const DEFAULT_HEAD_CACHE_POINTS = 12_000_000;

export class HeadCache {
  /** Map order is recency order: a hit moves the entry to the end. */
  private readonly heads = new Map<string, OpenHead>();
  private readonly writer = randomInt(1, 2 ** 32 - 1);
  private counter = 0;

  constructor(private readonly maxPoints: number = DEFAULT_HEAD_CACHE_POINTS) {}

  nextGeneration(): Generation {
    return { writer: this.writer, counter: ++this.counter };
  }

  /** The open head of a series inside the write txn `view`. */
  get(view: ReadView, series: Buffer, id: string, type: ValueType): OpenHead {
    const rec = readHeadRecord(view, series);
    const cached = this.heads.get(id);
    this.heads.delete(id);
    if (cached && rec && cached.genWriter !== 0 && rec.genWriter === cached.genWriter && rec.genCounter === cached.genCounter && cached.cols.type === type) {
      this.heads.set(id, cached);
      return cached;
    }
    const head = new OpenHead(type, rec ? loadStoredHead(view, series) : null);
    this.loads++;
    this.heads.set(id, head);
    return head;
  }

  /** After a transaction: evicts the least recently used heads while the cache holds too many points. */
  trim(): void {
    let total = 0;
    for (const h of this.heads.values()) total += h.capacity;
    for (const [id, h] of this.heads) {
      if (total <= this.maxPoints) break;
      this.heads.delete(id);
      total -= h.capacity;
    }
  }

  get size(): number { return this.heads.size; }

  /** Heads loaded from storage since the cache was made (misses: new, evicted or moved by another writer). */
  loads = 0;
}
