// Below the free-disk threshold ingest refuses batches with a retryable rejection while
// reads keep working. The threshold is configured above the disk's actual free space, so
// the real statfs check trips without filling the disk.
import t from 'tap';
import { statfs } from 'node:fs/promises';
import { startTestService, request } from '../helpers/service.js';
import { connect, floatBatch, readAll, until, T0 } from '../helpers/ingest.js';

t.test('free disk below SERVICE_INGEST_MIN_FREE_BYTES: batches refused storage-full (retryable), reads keep working', async (t) => {
  const s = await statfs(process.env.TMPDIR ?? '/tmp');
  const free = s.bavail * s.bsize;
  const svc = await startTestService(t, { env: { SERVICE_INGEST_MIN_FREE_BYTES: String(Math.min(Number.MAX_SAFE_INTEGER, free * 4 + 1024 ** 3)) } });
  const c = await connect(svc, { collectorId: 'full-1', epoch: 1n, streams: [{ name: 'p', type: 'float64' }] });
  t.teardown(() => c.close());
  t.ok(c.welcome.streams[0].accepted, 'sessions still open, so the collector learns where to resume');
  const series = c.welcome.streams[0].series_id;

  // Points that reached the store through another writer (the main thread's engine) before the disk filled.
  await svc.service.context.parts.storage.write([{ series, ...floatBatch(T0, 20, 1_000_000_000n, 5), quality: new Uint32Array(20).fill(192) }], { principal: 'test' });

  const live = await c.send('LIVE', 0, 'float64', floatBatch(T0 + 100_000_000_000n, 10));
  t.match(live, { ok: false, reason: 'storage-full', retryable: true }, 'a live batch is refused, retryable');
  const back = await c.send('BACKFILL', 0, 'float64', floatBatch(T0 + 200_000_000_000n, 10));
  t.match(back, { ok: false, reason: 'storage-full', retryable: true }, 'so is a backfill batch');
  t.equal(c.ended, null, 'the session stays open');
  // The rejection arrives first, the cumulative ack right after it.
  await until(() => c.ackedThrough.LIVE === 1 && c.ackedThrough.BACKFILL === 1);
  t.same([c.credit.LIVE, c.credit.BACKFILL], [Number(c.welcome.live_credit), Number(c.welcome.backfill_credit)], 'refused batches settle in sequence, with their credit back');
  t.equal(readAll(svc, series).length, 20, 'nothing of the refused batches was written');

  const raw = await request(`${svc.url}/v1/series/${series}/raw?start_ns=0&end_ns=${2n ** 62n}`);
  t.equal(raw.status, 200, 'raw reads keep working');
  t.equal((raw.json as { points: unknown[] }).points.length, 20);
  const snap = await request(`${svc.url}/v1/series/${series}/snapshot`);
  t.equal(snap.status, 200, 'snapshot reads keep working');

  const detail = (await request(`${svc.url}/v1/collectors/full-1`)).json as { rejections: Record<string, number | bigint> };
  t.equal(Number(detail.rejections['storage-full']), 2, 'the rejections are counted by reason');
});
