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

  t.test('a scan carries several streams\' points in one batch; a bad point of it rejects the whole scan', async (t) => {
    const c = await connect(svc, { collectorId: 'press-scan', epoch: 1n, streams: [{ name: 'a', type: 'float64' }, { name: 'b', type: 'float64' }, { name: 'c', type: 'float64' }, { name: 'on', type: 'boolean' }] });
    t.teardown(() => c.close());
    const ids = c.welcome.streams.map((s) => s.series_id);
    const S = 1_000_000_000n;
    // every stream once: each point goes to its own stream's series, whatever the order
    const once = await c.sendScan('LIVE', Uint32Array.of(2, 0, 1), 'float64', { times: BigInt64Array.of(T0, T0, T0), values: Float64Array.of(20, 0, 10), quality: null });
    t.match(once, { ok: true, refused: 0 }, 'a scan of three streams is one acknowledged batch');
    // streams interleaved, twice each, with per-point quality
    const twice = await c.sendScan('LIVE', Uint32Array.of(0, 1, 2, 0, 1, 2), 'float64', {
      times: BigInt64Array.of(T0 + S, T0 + S, T0 + S, T0 + 2n * S, T0 + 2n * S, T0 + 2n * S), values: Float64Array.of(1, 11, 21, 2, 12, 22), quality: Uint32Array.of(192, 192, 0, 192, 64, 192),
    });
    t.match(twice, { ok: true, refused: 0 });
    t.same(readAll(svc, ids[0]).map((p) => [p.ts - T0, p.value, p.quality]), [[0n, 0, 192], [S, 1, 192], [2n * S, 2, 192]], 'stream a got its points in order');
    t.same(readAll(svc, ids[1]).map((p) => [p.ts - T0, p.value, p.quality]), [[0n, 10, 192], [S, 11, 192], [2n * S, 12, 64]], 'stream b, with its qualities');
    t.same(readAll(svc, ids[2]).map((p) => [p.ts - T0, p.value, p.quality]), [[0n, 20, 192], [S, 21, 0], [2n * S, 22, 192]], 'stream c');
    // a refused point is named by its index in the scan, not in its stream
    const partial = await c.sendScan('LIVE', Uint32Array.of(1, 0, 1), 'float64', { times: BigInt64Array.of(T0 + 3n * S, T0 + 3n * S, T0 + 4n * S), values: Float64Array.of(13, NaN, 14), quality: null });
    t.match(partial, { ok: true, refused: 1, refusals: [{ index: 1, reason: 'non-finite' }] }, 'the non-finite point of stream a is point 1 of the scan');
    t.equal(readAll(svc, ids[1]).length, 5, 'the other points of the scan were written');

    const before = ids.map((id) => readAll(svc, id).length);
    const unknown = await c.sendScan('LIVE', Uint32Array.of(0, 9), 'float64', { times: BigInt64Array.of(T0 + 5n * S, T0 + 5n * S), values: Float64Array.of(1, 2), quality: null });
    t.match(unknown, { ok: false, reason: 'unknown-stream', detail: /point 1: stream index 9 was not declared/ }, 'an undeclared stream in a scan names its point');
    const mixed = await c.sendScan('LIVE', Uint32Array.of(0, 3), 'float64', { times: BigInt64Array.of(T0 + 5n * S, T0 + 5n * S), values: Float64Array.of(1, 2), quality: null });
    t.match(mixed, { ok: false, reason: 'wrong-type', detail: /point 1: stream 3 \(on\) is boolean/ }, 'a scan carries one value type');
    const shortStreams = await c.sendRaw({ lane: 'LIVE', seq: Number(c.nextSeq.LIVE), count: 2, streams: Buffer.from(Uint32Array.of(0).buffer), ts_ns: Buffer.from(BigInt64Array.of(T0 + 5n * S, T0 + 5n * S).buffer), f64: Buffer.from(Float64Array.of(1, 2).buffer) });
    t.match(shortStreams, { ok: false, reason: 'bad-columns', detail: /streams has 4 bytes, expected 8/ }, 'a streams column of the wrong length is bad-columns');
    t.same(ids.map((id) => readAll(svc, id).length), before, 'nothing of a rejected scan was written');
    c.nextSeq.LIVE++;
    t.ok((await c.sendScan('LIVE', Uint32Array.of(0), 'float64', { times: BigInt64Array.of(T0 + 6n * S), values: Float64Array.of(6), quality: null })).ok, 'and the session goes on');
    t.equal(c.ackedThrough.LIVE, c.nextSeq.LIVE - 1, 'every scan settled in sequence');
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
