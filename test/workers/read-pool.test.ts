import t, { type Test } from 'tap';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mkdtemp, rm, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, request } from '../helpers/service.js';
import { ReadPool } from '../../src/workers/read-pool.js';
import { READ_WORKER_NICE } from '../../src/threads/thread-priority.js';
import { SeriesStore } from '../../src/storage/series-store.js';

/** A store in a fresh directory with one float64 series, and a pool of `workers` over it, closed at teardown. */
async function poolOverStore(t: Test, prefix: string, id: string, workers: number): Promise<{ store: SeriesStore; pool: ReadPool }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const store = SeriesStore.open(dir);
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const pool = new ReadPool(dir, workers);
  t.teardown(async () => { await pool.close(); await store.close(); await rm(dir, { recursive: true, force: true }); });
  return { store, pool };
}

const BASE = 1_700_000_000_000_000_000n;
const MS = 1_000_000n;

t.test('the main thread stays responsive while workers run heavy reads', async (t) => {
  const svc = await startTestService(t);
  const parts = svc.service.context.parts;
  const s = await parts.series.create({ sourceName: 'big/analog', valueType: 'float64' }, { principal: 'tester' });
  // 1,000,000 points, 100 ms apart, written in batches of 100k
  const total = 1_000_000, batch = 100_000;
  for (let b = 0; b < total / batch; b++) {
    const times = new BigInt64Array(batch), values = new Float64Array(batch), quality = new Uint32Array(batch).fill(192);
    for (let i = 0; i < batch; i++) {
      const k = b * batch + i;
      times[i] = BASE + BigInt(k) * 100n * MS;
      values[i] = Math.round(500 + 100 * Math.sin(k / 1000)) / 10;
    }
    await parts.storage.write([{ series: s.id, times, values, quality }], { principal: 'tester' });
  }
  const end = BASE + BigInt(total) * 100n * MS;

  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  // The client reads the bodies as a stream and only counts points, so that this
  // process's event loop (which also hosts the service) is not blocked by parsing.
  const countPoints = async (url: string, accept: string, marker: string): Promise<number> => {
    const res = await fetch(url, { headers: { accept } });
    const needle = Buffer.from(marker, 'latin1');
    let n = 0, tail = Buffer.alloc(0);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const buf = Buffer.concat([tail, chunk]);
      for (let i = buf.indexOf(needle); i !== -1; i = buf.indexOf(needle, i + needle.length)) n++;
      tail = buf.subarray(Math.max(0, buf.length - needle.length + 1));
    }
    return n;
  };
  const raw = `${svc.url}/v1/series/${s.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=1000000`;
  const reads = Promise.all([
    countPoints(raw, 'application/json', '{"ts_ns":'),
    countPoints(raw, 'application/x-msgpack', '\x83\xa5ts_ns'),
    request(`${svc.url}/v1/series/${s.id}/render?start_ns=${BASE}&end_ns=${end}&width=1000&mode=minmax-band&stat=twa`),
  ]);
  let settled = false;
  void reads.finally(() => { settled = true; });
  const health: number[] = [];
  while (!settled) {
    const t0 = performance.now();
    const h = await fetch(`${svc.url}/v1/healthz`);
    await h.text();
    health.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 5));
  }
  const [jsonPoints, msgpackPoints, band] = await reads;
  loop.disable();
  t.equal(jsonPoints, total, 'the JSON raw read returned every point');
  t.equal(msgpackPoints, total, 'the msgpack raw read returned every point');
  t.equal(band.status, 200);
  const worst = Math.max(...health);
  t.comment(`health checks during reads: ${health.length}, worst ${worst.toFixed(1)} ms; event loop max delay ${(loop.max / 1e6).toFixed(1)} ms`);
  t.ok(health.length >= 3, 'health checks ran while the reads were in flight');
  // Generous bounds: the client reading 120 MB of bodies runs on this same event loop and
  // the same 2 cores; bench/storage.ts measures the delay with the client in another process.
  t.ok(worst < 500, `every health check answered within 500 ms (worst ${worst.toFixed(1)} ms)`);
  t.ok(loop.max / 1e6 < 500, `the event loop was never blocked for 500 ms (max ${(loop.max / 1e6).toFixed(1)} ms)`);
});

