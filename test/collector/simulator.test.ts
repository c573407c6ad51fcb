// The collector simulator end to end over loopback gRPC: it streams the shared dataset as
// fast as credit allows; the network is cut under it (a TCP proxy drops every connection);
// what was in flight goes to its store-and-forward buffer on disk; after the network is
// back it reconnects with a higher epoch and replays the buffer on the backfill lane.
// At the end the store holds exactly the dataset: nothing lost, nothing doubled. Live, each
// tick's points go out as scans (one batch for every stream of a value type).
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestService, request } from '../helpers/service.js';
import { grpcAddress, readAll, tcpProxy, until } from '../helpers/ingest.js';
import { loadDataset } from '../../src/collector/dataset-source.js';
import { Simulator } from '../../src/collector/simulator.js';
import { createEntry } from '../../src/model/registries/registry-writes.js';
import type { PointValue } from '../../src/storage/point-runs.js';

const DATASET = { series: 17, points: 4000, seed: 7, path: resolve(process.cwd(), '../shared/datasets/industrial.mjs') };

/** Every point of the dataset, as the store returns it (boolean as true/false, enum as its ordinal, int64 as bigint). */
async function expectedPoints(opts: { points: number; startNs?: bigint } = DATASET): Promise<Array<Array<{ ts: bigint; value: PointValue; quality: number }>>> {
  const mod = await import(DATASET.path) as { datasetSeries(o: Record<string, unknown>): Array<{ type: string; points(): Iterable<[bigint, unknown, number]> }> };
  return mod.datasetSeries({ series: DATASET.series, points: opts.points, seed: DATASET.seed, ...(opts.startNs !== undefined ? { startNs: opts.startNs } : {}) }).map((s) => {
    const out: Array<{ ts: bigint; value: PointValue; quality: number }> = [];
    for (const [ts, v, quality] of s.points()) {
      const value = s.type === 'int64' ? BigInt(v as number) : s.type === 'enum' ? (v as { ordinal: number }).ordinal : v as PointValue;
      out.push({ ts, value, quality });
    }
    return out;
  });
}

