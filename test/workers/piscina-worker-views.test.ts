import t from 'tap';
import { Piscina } from 'piscina';
import { memoizeWorkerViews } from '../../src/workers/piscina-worker-views.js';

// What piscina hands its load balancer for each task: with the views memoized, the same
// object per worker every time (a new literal with getters per task promoted garbage).
t.test('piscina hands its balancer one view object per worker across tasks', async (t) => {
  t.equal(memoizeWorkerViews(), true, 'the patch applies to the installed piscina');
  t.equal(memoizeWorkerViews(), true, 'applying it twice is harmless');
  // what piscina's PiscinaWorker type says of a view (the type is not exported)
  type View = { readonly id: number; readonly currentUsage: number };
  const seen: View[][] = [];
  const pool = new Piscina({
    filename: new URL('../helpers/echo-worker.mjs', import.meta.url).href,
    minThreads: 2, maxThreads: 2,
    loadBalancer: (_task, workers) => {
      seen.push([...workers]);
      return workers.find((w) => w.currentUsage === 0) ?? null;
    },
  });
  t.teardown(() => pool.destroy());
  for (let i = 0; i < 20; i++) t.equal(await pool.run(i), i);
  const views = new Set(seen.flat());
  const ids = new Set([...views].map((v) => v.id));
  t.ok(seen.length >= 20, `the balancer placed every task (${seen.length} calls)`);
  t.equal(views.size, ids.size, `one view per worker thread (${views.size} views for threads ${[...ids].join(', ')})`);
  t.ok(ids.size >= 1 && ids.size <= 2);
  // the view reads the worker live: its usage is 0 between tasks
  for (const v of views) t.equal(v.currentUsage, 0);
});
