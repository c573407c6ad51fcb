// Starting a worker_thread whose entry may be a TypeScript source: under `node --import tsx`
// a raw .ts Worker fails (STACK-NOTES §2), so a small CommonJS bootstrap registers tsx in the
// new thread first. Compiled builds load the .js entry directly through the same bootstrap.
import { Worker } from 'node:worker_threads';

// The first ArrayBuffer a thread transfers (ingest -> seal thread columns) throws away V8's
// optimized code of every typed-array function in that thread (its "no buffer was ever
// detached" assumption); detaching an empty one first has them compiled once, not twice.
const BOOT = `
{ const b = new ArrayBuffer(0); structuredClone(b, { transfer: [b] }); }
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.entry.endsWith('.ts')) { const { register } = await import('tsx/esm/api'); register(); }
  await import(workerData.entry);
  if (process.env.HISTORIAN_HEAP_REPORT) (await import(workerData.heapReport)).reportHeap(workerData.entry.split('/').pop().split('.')[0]);
})().catch((e) => { require('node:worker_threads').parentPort.postMessage({ rpc: 'note', op: 'start-failed', arg: String(e && e.stack || e) }); });
`;

/**
 * The URL of a sibling module of `importMetaUrl` named `name`, with the extension the caller
 * itself was loaded with (.ts from sources, .js from a build).
 */
export function siblingEntry(importMetaUrl: string, name: string): string {
  return new URL(`./${name}${importMetaUrl.endsWith('.ts') ? '.ts' : '.js'}`, importMetaUrl).href;
}

/** A worker running `entry`; `entry` is also passed in workerData for the bootstrap. */
export function startThread<T extends object>(entry: string, data: T): Worker {
  return new Worker(BOOT, { eval: true, workerData: { ...data, entry, heapReport: siblingEntry(import.meta.url, 'heap-report') } });
}