t.test('the simulator survives a network cut: buffers what was in flight, reconnects, replays on backfill, and the store holds the dataset exactly', { timeout: 240_000 }, async (t) => {
  const svc = await startTestService(t);
  await createEntry(svc.service.context.db, { principal: 'test' }, 'enum-sets', {
    name: 'machine-state', members: ['off', 'idle', 'setup', 'running', 'blocked', 'fault'].map((name, ordinal) => ({ ordinal, name })),
  });
  const proxy = await tcpProxy(Number(grpcAddress(svc).split(':')[1]));
  t.teardown(() => proxy.close());
  const stateDir = await mkdtemp(join(tmpdir(), 'historian-sim-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));

  const streams = await loadDataset(DATASET);
  const total = DATASET.series * DATASET.points;
  const logs: string[] = [];
  const sim = new Simulator({ address: proxy.address, collectorId: 'sim-test', streams, mode: 'fast', batchPoints: 250, stateDir, log: (l) => logs.push(l) });
  let maxBuffered = 0;
  const watch = setInterval(() => { maxBuffered = Math.max(maxBuffered, sim.stats.bufferedBytes); }, 5);
  t.teardown(() => clearInterval(watch));
  const running = sim.run();

  await until(() => sim.stats.acked > total / 4, 120_000);
  proxy.cut();
  await until(() => !sim.stats.connected, 10_000);
  await new Promise((r) => setTimeout(r, 600));
  t.ok(sim.stats.bufferedBytes > 0, `what was in flight at the cut is in the forward buffer (${sim.stats.bufferedBytes} bytes)`);
  proxy.restore();
  await running;
  clearInterval(watch);

  t.ok(sim.stats.sessions >= 2, `the simulator reconnected (${sim.stats.sessions} sessions)`);
  t.equal(sim.stats.bufferedBytes, 0, 'the forward buffer is empty at the end');
  t.equal(sim.stats.refused, 0, 'no point was refused');
  const detail = (await request(`${svc.url}/v1/collectors/sim-test`)).json as { session_epoch: bigint | number; backfill: { batches_accepted: number | bigint }; stream_detail: Array<{ accepted: boolean; series_id: string; refusal: string | null }> };
  // A connect attempt while the network is down also takes an epoch, so the epoch may run ahead of the sessions.
  t.ok(Number(detail.session_epoch) >= sim.stats.sessions, `every connection used a higher epoch (epoch ${detail.session_epoch})`);
  t.ok(Number(detail.backfill.batches_accepted) > 0, 'the replay went over the backfill lane');
  t.same(detail.stream_detail.filter((s) => !s.accepted).map((s) => s.refusal), [], 'every stream was accepted, the enum ones too');

  const expected = await expectedPoints();
  let lost = 0, extra = 0, wrong = 0;
  detail.stream_detail.forEach((s, i) => {
    const stored = readAll(svc, s.series_id);
    const want = expected[i];
    const byTs = new Map(stored.map((p) => [p.ts, p]));
    if (stored.length > want.length) extra += stored.length - want.length;
    for (const w of want) {
      const got = byTs.get(w.ts);
      if (!got) lost++;
      else if (got.value !== w.value || got.quality !== w.quality) wrong++;
    }
  });
  t.equal(lost, 0, 'no point of the dataset is missing');
  t.equal(extra, 0, 'no point beyond the dataset');
  t.equal(wrong, 0, 'every value and quality is exact');
});

t.test('live, the simulator sends each tick\'s points of every stream as scans, one per value type, and the store holds them exactly', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);
  await createEntry(svc.service.context.db, { principal: 'test' }, 'enum-sets', {
    name: 'machine-state', members: ['off', 'idle', 'setup', 'running', 'blocked', 'fault'].map((name, ordinal) => ({ ordinal, name })),
  });
  const stateDir = await mkdtemp(join(tmpdir(), 'historian-sim-live-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const SEC = 1_000_000_000n;
  // two seconds of history, then live: about one point a second per stream (ten for vibration)
  const startNs = (BigInt(Date.now()) * 1_000_000n / SEC - 2n) * SEC;
  const streams = await loadDataset({ ...DATASET, points: 600, startNs });
  const sim = new Simulator({ address: grpcAddress(svc), collectorId: 'sim-live', streams, mode: 'live', batchPoints: 250, liveTickMs: 100, stateDir });
  const running = sim.run();
  const through = startNs + 4n * SEC;
  await until(() => BigInt(Date.now()) * 1_000_000n > through + SEC && sim.stats.acked === sim.stats.sent, 30_000);
  sim.stop();
  await running;

  const detail = (await request(`${svc.url}/v1/collectors/sim-live`)).json as { live: { batches_accepted: number | bigint; points_written: number | bigint }; stream_detail: Array<{ series_id: string }> };
  const batches = Number(detail.live.batches_accepted), points = Number(detail.live.points_written);
  // 17 streams of five value types, a tick every 100 ms: one batch per stream would be at least as many batches as points
  t.ok(batches * 2 < points, `the live points went in scans (${batches} batches for ${points} points)`);
  t.equal(sim.stats.refused, 0, 'no point was refused');
  const expected = await expectedPoints({ points: 600, startNs });
  let lost = 0, wrong = 0, checked = 0;
  detail.stream_detail.forEach((s, i) => {
    const byTs = new Map(readAll(svc, s.series_id).map((p) => [p.ts, p]));
    for (const w of expected[i]) {
      if (w.ts > through) break;
      checked++;
      const got = byTs.get(w.ts);
      if (!got) lost++;
      else if (got.value !== w.value || got.quality !== w.quality) wrong++;
    }
  });
  t.ok(checked > 17 * 3, `${checked} points of the first four seconds checked`);
  t.equal(lost, 0, 'no point of the first four seconds is missing');
  t.equal(wrong, 0, 'every value and quality is exact');
});
