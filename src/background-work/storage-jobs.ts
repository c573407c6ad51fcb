// The storage engine's background work: lifecycle enforcement (records an Operation,
// so operators see what was dropped and why) and sealing heads that stopped receiving
// points (so a quiet series still ends up in compressed, checksummed chunks).
// Rollup repair needs no job: the engine repairs the affected buckets inside the write
// that brought the late data.
import type { OperationsCatalogue } from '../operations/catalogue.js';
import type { SeriesStore } from '../storage/series-store.js';
import type { JobRunner } from './job-runner.js';

/** The principal recorded for work the server starts by itself. */
export const SYSTEM_PRINCIPAL = 'system';

export interface StorageJobTimings {
  lifecycleIntervalMs: number;
  sealIntervalMs: number;
  /** A head with no write for this long is sealed. */
  sealIdleMs: number;
}

// Retention is counted in days, so hourly enforcement is precise enough; sealing idle
// heads every minute bounds how long open points stay outside compressed chunks.
export const DEFAULT_STORAGE_JOB_TIMINGS: StorageJobTimings = {
  lifecycleIntervalMs: 60 * 60_000,
  sealIntervalMs: 60_000,
  sealIdleMs: 10 * 60_000,
};

export function registerStorageJobs(runner: JobRunner, store: SeriesStore, operations: OperationsCatalogue, timings: StorageJobTimings = DEFAULT_STORAGE_JOB_TIMINGS): void {
  runner.register({
    name: 'lifecycle-enforcement',
    kind: 'lifecycle',
    intervalMs: timings.lifecycleIntervalMs,
    run: async () => {
      const op = await operations.start({
        namespace: 'job', kind: 'storage.lifecycle-enforcement', principal: SYSTEM_PRINCIPAL,
        reason: 'scheduled lifecycle enforcement', detail: { adapter: 'lifecycle' }, unit: 'series',
      });
      try {
        const report = await store.enforceLifecycle();
        const value = {
          now_ns: report.nowNs.toString(),
          series: report.series.length,
          chunks_dropped: report.chunksDropped,
          points_dropped: report.pointsDropped,
          rollups_dropped: report.rollupsDropped,
        };
        await operations.progress(op.id, { completed: BigInt(report.series.length), total: BigInt(report.series.length) });
        await operations.complete(op.id, { adapter: 'lifecycle', value });
        return { summary: `${value.series} series with a policy; dropped ${value.chunks_dropped} chunks, ${value.points_dropped} points, ${value.rollups_dropped} rollup rows`, operationId: op.id };
      } catch (e) {
        await operations.fail(op.id, { message: (e as Error)?.message ?? String(e) });
        throw e;
      }
    },
  });
  runner.register({
    name: 'seal-idle-heads',
    kind: 'seal',
    intervalMs: timings.sealIntervalMs,
    run: async () => {
      const r = await store.sealHeads(timings.sealIdleMs);
      return { summary: `sealed ${r.points} points of ${r.series} series` };
    },
  });
}
