// What the ingest worker needs from the storage engine, in one place, so that the rest of
// src/ingest never reaches into src/storage's internals. The worker opens its own engine
// instance over the shared LMDB environment (STACK-NOTES §3: same options everywhere) and
// is the single writer of collector data.
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { PointBatch } from '../storage/write-batch.js';
import type { Refusal } from '../storage/write-batch.js';
import { SeriesStore, readSnapshot, readFinalised } from '../storage/series-store.js';

export interface StoredBatchResult {
  accepted: number;
  unchanged: number;
  refused: number;
  refusals: Refusal[];
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
  /** Makes the next reads see commits of other threads (series the main thread just created). */
  refresh(): void;
  close(): Promise<void>;
}


/** The engine behind IngestStore: the worker's own SeriesStore over the shared environment. */
export class EngineIngestStore implements IngestStore {
  private constructor(private readonly engine: SeriesStore) {}

  /** groupWindowMs 0: the commit pipeline already gathers a group before it writes. */
  static open(seriesDir: string): EngineIngestStore {
    return new EngineIngestStore(SeriesStore.open(seriesDir, { groupWindowMs: 0 }));
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

  refresh(): void {
    // lmdb-js keeps a thread's read snapshot until that thread writes; the main thread
    // creates series, so the worker renews its snapshot before looking them up.
    this.engine.env.root.resetReadTxn();
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}
