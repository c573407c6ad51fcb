import t from 'tap';
import { startTestService, request } from '../helpers/service.js';
import { connect, floatBatch, readAll, until, T0 } from '../helpers/ingest.js';

t.test('a collector session over loopback gRPC', async (t) => {
  const svc = await startTestService(t);

  t.test('a stream without a series gets a staging series and its acknowledged points read back exactly', async (t) => {
    const c = await connect(svc, { collectorId: 'line-1', epoch: 1n, streams: [{ name: 'temp', type: 'float64' }, { name: 'count', type: 'int64' }] });
    t.teardown(() => c.close());
    t.equal(c.welcome.granted_epoch, '1');
    t.ok(c.welcome.streams[0].accepted && c.welcome.streams[1].accepted, 'both streams accepted');
    t.equal(c.welcome.streams[0].has_last_durable, false, 'a new series has no durable point yet');
    const seriesId = c.welcome.streams[0].series_id;
    const rec = await svc.service.context.parts.series.get(seriesId);
    t.equal(rec?.sourceName, 'line-1/temp', 'the series is named after the collector and stream');

    const b = floatBatch(T0, 1000, 1_000_000_000n, 0.5);
    const out = await c.send('LIVE', 0, 'float64', b);
    t.ok(out.ok, 'acknowledged');
    const ints = { times: new BigInt64Array([T0, T0 + 1n]), values: new BigInt64Array([2n ** 62n + 1n, -5n]), quality: new Uint32Array([192, 0]) };
    t.ok((await c.send('LIVE', 1, 'int64', ints)).ok);
    const points = readAll(svc, seriesId);
    t.equal(points.length, 1000, 'every acknowledged point is stored');
    t.equal(points[0].ts, T0, 'nanosecond timestamps exact');
    t.equal(points[999].value, 999.5);
    const ip = readAll(svc, c.welcome.streams[1].series_id);
    t.same(ip.map((p) => [p.ts, p.value, p.quality]), [[T0, 2n ** 62n + 1n, 192], [T0 + 1n, -5n, 0]], 'int64 values and quality exact');
    t.equal(c.ackedThrough.LIVE, 2);
  });

  t.test('GET /v1/collectors returns exactly the Collector diagnostic shape', async (t) => {
    let list: Array<Record<string, unknown>> = [];
    await until(async () => {
      list = (await request(`${svc.url}/v1/collectors`)).json as Array<Record<string, unknown>>;
      return list.length === 1 && list[0].acked_through !== 0;
    }).catch(() => undefined);
    const r = await request(`${svc.url}/v1/collectors`);
    t.equal(r.status, 200);
    list = r.json as Array<Record<string, unknown>>;
    t.equal(list.length, 1);
    t.same(Object.keys(list[0]).sort(), ['acked_through', 'collector_id', 'credit_backfill', 'credit_live', 'fenced_streams_total',
      'last_batch_arrival_ns', 'last_collector_receipt_ns', 'last_fenced_ns', 'session_epoch', 'streams', 'watermark_ns']);
    t.equal(list[0].collector_id, 'line-1');
    t.same(list[0].streams, ['temp', 'count']);
    t.equal(list[0].fenced_streams_total, 0);
    t.equal(list[0].last_fenced_ns, null);
    t.ok(typeof list[0].last_batch_arrival_ns === 'bigint' && (list[0].last_batch_arrival_ns as bigint) > 1_600_000_000_000_000_000n, 'arrival time is an exact int64 ns');
  });

  t.test('GET /v1/collectors/{id} adds per-stream detail; an unknown collector is 404', async (t) => {
    const r = await request(`${svc.url}/v1/collectors/line-1`);
    t.equal(r.status, 200);
    const d = r.json as { stream_detail: Array<{ name: string; points_written: number | bigint }>; live: { batches_accepted: number } | null };
    t.equal(d.stream_detail.length, 2);
    t.equal(Number(d.stream_detail[0].points_written), 1000);
    const missing = await request(`${svc.url}/v1/collectors/nobody`);
    t.equal(missing.status, 404);
    t.equal((missing.json as { code: string }).code, 'not-found');
  });
});
