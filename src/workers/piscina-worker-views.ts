// piscina 5 builds, for every task it places, a view of each ready worker for its load
// balancer: an object literal with six getters (`WorkerInfo.interface`). V8 allocates an
// object literal's accessor pairs in old space, so every view's closures survived the next
// scavenge: on the HTTP thread during bench:storage's reads, 0.60 MB promoted a scavenge
// (0.16 MB with this) and the major GCs that follow (docs/decisions.md, 2026-11-22). The getters read the worker live, so
// one view per worker answers the same as a new one per task; this keeps the first.
// A piscina whose WorkerInfo no longer has that getter is left alone, and
// test/workers/piscina-worker-views.test.ts fails, so an upgrade gets looked at again.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const MEMOIZED = Symbol('memoized worker view');

/** Makes piscina's per-task worker views one object per worker. True when it is in effect. */
export function memoizeWorkerViews(): boolean {
  let mod: { WorkerInfo?: { prototype: object } };
  try {
    // the package's exports hide dist/worker_pool; a file path is the same module instance
    // piscina's own require() loaded (the CommonJS cache is keyed by file name)
    mod = require(join(dirname(require.resolve('piscina')), 'worker_pool', 'index.js')) as typeof mod;
  } catch {
    return false;
  }
  const proto = mod.WorkerInfo?.prototype;
  const d = proto === undefined ? undefined : Object.getOwnPropertyDescriptor(proto, 'interface');
  if (proto === undefined || d?.get === undefined) return false;
  if (MEMOIZED in d.get) return true;
  const build = d.get;
  const views = new WeakMap<object, unknown>();
  const get = function (this: object): unknown {
    let view = views.get(this);
    if (view === undefined) { view = build.call(this); views.set(this, view); }
    return view;
  };
  Object.defineProperty(get, MEMOIZED, { value: true });
  Object.defineProperty(proto, 'interface', { get, configurable: true, enumerable: d.enumerable });
  return true;
}
