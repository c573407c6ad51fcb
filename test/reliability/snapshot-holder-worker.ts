// A thread that reads like a read-pool worker (one read view over the series env), then
// sleeps in Atomics.wait without an event-loop turn, as a Piscina worker in 'sync' mode does
// between tasks. Used by read-snapshot-release.test.ts.
import { workerData, parentPort } from 'node:worker_threads';
import { openSeriesEnv, withReadView, readSnapshot } from '../../src/storage/series-store.js';

const { dir, series, flag } = workerData as { dir: string; series: string; flag: SharedArrayBuffer };
const env = openSeriesEnv(dir);
env.root.resetReadTxn();
withReadView(env, (view) => readSnapshot(view, series));
parentPort!.postMessage('read');
const f = new Int32Array(flag);
while (Atomics.load(f, 0) === 0) Atomics.wait(f, 0, 0, 60_000);
env.close();
