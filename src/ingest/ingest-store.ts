// What the ingest worker needs from the storage engine, in one place, so that the rest of
// src/ingest never reaches into src/storage's internals. The worker opens its own engine
// instance over the shared LMDB environment (STACK-NOTES §3: same options everywhere) and
// is the single writer of collector data.
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { PointBatch } from '../storage/series-store.js';
import type { Refusal } from '../storage/series-store.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { LatestTable, SeriesStore, readSnapshot, readFinalised, readMeta } from '../storage/series-store.js';
import { groupTrace } from './group-trace.js';
import { fullGc } from '../threads/full-gc.js';

/** Writes of the warm-up (see warmUpEngine): groups of WARM_BATCHES batches of WARM_POINTS points. */
const WARM_GROUPS = 8, WARM_BATCHES = 4, WARM_POINTS = 1000;

export interface StoredBatchResult {
  accepted: number;
  unchanged: number;
  refused: number;
  refusals: Refusal[];
}

export interface StreamState {
  type: ValueType;
  lastNs: bigint | null;
  finalisedNs: bigint | null;
}

export interface IngestStore {
  /**
   * Writes every batch in one group commit and resolves only when it is durable (flushed).
   * Rejects with ServiceError('storage-full') when the engine refuses for space; any other
   * rejection is an I/O fault the worker treats as fatal.
   */
  write(batches: PointBatch[], principal: string): Promise<StoredBatchResult[]>;
  /** Raises the series' finalised watermark (never lowers it); durable on resolve. */
  setFinalised(seriesId: string, throughNs: bigint): Promise<void>;
  /** Value type of an existing series, or null when the engine does not know it. */
  seriesType(seriesId: string): ValueType | null;
  /** Time of the latest durable point of the series, or null when it has none. */
  lastPointNs(seriesId: string): bigint | null;
  finalisedNs(seriesId: string): bigint | null;
  /**
   * For each series id (null: no series): its value type, the time of its latest durable
   * point and its finalised watermark, or null when the engine does not know it. All read
   * on one snapshot with one meta read each (a welcome of 100,000 streams).
   */
  streamStates(seriesIds: ReadonlyArray<string | null>): Array<StreamState | null>;
  /** Makes the next reads see commits of other threads (series the main thread just created). */
  refresh(): void;
  close(): Promise<void>;
}


/**
 * Runs the engine's write path (append, head segments, seal, rollups, group commit) on a
 * throwaway store in a temporary directory, on this thread, before collectors connect.
 * Why: the first groups of a fresh worker ran 10-15x slower per point than later ones
 * (V8 compiles and optimises the write path's functions while they run), and the first
 * ~50 batches of every run waited 80-180 ms behind them. The code this thread compiles
 * here is the code the real engine instance runs, so that cost is paid before the welcome.
 * Returns the milliseconds spent; a failure (say, no space in the temporary directory)
 * only costs the warm-up, never the start.
 */
export async function warmUpEngine(): Promise<number> {
  const t0 = performance.now();
  const dir = await mkdtemp(join(tmpdir(), 'historian-ingest-warmup-'));
  try {
    const store = SeriesStore.open(join(dir, 'series'), { groupWindowMs: 0 });
    try {
      const ids = Array.from({ length: WARM_BATCHES }, () => randomUUID());
      for (const id of ids) await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
      const t = 1_700_000_000_000_000_000n;
      for (let g = 0; g < WARM_GROUPS; g++) {
        await store.write(ids.map((series, j) => {
          const times = new BigInt64Array(WARM_POINTS), values = new Float64Array(WARM_POINTS), quality = new Uint32Array(WARM_POINTS).fill(192);
          for (let i = 0; i < WARM_POINTS; i++) {
            times[i] = t + BigInt((g * WARM_POINTS + i) * 1_000_000_000 + j);
            values[i] = Math.round(Math.sin(g * WARM_POINTS + i) * 1e4) / 100;
          }
          return { series, times, values, quality };
        }), { principal: 'ingest-warm-up' });
      }
    } finally {
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return performance.now() - t0;
}

/**
 * The engine behind IngestStore: the worker's own SeriesStore over the shared environment.
 * After each quiet seal that sealed points it runs `collect` (a full GC by default): the
 * heads the seal emptied leave the head cache, but their columns are external memory V8
 * frees only at a full collection, and a quiet thread allocates nothing that would start
 * one (after a bulk load the service kept the heads' ~140 MB resident until the next load,
 * issue 33).
 */
export class EngineIngestStore implements IngestStore {
  private constructor(private readonly engine: SeriesStore) {}

  /**
   * groupWindowMs 0: the commit pipeline already gathers a group before it writes.
   * quietSealMs: heads are sealed once batches stop for that long (SERVICE_INGEST_QUIET_SEAL_MS),
   * when quietSealAllowed says so (not while the disk is below the ingest threshold).
   */
  static open(seriesDir: string, quietSealMs = 0, quietSealAllowed?: () => boolean, latest: SharedArrayBuffer | null = null, collect: () => void = fullGc): EngineIngestStore {
    const onTransaction = groupTrace ? (t: object) => groupTrace?.record({ k: 'txn', ...t }) : undefined;
    return new EngineIngestStore(SeriesStore.open(seriesDir, { groupWindowMs: 0, onTransaction, sealThread: process.env.HISTORIAN_SEAL_THREAD !== '0', quietSealMs, quietSealAllowed, onQuietSeal: collect, latest: latest === null ? null : LatestTable.attach(latest) }));
  }

  async write(batches: PointBatch[], principal: string): Promise<StoredBatchResult[]> {
    const r = await this.engine.write(batches, { principal });
    return r.batches;
  }

  async setFinalised(seriesId: string, throughNs: bigint): Promise<void> {
    await this.engine.setFinalised(seriesId, throughNs);
  }

  seriesType(seriesId: string): ValueType | null {
    return this.engine.meta(seriesId)?.type ?? null;
  }

  lastPointNs(seriesId: string): bigint | null {
    if (!this.engine.meta(seriesId)) return null;
    return this.engine.read((v) => readSnapshot(v, seriesId))?.ts ?? null;
  }

  finalisedNs(seriesId: string): bigint | null {
    if (!this.engine.meta(seriesId)) return null;
    return this.engine.read((v) => readFinalised(v, seriesId));
  }

  streamStates(seriesIds: ReadonlyArray<string | null>): Array<StreamState | null> {
    return this.engine.read((v) => seriesIds.map((id) => {
      const meta = id === null ? undefined : readMeta(v, id);
      if (meta === undefined || id === null) return null;
      return { type: meta.type, lastNs: readSnapshot(v, id, true)?.ts ?? null, finalisedNs: meta.finalisedNs };
    }));
  }

  refresh(): void {
    // lmdb-js keeps a thread's read snapshot until that thread writes; the main thread
    // creates series, so the worker renews its snapshot before looking them up.
    this.engine.env.root.resetReadTxn();
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}
