// The writer's cache of open heads, keyed by series. Each SeriesStore (the HTTP side and
// the ingest worker each have one on the same env) stamps every head record it writes
// with a generation (its random writer id, a counter it never reuses). A cached head is
// used only when the stored record carries the generation the cache last wrote, so a
// head changed by the other writer, by lifecycle enforcement, or left half-done by an
// aborted transaction is reloaded from its segments instead.
import { randomInt } from 'node:crypto';
import type { ValueType } from './encoding/chunk-types.js';
import { HEAD_RECORD_BYTES, decodeHeadRecord, loadStoredHead } from './head-record.js';
import { fastGet } from './fast-get.js';
import { OpenHead, type Generation } from './open-head.js';
import type { ReadView } from './series-env.js';

/**
 * Default bound on cached head capacity in points (time, value and quality columns cost
 * ~20 B per float64 point: ~240 MB at 12 M). Heads beyond it are reloaded from their
 * segments (a decode of the head) on their next write.
 */
export const DEFAULT_HEAD_CACHE_POINTS = 12_000_000;

/** This thread's caches, for the heap report's figures (cachedHeadFigures). */
const caches = new Set<WeakRef<HeadCache>>();

/**
 * Open points, column capacity and column bytes of the heads every live cache of this
 * thread holds: the part of the thread's external memory that is open heads (HISTORIAN_HEAP_REPORT).
 * O(cached heads): for diagnostics once a second, not for the write path.
 */
export function cachedHeadFigures(): { head_open_points: number; head_capacity_points: number; head_column_bytes: number } {
  const out = { head_open_points: 0, head_capacity_points: 0, head_column_bytes: 0 };
  for (const ref of caches) {
    const cache = ref.deref();
    if (cache === undefined) { caches.delete(ref); continue; }
    for (const h of cache.cachedHeads()) {
      out.head_open_points += h.count;
      out.head_capacity_points += h.capacity;
      out.head_column_bytes += h.columnBytes;
    }
  }
  return out;
}

export class HeadCache {
  /**
   * Map order is the order heads were loaded or given their second chance: a hit only marks
   * the head used (OpenHead.cacheUsed), and trim moves a used head to the end, unmarked,
   * before evicting the first unused one (second chance, an approximation of least recently
   * used). Moving every hit to the end cost a delete and a set of its id string per series
   * written; a write of many series x 1 point (calculation outputs) paid that on every point.
   */
  private readonly heads = new Map<string, OpenHead>();
  private readonly writer = randomInt(1, 2 ** 32 - 1);
  private counter = 0;

  constructor(private readonly maxPoints: number = DEFAULT_HEAD_CACHE_POINTS) {
    caches.add(new WeakRef(this));
  }

  /** The cached heads, oldest first (see `heads`). */
  cachedHeads(): IterableIterator<OpenHead> { return this.heads.values(); }

  nextGeneration(): Generation {
    return { writer: this.writer, counter: ++this.counter };
  }

  /**
   * Capacity of the cached heads as last counted, kept up to date from the heads a
   * transaction touched: trim used to sum every cached head after each commit, O(cache)
   * per commit (with 100k cached series, ~0.1-0.5 ms a commit for nothing).
   */
  private total = 0;
  private readonly counted = new Map<OpenHead, number>();
  private readonly touched = new Set<OpenHead>();
  /** Column bytes of each counted head when last counted (what it leaves behind when its columns are replaced). */
  private readonly countedBytes = new Map<OpenHead, number>();
  /**
   * Bytes of head columns this cache let go of since the caller last reset it: columns a
   * head outgrew (or shrank from), and the columns of heads that left the cache. They are
   * external memory V8 frees only when it collects the typed arrays (see SeriesStore's
   * collectAfterBytes). Counted at trim, from the heads a transaction touched.
   */
  releasedBytes = 0;