t.test('a full queue is refused with 503 capacity-exhausted, never a hang', async (t) => {
  const { pool } = await poolOverStore(t, 'pool-', '11111111-1111-4111-8111-111111111111', 1);
  const args = { series: '11111111-1111-4111-8111-111111111111', startNs: '0', endNs: '10', limit: 10, afterNs: null, format: 'json' as const };
  const runs = Array.from({ length: 200 }, () => pool.run('raw', args).then(() => 'ok', (e: { code?: string }) => e.code ?? 'error'));
  const outcomes = await Promise.all(runs);
  t.ok(outcomes.includes('ok'), 'queued reads complete');
  t.ok(outcomes.includes('capacity-exhausted'), 'reads beyond the queue limit are refused with capacity-exhausted');
  t.notOk(outcomes.includes('error'), 'no other failure');
  const missing = await pool.run('raw', { ...args, series: '22222222-2222-4222-8222-222222222222' }).catch((e: { code: string; status: number }) => e);
  t.equal((missing as { code: string }).code, 'not-found', 'a worker error comes back as the ServiceError by code');
});

t.test('a worker writes its next body into the same shared memory only after the HTTP thread released it', async (t) => {
  const id = '33333333-3333-4333-8333-333333333333';
  const { store, pool } = await poolOverStore(t, 'pool-slabs-', id, 1);
  const n = 5000;
  const times = new BigInt64Array(n), values = new Float64Array(n), quality = new Uint32Array(n).fill(192);
  for (let i = 0; i < n; i++) { times[i] = BASE + BigInt(i) * 1000n * MS; values[i] = i / 4; }
  await store.write([{ series: id, times, values, quality }], { principal: 'tester' });
  const args = { series: id, startNs: String(BASE), endNs: String(BASE + 10n ** 15n), limit: n, afterNs: null };
  const text = (b: Uint8Array) => Buffer.from(b).toString('latin1');

  const json = await pool.run('raw', { ...args, format: 'json' });
  const jsonText = text(json.bytes);
  t.equal((JSON.parse(jsonText) as { points: unknown[] }).points.length, n, 'the first body is complete');
  // not released: the worker must not write into it, whatever it reads next
  for (let k = 0; k < 4; k++) (await pool.run('raw', { ...args, format: 'msgpack' })).release();
  t.equal(text(json.bytes), jsonText, 'a body still lent is never overwritten');

  json.release();
  const packs = [];
  for (let k = 0; k < 3; k++) packs.push(await pool.run('raw', { ...args, format: 'msgpack' }));
  const reused = packs.some((p) => text(json.bytes).startsWith(text(p.bytes.subarray(0, 64))));
  t.ok(reused, 'once released, a later body is written into the same shared memory');
  for (const p of packs) p.release();
});

t.test('read workers run at a lower scheduling priority than the HTTP thread (Linux: a nice value per thread)', { skip: process.platform !== 'linux' && 'nice values are per thread on Linux only' }, async (t) => {
  const id = '44444444-4444-4444-8444-444444444444';
  const { pool } = await poolOverStore(t, 'pool-nice-', id, 2);
  const args = { series: id, startNs: '0', endNs: '10', limit: 10, afterNs: null, format: 'json' as const };
  await Promise.all([pool.run('raw', args), pool.run('raw', args)].map((p) => p.then((r) => r.release())));
  // field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value
  const nices: number[] = [];
  for (const tid of await readdir('/proc/self/task')) {
    const stat = await readFile(`/proc/self/task/${tid}/stat`, 'utf8').catch(() => null);
    if (stat !== null) nices.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  t.ok(nices.filter((n) => n === READ_WORKER_NICE).length >= 2, `both workers at nice ${READ_WORKER_NICE} (threads: ${nices.join(' ')})`);
  const own = await readFile(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const mainNice = Number(own.slice(own.lastIndexOf(')') + 2).split(' ')[16]);
  t.ok(mainNice < READ_WORKER_NICE, `the main thread is not lowered (nice ${mainNice})`);
});
