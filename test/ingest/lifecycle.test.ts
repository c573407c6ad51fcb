// Session lifecycle over loopback gRPC: watermarks become the series' finalised watermark
// (GET /v1/series/{uuid}/finalised), heartbeats are answered, a plain reconnect resumes from
// the last durable point, and a silent session is ended by the idle timeout.
import t from 'tap';
import { startTestService, request } from '../helpers/service.js';
import { connect, floatBatch, readAll, until, T0 } from '../helpers/ingest.js';
import { createEntry } from '../../src/model/registries/registry-writes.js';

const SEC = 1_000_000_000n;

t.test('watermarks, heartbeats and a plain reconnect', async (t) => {
  const svc = await startTestService(t);

  t.test('a watermark is applied after the batches sent before it and raises the finalised watermark, never lowers it', async (t) => {
    const c = await connect(svc, { collectorId: 'wm-1', epoch: 1n, streams: [{ name: 'a', type: 'float64' }, { name: 'b', type: 'float64' }] });
    t.teardown(() => c.close());
    const series = c.welcome.streams[0].series_id;
    t.equal(c.welcome.streams[0].has_watermark, false, 'a new series has no watermark');
    const finalised = async (id: string) => (await request(`${svc.url}/v1/series/${id}/finalised`)).json as { series: string; finalised_ns: bigint | number | null };
    t.equal((await finalised(series)).finalised_ns, null, 'nothing is finalised before the first watermark');

    // The batch is not awaited: the watermark must still wait for it to be durable.
    const sent = c.send('LIVE', 0, 'float64', floatBatch(T0, 500, SEC));
    const through = T0 + 499n * SEC;
    await c.watermark(0, through);
    t.equal(readAll(svc, series).length, 500, 'when watermark_applied arrives, the batch sent before it is stored');
    t.ok((await sent).ok);
    t.same(await finalised(series), { series, finalised_ns: through }, 'GET /v1/series/{uuid}/finalised shows the watermark exactly');

    await c.watermark(0, T0);
    t.equal((await finalised(series)).finalised_ns, through, 'a lower watermark does not lower the finalised watermark');

    await c.watermark(1, T0 + 10n * SEC);
    await until(async () => {
      const list = (await request(`${svc.url}/v1/collectors`)).json as Array<{ collector_id: string; watermark_ns: bigint | number }>;
      return BigInt(list.find((x) => x.collector_id === 'wm-1')?.watermark_ns ?? 0) === T0 + 10n * SEC;
    });
    t.pass('the collector diagnostic reports the lowest watermark over its streams');
    const detail = (await request(`${svc.url}/v1/collectors/wm-1`)).json as { stream_detail: Array<{ watermark_ns: bigint | number | null }> };
    t.same(detail.stream_detail.map((s) => BigInt(s.watermark_ns ?? -1)), [through, T0 + 10n * SEC], 'per-stream watermarks in the detail');

    const refused = new Promise<{ reason: string }>((r) => c.once('rejected', r));
    c.watermark(7, T0).catch(() => undefined);
    t.match(await refused, { reason: 'unknown-stream' }, 'a watermark for an undeclared stream is rejected and the session stays open');
    t.equal(c.ended, null);
  });

  t.test('the welcome of a later session carries the watermark', async (t) => {
    const c = await connect(svc, { collectorId: 'wm-1', epoch: 2n, streams: [{ name: 'a', type: 'float64' }] });
    t.teardown(() => c.close());
    t.equal(c.welcome.streams[0].has_watermark, true);
    t.equal(c.welcome.streams[0].watermark_ns, String(T0 + 499n * SEC));
  });

  t.test('a heartbeat is answered with the server clock', async (t) => {
    const c = await connect(svc, { collectorId: 'hb-1', epoch: 1n, streams: [{ name: 'a', type: 'float64' }] });
    t.teardown(() => c.close());
    const answer = new Promise<{ sent_ns: string }>((r) => c.once('heartbeat', r));
    c.heartbeat();
    t.match((await answer).sent_ns, /^[1-9][0-9]*$/, 'the server sends its own time');
  });

  t.test('after a clean disconnect, a new session learns the last durable point; resending acknowledged batches adds nothing', async (t) => {
    const streams = [{ name: 'flow', type: 'float64' as const }, { name: 'level', type: 'float64' as const }];
    const first = await connect(svc, { collectorId: 'resume-1', epoch: 1n, streams });
    const b1 = floatBatch(T0, 100, SEC, 1), b2 = floatBatch(T0 + 100n * SEC, 100, SEC, 101);
    t.ok((await first.send('LIVE', 0, 'float64', b1)).ok);
    t.ok((await first.send('LIVE', 0, 'float64', b2)).ok);
    t.ok((await first.send('BACKFILL', 1, 'float64', floatBatch(T0, 7, SEC))).ok);
    first.close();

    const second = await connect(svc, { collectorId: 'resume-1', epoch: 2n, streams });
    t.teardown(() => second.close());
    t.same(second.welcome.streams.map((s) => s.series_id), [first.welcome.streams[0].series_id, first.welcome.streams[1].series_id], 'the same series');
    t.same(second.welcome.streams.map((s) => [s.has_last_durable, s.last_durable_ns]), [[true, String(T0 + 199n * SEC)], [true, String(T0 + 6n * SEC)]],
      'last_durable_ns is the newest acknowledged point of each stream');
    t.same([second.nextSeq.LIVE, second.nextSeq.BACKFILL], [1, 1], 'sequences start again at 1 in the new session');
    t.ok((await second.send('BACKFILL', 0, 'float64', b2)).ok, 'an acknowledged batch resent on the backfill lane is acknowledged');
    t.ok((await second.send('LIVE', 0, 'float64', floatBatch(T0 + 200n * SEC, 50, SEC, 201))).ok);
    const points = readAll(svc, second.welcome.streams[0].series_id);
    t.equal(points.length, 250, 'no duplicate from the resend');
    t.same(points.slice(99, 102).map((p) => p.value), [100, 101, 102], 'values continue exactly across the reconnect');
  });

  t.test('an enum stream names its registry enum set: the staging series carries it; unknown or missing sets are refused per stream', async (t) => {
    const set = await createEntry(svc.service.context.db, { principal: 'test' }, 'enum-sets', {
      name: 'valve-position', members: [{ ordinal: 0, name: 'closed' }, { ordinal: 1, name: 'open' }, { ordinal: 5, name: 'travel' }],
    });
    const c = await connect(svc, { collectorId: 'enum-1', epoch: 1n, streams: [
      { name: 'v1', type: 'enum', enumSet: 'valve-position' },
      { name: 'v2', type: 'enum', enumSet: set.id },
      { name: 'v3', type: 'enum', enumSet: 'no-such-set' },
      { name: 'v4', type: 'enum' },
    ] });
    t.teardown(() => c.close());
    t.same(c.welcome.streams.map((s) => s.accepted), [true, true, false, false]);
    t.match(c.welcome.streams[2].refusal, /no-such-set/);
    t.match(c.welcome.streams[3].refusal, /enum_set/);
    const rec = await svc.service.context.parts.series.get(c.welcome.streams[0].series_id);
    t.equal(rec?.enumSetId, set.id, 'the staging series uses the named enum set');
    const out = await c.send('LIVE', 0, 'enum', { times: new BigInt64Array([T0, T0 + SEC, T0 + 2n * SEC]), values: new Int32Array([0, 5, 3]), quality: null });
    t.match(out, { ok: true, refused: 1, refusals: [{ index: 2, reason: /enum|ordinal/ }] }, 'an ordinal outside the set is refused per point');
    t.same(readAll(svc, c.welcome.streams[0].series_id).map((p) => p.value), [0, 5]);

    const named = await connect(svc, { collectorId: 'enum-2', epoch: 1n, streams: [
      { name: 'same', type: 'enum', seriesId: c.welcome.streams[0].series_id, enumSet: 'valve-position' },
    ] });
    t.teardown(() => named.close());
    t.equal(named.welcome.streams[0].accepted, true, 'a stream naming an enum series and its set is accepted');
    await t.rejects(connect(svc, { collectorId: 'enum-3', epoch: 1n, streams: [{ name: 'f', type: 'float64', enumSet: 'valve-position' }] }), { code: 3 },
      'enum_set on a non-enum stream is INVALID_ARGUMENT');
    // found by the gRPC fuzz: a NUL reached the staging series insert and answered UNAVAILABLE "retry"
    await t.rejects(connect(svc, { collectorId: 'enum-4', epoch: 1n, streams: [{ name: 'n\u0000ul', type: 'float64' }] }), { code: 3, message: /streams\[0\]\.name: .*U\+0000/ },
      'a control character in a stream name is INVALID_ARGUMENT naming the stream');
  });

  t.test('the same epoch may reopen once its session has ended', async (t) => {
    const a = await connect(svc, { collectorId: 'resume-2', epoch: 3n, streams: [{ name: 'x', type: 'float64' }] });
    t.ok((await a.send('LIVE', 0, 'float64', floatBatch(T0, 5))).ok);
    a.close();
    await until(async () => {
      const d = (await request(`${svc.url}/v1/collectors/resume-2`)).json as { connected: boolean };
      return d.connected === false;
    });
    const b = await connect(svc, { collectorId: 'resume-2', epoch: 3n, streams: [{ name: 'x', type: 'float64' }] });
    t.teardown(() => b.close());
    t.equal(b.welcome.streams[0].last_durable_ns, String(T0 + 4n * SEC));
  });
});

t.test('the idle timeout ends a silent session with DEADLINE_EXCEEDED; heartbeats keep one open', async (t) => {
  const svc = await startTestService(t, { env: { SERVICE_INGEST_IDLE_TIMEOUT_MS: '600' } });
  const started = performance.now();
  const silent = await connect(svc, { collectorId: 'idle-1', epoch: 1n, streams: [{ name: 'a', type: 'float64' }] });
  const talking = await connect(svc, { collectorId: 'idle-2', epoch: 1n, streams: [{ name: 'a', type: 'float64' }] });
  t.teardown(() => { silent.close(); talking.close(); });
  const beat = setInterval(() => talking.heartbeat(), 150);
  t.teardown(() => clearInterval(beat));
  const ended = await new Promise<{ code: number; message: string }>((r) => silent.once('ended', r));
  const after = performance.now() - started;
  t.equal(ended.code, 4, 'DEADLINE_EXCEEDED');
  t.match(ended.message, /no message for 600 ms/);
  t.ok(after >= 600, `not before the timeout (${Math.round(after)} ms)`);
  t.equal(talking.ended, null, 'the session that sends heartbeats is still open');
  t.ok((await talking.send('LIVE', 0, 'float64', floatBatch(T0, 3))).ok, 'and still writes');
});