  /** The open head of a series inside the write txn `view`. */
  get(view: ReadView, series: Buffer, id: string, type: ValueType): OpenHead {
    const cached = this.heads.get(id);
    if (cached && cached.genWriter !== 0 && cached.cols.type === type && this.storedGeneration(view, series, cached)) {
      cached.cacheUsed = true;
      this.touched.add(cached);
      return cached;
    }
    if (cached) { this.heads.delete(id); this.uncount(cached); }
    // no record: a new series or an emptied head, whose sealedEnd the chunks give
    const head = new OpenHead(type, loadStoredHead(view, series));
    this.loads++;
    this.heads.set(id, head);
    this.counted.set(head, head.capacity);
    this.countedBytes.set(head, head.columnBytes);
    this.total += head.capacity;
    this.touched.add(head);
    return head;
  }

  /**
   * Whether the stored record carries `head`'s generation: read in lmdb-js's reused buffer
   * and compared in place (its fields at the offsets head-record.ts gives), where a get with
   * a copy and a decode into an object cost a write of many series x 1 point (calculation
   * outputs) about a sixth of its time (bench/calc-write.ts profile). A version-1 record
   * has no generation and never matches.
   */
  private storedGeneration(view: ReadView, series: Buffer, head: OpenHead): boolean {
    const rec = fastGet(view.env.heads, series, view.txn);
    return rec !== undefined && rec.length === HEAD_RECORD_BYTES && rec[0] === 2
      && rec.readUInt32LE(18) === head.genWriter && rec.readDoubleLE(22) === head.genCounter;
  }

  private uncount(h: OpenHead): void {
    this.total -= this.counted.get(h) ?? 0;
    // its columns as they are now (it may have grown since its last count)
    if (this.counted.has(h)) this.releasedBytes += h.columnBytes;
    this.counted.delete(h);
    this.countedBytes.delete(h);
    this.touched.delete(h);
  }

  /** Drops `head` if it is the cached head of series `id` (a later get loads it from storage). */
  forget(id: string, head: OpenHead): void {
    if (this.heads.get(id) !== head) return;
    this.heads.delete(id);
    this.uncount(head);
  }

  /** After a transaction: evicts the least recently used heads while the cache holds too many points. */
  trim(): void {
    for (const h of this.touched) {
      const was = this.counted.get(h);
      if (was === undefined) continue;
      const before = this.countedBytes.get(h) ?? 0, now = h.columnBytes;
      // new columns replaced the counted ones (growth copies them; intermediate sizes within
      // one transaction are not seen); a head given a quality column of its own frees nothing
      if (h.capacity !== was) this.releasedBytes += before;
      if (now !== before) this.countedBytes.set(h, now);
      this.total += h.capacity - was;
      this.counted.set(h, h.capacity);
    }
    this.touched.clear();
    // a head moved to the end is met again later in this loop, unmarked: evicted then if still needed
    for (const [id, h] of this.heads) {
      if (this.total <= this.maxPoints) break;
      this.heads.delete(id);
      if (h.cacheUsed) { h.cacheUsed = false; this.heads.set(id, h); continue; }
      this.uncount(h);
    }
  }

  get size(): number { return this.heads.size; }

  /**
   * Keys of the series whose stored head record this writer wrote last (its generation)
   * and holds open points, from the records on `view` (so heads the cache evicted are
   * found too; another writer's heads are left to it).
   */
  ownHeadsWithOpen(view: ReadView): Buffer[] {
    const keys: Buffer[] = [];
    for (const { key, value } of view.env.heads.getRange({ transaction: view.txn })) {
      if (value[0] !== 2) continue;
      const r = decodeHeadRecord(value);
      if (r.genWriter === this.writer && r.openPoints > 0) keys.push(Buffer.from(key));
    }
    return keys;
  }

  /** Capacity of the cached heads in points, as last counted (after the last transaction). */
  get points(): number { return this.total; }

  /** Whether `head` is the cached head of series `id` (no load, no validation). */
  holds(id: string, head: OpenHead): boolean {
    return this.heads.get(id) === head;
  }

  /** Heads loaded from storage since the cache was made (misses: new, evicted or moved by another writer). */
  loads = 0;
}
