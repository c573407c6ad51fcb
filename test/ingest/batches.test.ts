import t from 'tap';
import { startTestService, request } from '../helpers/service.js';
import { connect, floatBatch, readAll, T0 } from '../helpers/ingest.js';

t.test('per-batch rejections, fencing and credit over a real gRPC session', async (t) => {
  const svc = await startTestService(t, { env: { SERVICE_INGEST_LIVE_CREDIT: '5000', SERVICE_INGEST_BACKFILL_CREDIT: '3000', SERVICE_INGEST_MAX_BATCH_POINTS: '6000' } });

  t.test('malformed batches are rejected one by one and the stream keeps working', async (t) => {
    const c = await connect(svc, { collectorId: 'press-7', epoch: 1n, streams: [{ name: 'p', type: 'float64' }, { name: 'on', type: 'boolean' }] });
    t.teardown(() => c.close());
    const good = floatBatch(T0, 10);
    const ts = Buffer.from(good.times.buffer);

    const wrongType = await c.sendRaw({ lane: 'LIVE', seq: 1, stream: 1, count: 10, ts_ns: ts, f64: Buffer.from(good.values.buffer) });
    t.match(wrongType, { ok: false, reason: 'wrong-type', retryable: false }, 'a float column on a boolean stream is wrong-type');

    const future = new BigInt64Array([T0, 9_000_000_000_000_000_000n]);
    const badTs = await c.sendRaw({ lane: 'LIVE', seq: 2, stream: 0, count: 2, ts_ns: Buffer.from(future.buffer), f64: Buffer.from(new Float64Array([1, 2]).buffer) });
    t.match(badTs, { ok: false, reason: 'bad-timestamps' }, 'a time far in the future is bad-timestamps');

    const short = await c.sendRaw({ lane: 'LIVE', seq: 3, stream: 0, count: 10, ts_ns: ts.subarray(0, 40), f64: Buffer.from(good.values.buffer) });
    t.match(short, { ok: false, reason: 'bad-columns' }, 'a short ts column is bad-columns');

    const unknown = await c.sendRaw({ lane: 'LIVE', seq: 4, stream: 9, count: 10, ts_ns: ts, f64: Buffer.from(good.values.buffer) });
    t.match(unknown, { ok: false, reason: 'unknown-stream' }, 'an undeclared stream index is unknown-stream');

    const gap = await c.sendRaw({ lane: 'LIVE', seq: 7, stream: 0, count: 10, ts_ns: ts, f64: Buffer.from(good.values.buffer) });
    t.match(gap, { ok: false, reason: 'sequence-gap', expectedSeq: 5 }, 'a sequence gap names the expected seq');

    c.nextSeq.LIVE = 5;
    const ok = await c.send('LIVE', 0, 'float64', good);
    t.ok(ok.ok, 'the next well-formed batch on the same stream is acknowledged');
    t.equal(c.ackedThrough.LIVE, 5, 'rejected batches settle in sequence too');
    const nonFinite = { times: new BigInt64Array([T0 + 100n, T0 + 101n]), values: new Float64Array([NaN, 3]), quality: null };
    const partial = await c.send('LIVE', 0, 'float64', nonFinite);
    t.match(partial, { ok: true, refused: 1, refusals: [{ index: 0, reason: 'non-finite' }] }, 'per-point refusals are reported with the ack');
    t.equal(readAll(svc, c.welcome.streams[0].series_id).length, 11, 'only the valid points were written');
  });

  t.test('a higher epoch fences the older session: notice, counters, later batches never written', async (t) => {
    const old = await connect(svc, { collectorId: 'press-8', epoch: 5n, streams: [{ name: 'p', type: 'float64' }] });
    t.teardown(() => old.close());
    t.ok((await old.send('LIVE', 0, 'float64', floatBatch(T0, 5))).ok);
    const fenced = new Promise((r) => old.once('fence', r));
    const fresh = await connect(svc, { collectorId: 'press-8', epoch: 6n, streams: [{ name: 'p', type: 'float64' }] });
    t.teardown(() => fresh.close());
    t.match(await fenced, { superseding_epoch: '6' }, 'the old session gets a fence notice');
    t.equal(fresh.welcome.streams[0].last_durable_ns, String(T0 + 4_000_000_000n), 'the welcome says where the stream resumes');
    const late = await old.send('LIVE', 0, 'float64', floatBatch(T0 + 100_000_000_000n, 5));
    t.match(late, { ok: false, reason: 'fenced' }, 'a batch of the fenced session is rejected');
    t.equal(readAll(svc, fresh.welcome.streams[0].series_id).length, 5, 'and nothing of it was written');

    await t.rejects(connect(svc, { collectorId: 'press-8', epoch: 4n, streams: [{ name: 'p', type: 'float64' }] }), { code: 9 }, 'a lower epoch is refused with FAILED_PRECONDITION');
    const d = (await request(`${svc.url}/v1/collectors`)).json as Array<Record<string, unknown>>;
    const row = d.find((x) => x.collector_id === 'press-8') as Record<string, unknown>;
    t.equal(row.session_epoch, 6);
    t.equal(row.fenced_streams_total, 1);
    t.type(row.last_fenced_ns, 'bigint');
  });

  t.test('credit: exhausted credit makes the collector wait; overdrawing is told and paused, not disconnected', async (t) => {
    const c = await connect(svc, { collectorId: 'press-9', epoch: 1n, streams: [{ name: 'p', type: 'float64' }] });
    t.teardown(() => c.close());
    t.equal(c.credit.LIVE, 5000);
    t.equal(c.credit.BACKFILL, 3000);
    const sends = [];
    for (let i = 0; i < 10; i++) sends.push(c.send('BACKFILL', 0, 'float64', floatBatch(T0 + BigInt(i) * 1_000_000_000_000n, 1000)));
    const outs = await Promise.all(sends);
    t.ok(outs.every((o) => o.ok), 'ten batches through three batches of credit all get acknowledged');
    t.ok(c.creditWaitMs.BACKFILL > 0, 'the time spent waiting for credit is counted');
    const overdraw = new Promise((r) => c.once('over_credit', r));
    // One batch larger than the whole lane's credit: two batches that together overdraw
    // would race the first one's acknowledgement (it can return its credit before the
    // second arrives when HTTP/2 flow control splits them), so the test could not fail
    // for the right reason only.
    const big = c.sendNow('LIVE', 0, 'float64', floatBatch(T0 + 50_000_000_000_000n, 6000));
    t.match(await overdraw, { lane: 'LIVE', available: '5000', sent_points: '6000' }, 'the over-credit batch is named with the credit that was available');
    t.ok((await big).ok, 'the batch is still written: the session is slowed, not dropped');
    t.ok((await c.send('LIVE', 0, 'float64', floatBatch(T0 + 60_000_000_000_000n, 1000))).ok, 'and the paused session takes batches again once its credit is back');
    t.equal(c.ended, null, 'the session is still open');
    const detail = (await request(`${svc.url}/v1/collectors/press-9`)).json as { live: { over_credit_total: number }; backfill: { credit_wait_ms: number } };
    t.equal(Number(detail.live.over_credit_total), 1);
  });
});
