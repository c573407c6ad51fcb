// A collector's batch that needs a stored chunk failing its checksum is refused point by
// point ('chunk-corrupt', reported before the ack) and the collector's other streams go on
// being stored: over a real gRPC session against the running service's engine.
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { connect, floatBatch, readAll, until, T0 } from '../helpers/ingest.js';
import { INT64_MAX, INT64_MIN, chunkKey, seriesKey } from '../../src/storage/keys.js';
import { MAX_CHUNK_POINTS } from '../../src/storage/encoding/chunk.js';

t.test('a damaged chunk refuses the batch that needs it; the other stream is stored', async (t) => {
  const svc = await startTestService(t, { env: { SERVICE_INGEST_MAX_BATCH_POINTS: '4000' } });
  const c = await connect(svc, { collectorId: 'kiln-2', streams: [{ name: 'temp', type: 'float64' }, { name: 'draft', type: 'float64' }] });
  t.teardown(() => c.close());
  const [a, b] = c.welcome.streams.map((s) => s.series_id);
  const env = svc.service.context.parts.storage.env;
  const chunkKeysOf = (id: string) => [...env.chunks.getKeys({ start: chunkKey(seriesKey(id), INT64_MIN), end: chunkKey(seriesKey(id), INT64_MAX) })].map((k) => Buffer.from(k as Buffer));

  // enough points that stream a has sealed chunks (the head seals at a chunk's worth, at most
  // MAX_CHUNK_POINTS: this ramp costs next to nothing a point, so it seals at the point cap)
  const batches = Math.ceil(MAX_CHUNK_POINTS / 4000) + 1, sent = batches * 4000;
  for (let k = 0; k < batches; k++) {
    const at = T0 + BigInt(k * 4000) * 1_000_000_000n;
    t.match(await c.send('LIVE', 0, 'float64', floatBatch(at, 4000, 1_000_000_000n, k * 4000)), { ok: true, refused: 0 });
    t.match(await c.send('LIVE', 1, 'float64', floatBatch(at, 4000, 1_000_000_000n, k * 4000)), { ok: true, refused: 0 });
  }
  await until(() => chunkKeysOf(a).length > 0, 10_000);
  const first = chunkKeysOf(a)[0];
  const bytes = Buffer.from(env.chunks.get(first) as Buffer);
  bytes[bytes.length - 1] ^= 0x40;
  env.chunks.putSync(first, bytes);

  // a correction inside the damaged chunk: it cannot be merged, so its batch is refused
  const late = { times: new BigInt64Array([T0 + 5_000_000_000n, T0 + 6_000_000_000n]), values: new Float64Array([55, 66]), quality: null };
  const refused = await c.send('BACKFILL', 0, 'float64', late);
  t.match(refused, { ok: true, refused: 2, refusals: [{ index: 0, reason: 'chunk-corrupt' }, { index: 1, reason: 'chunk-corrupt' }] }, 'both points are refused, with the reason, before the ack');

  const next = T0 + BigInt(sent) * 1_000_000_000n;
  t.match(await c.send('LIVE', 1, 'float64', floatBatch(next, 100, 1_000_000_000n, sent)), { ok: true, refused: 0 }, 'the other stream is acknowledged');
  const bs = readAll(svc, b);
  t.equal(bs.length, sent + 100, 'and every point of it is stored');
  t.same(bs[bs.length - 1], { ts: next + 99n * 1_000_000_000n, value: sent + 99, quality: 192 });
  t.ok(Buffer.from(env.chunks.get(first) as Buffer).equals(bytes), 'the damaged chunk is left as it was');
  t.match(await c.send('LIVE', 0, 'float64', floatBatch(next, 10, 1_000_000_000n, sent)), { ok: true, refused: 0 }, 'stream a takes points clear of the damage');
});
