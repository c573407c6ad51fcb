// Starts the series side of the service on the HTTP thread: the storage engine (this
// thread's writer: series creation, policies, writable class, background jobs), the
// read worker pool, the series catalogue and the background job runner. Returns the
// closer that stops them in reverse order.
import { join } from 'node:path';
import type { ServiceContext } from '../service-context.js';
import { LatestTable, SeriesStore } from '../storage/series-store.js';
import { ReadPool } from '../workers/read-pool.js';
import { JobRunner } from '../background-work/job-runner.js';
import { registerStorageJobs } from '../background-work/storage-jobs.js';
import { SeriesCatalogue } from './catalogue.js';

declare module '../service-context.js' {
  interface ServiceParts {
    storage: SeriesStore;
    readPool: ReadPool;
    series: SeriesCatalogue;
    jobs: JobRunner;
  }
}

export function seriesDir(dataDir: string): string {
  return join(dataDir, 'series');
}

export function startSeriesPart(context: ServiceContext): () => Promise<void> {
  const dir = seriesDir(context.config.dataDir);
  // the latest point of each series in shared memory: snapshots answer from it (latest-table.ts)
  const storage = SeriesStore.open(dir, { latest: LatestTable.create() });
  const readPool = new ReadPool(dir, context.config.workers);
  const jobs = new JobRunner(context.log);
  registerStorageJobs(jobs, storage, context.operations);
  context.parts.storage = storage;
  context.parts.readPool = readPool;
  const catalogue = new SeriesCatalogue(context.db, storage);
  context.parts.series = catalogue;
  context.parts.jobs = jobs;
  return async () => {
    catalogue.close();
    await jobs.stop();
    await readPool.close();
    await storage.close();
  };
}
