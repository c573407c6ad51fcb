import t from 'tap';
import { startTestService, request } from '../helpers/service.js';
import type { OperationRecord } from '../../src/operations/catalogue.js';

interface Page { items: Array<{ id: string; kind: string; state: string; created_ns: string; progress: { completed: bigint | number } }>; next_cursor: string | null }

t.test('operations: lifecycle, paging, filters and visibility', async (t) => {
  const svc = await startTestService(t);
  const ops = svc.service.context.operations;
  const started: OperationRecord[] = [];
  for (let i = 0; i < 25; i++) {
    started.push(await ops.start({
      namespace: 'lifecycle', kind: i % 2 ? 'series.lifecycle-enforcement' : 'series.rollup-repair',
      principal: i % 5 === 0 ? 'bob' : 'alice', detail: { adapter: 'series-lifecycle', series_id: `s${i}` }, total: 10n, cancellable: true,
    }));
  }
  t.equal(await ops.progress(started[0].id, { completed: 4n, stage: 'dropping chunks' }), true, 'progress reports no cancel');
  await ops.complete(started[0].id, { adapter: 'series-lifecycle', value: { chunks_dropped: 3 } });
  await ops.fail(started[1].id, { code: 'chunk-corrupt' });
  await ops.cancel(started[2].id);
  t.equal(await ops.progress(started[2].id, { completed: 1n }), false, 'cancelled running work learns it at its next progress report');

  t.test('a single record has every field of the spec shape', async (t) => {
    const r = await request(`${svc.url}/v1/operations/${encodeURIComponent(started[0].id)}`);
    t.equal(r.status, 200);
    const op = r.json as Record<string, unknown>;
    t.same(Object.keys(op).sort(), ['affected_resources', 'cancellable', 'completed_ns', 'created_ns', 'detail', 'error', 'estimated_work_remaining',
      'id', 'kind', 'principal', 'progress', 'rate', 'reason', 'receipt', 'source_change_set_id', 'stage', 'state'].sort());
    t.equal(op.state, 'completed');
    t.match(op.created_ns, /^[0-9]+$/, 'created_ns is an exact int64 string');
    t.match(op.completed_ns, /^[0-9]+$/);
    t.same(op.receipt, { adapter: 'series-lifecycle', value: { chunks_dropped: 3 } });
  });

  t.test('keyset paging visits every record once, in created order', async (t) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await request(`${svc.url}/v1/operations?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      t.equal(r.status, 200);
      const page = r.json as Page;
      seen.push(...page.items.map((i) => i.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    t.equal(pages, 4);
    t.same(seen, started.map((s) => s.id));
  });

  t.test('filters by kind and state', async (t) => {
    const byKind = (await request(`${svc.url}/v1/operations?kind=series.rollup-repair&limit=1000`)).json as Page;
    t.equal(byKind.items.length, 13);
    t.ok(byKind.items.every((i) => i.kind === 'series.rollup-repair'));
    const failed = (await request(`${svc.url}/v1/operations?state=failed`)).json as Page;
    t.same(failed.items.map((i) => i.id), [started[1].id]);
    const bad = await request(`${svc.url}/v1/operations?state=sleeping`);
    t.equal(bad.status, 400);
  });

  t.test('the catalogue filters to the owner for non-administrators', async (t) => {
    const bobs = await ops.list({ principal: 'bob', limit: 100 });
    t.equal(bobs.items.length, 5);
    t.ok(bobs.items.every((i) => i.principal === 'bob'));
  });

  t.test('final states are final', async (t) => {
    await t.rejects(ops.complete(started[1].id, null), { code: 'conflict' });
    await t.rejects(ops.cancel(started[0].id), { code: 'conflict' });
  });
});
