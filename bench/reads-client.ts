// The client of bench/reads.ts (npm run bench:reads), a process of its own: it reads the plan
// file the bench wrote (the service's URL and pid, the attributes and ranges to read) and times
// each read over loopback HTTP to the body's last byte, printing one JSON object of figures.
// It imports none of the service's modules: the service's module graph loaded in the client
// (uWebSockets.js among them) cost it ~100 ms of CPU more per 148 MB body received through
// node:http (2026-11-28).
//   node --expose-gc --import tsx bench/reads-client.ts <plan.json>
import { readFile } from 'node:fs/promises';
import * as http from 'node:http';
import { parseJson, stringifyJson } from '../src/json/json.js';
import { threadCpuSeconds } from './process-figures.js';

export interface Plan {
  url: string; repeat: number; rows: string[];
  /** The service's process: the client reads its CPU per thread around each read (/proc). */
  serverPid: number;
  fleet: string; oneAttribute: string; big: string; bigSeries: string;
  fleetStart: string; fleetEnd: string; hourStart: string; hourEnd: string; bigStart: string; bigEnd: string;
  fleetAttributes: number; numericAttributes: number;
  /** Attributes under /Wide (the wide snapshot's count). */
  wideAttributes: number;
}


/**
 * Waits until the service is idle (under 5% of a core over half a second, at most 60 s):
 * the write-up of the data leaves quiet seals and collections running, which the first
 * reads timed would otherwise share the cores with. Returns the seconds waited.
 */
async function settled(pid: number): Promise<number> {
  const t0 = performance.now();
  let before = await threadCpuSeconds(pid);
  while (performance.now() - t0 < 60_000) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await threadCpuSeconds(pid);
    let used = 0;
    for (const [tid, s] of now) used += s - (before.get(tid) ?? 0);
    before = now;
    if (used < 0.025) break;
  }
  return +((performance.now() - t0) / 1000).toFixed(1);
}

async function client(plan: Plan): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const post = async (path: string, body: unknown, accept = 'application/json'): Promise<{ ms: number; bytes: number; body: Uint8Array }> => {
    const t0 = performance.now();
    const res = await fetch(plan.url + path, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: stringifyJson(body) });
    const buf = new Uint8Array(await res.arrayBuffer());
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${Buffer.from(buf).toString().slice(0, 400)}`);
    return { ms, bytes: buf.length, body: buf };
  };
  // The bulk rows read through node:http, the clock stopped at the body's last byte and the
  // chunks joined after it: fetch's web-stream body (res.arrayBuffer) cost the client ~150 ms
  // of CPU per 49 MB on this 2-core box, in the same cores the service sends and encodes on,
  // and the join is the client's own work, not the service's (2026-11-28). A connection per
  // read: a kept-alive one sat idle past uWebSockets' 10 s timeout while the client parsed the
  // JSON hour at load ~19, and the next read on it failed with "socket hang up".
  const postBulk = (path: string, body: unknown, accept = 'application/json', agent: http.Agent | false = false): Promise<{ ms: number; bytes: number; body: Uint8Array }> => new Promise((resolve, reject) => {
    const data = Buffer.from(stringifyJson(body));
    const t0 = performance.now();
    const req = http.request(plan.url + path, { method: 'POST', agent, headers: { 'content-type': 'application/json', accept, 'content-length': data.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => { chunks.push(c); });
      res.on('end', () => {
        const ms = performance.now() - t0;
        const buf = Buffer.concat(chunks);
        if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode} ${buf.toString().slice(0, 400)}`));
        else resolve({ ms, bytes: buf.length, body: buf });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
  const get = async (path: string): Promise<{ ms: number; bytes: number; body: Uint8Array }> => {
    const t0 = performance.now();
    const res = await fetch(plan.url + path);
    const buf = new Uint8Array(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${Buffer.from(buf).toString().slice(0, 400)}`);
    return { ms: performance.now() - t0, bytes: buf.length, body: buf };
  };
  const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
  /** Warm-up (one run, `n` more for a short read), then `n` timed runs: the median ms, and the last body. */
  // a failing read is recorded (`<name>_error`) and the others still run; its body is then empty
  const timed = async (name: string, n: number, run: () => Promise<{ ms: number; bytes: number; body: Uint8Array }>) => {
    if (plan.rows.length > 0 && !plan.rows.some((w) => name.includes(w))) return Buffer.from('[]');
    try {
      let last = await run();
      // short reads warm up as many times as they are timed, and at least 100 times: the first
      // few dozen run before the client's and the service's code is optimised (a 1,000-attribute
      // snapshot: ~12 ms p50 over its first 21 reads, ~4 ms after; after 21 warm-ups, its 21
      // timed reads still cost the HTTP thread 2.86 ms each and V8's platform threads 3.3 more,
      // against 0.95 ms in all for the same read a row later, load ~10, 2026-11-28)
      // (a long read warms up once more, and the run before the timed ones says which it is: a
      // first read of a kind is often slow while its code is cold)
      last = await run();
      if (last.ms < 50) for (let i = 0; i < Math.max(n, 100); i++) last = await run();
      const ms: number[] = [];
      // the service's CPU over the timed runs: all threads, and its HTTP thread (the thread id is the pid)
      const cpu0 = await threadCpuSeconds(plan.serverPid);
      // a long read starts on a collected client heap: the last read's body and the parsed JSON
      // hour before it (hundreds of MB) were otherwise held or collected by the client during the next
      // timed read, on the two cores the service sends on (the columns hour read alone: 95 ms;
      // the same read after the JSON rows: 206 ms, with the same service CPU, 2026-11-28)
      const collect = last.ms >= 50 ? (globalThis as { gc?: () => void }).gc : undefined;
      const dropped = { ms: 0, bytes: 0, body: new Uint8Array(0) };
      let clientCpu = 0;
      for (let i = 0; i < n; i++) {
        if (collect !== undefined) { last = dropped; collect(); }
        const c0 = process.cpuUsage();
        last = await run();
        const c = process.cpuUsage(c0);
        clientCpu += c.user + c.system;
        ms.push(last.ms);
      }
      // the client's own CPU over each timed read (node:http receiving the body; its garbage
      // collection helpers included): on two cores it is taken from the service's
      const cpu1 = await threadCpuSeconds(plan.serverPid);
      let all = 0;
      for (const [tid, s] of cpu1) all += s - (cpu0.get(tid) ?? 0);
      out[`${name}_ms_p50`] = +median(ms).toFixed(2);
      out[`${name}_service_cpu_ms`] = +((all * 1000) / n).toFixed(2);
      out[`${name}_client_cpu_ms`] = +(clientCpu / 1000 / n).toFixed(2);
      out[`${name}_http_thread_cpu_ms`] = +((((cpu1.get(plan.serverPid) ?? 0) - (cpu0.get(plan.serverPid) ?? 0)) * 1000) / n).toFixed(2);
      // the busiest threads' CPU a read, by thread id minus the pid (0: the HTTP thread; V8's
      // platform threads come next, the read workers later): where the rest of the service CPU lands
      const perThread = [...cpu1].map(([tid, s]) => [tid - plan.serverPid, ((s - (cpu0.get(tid) ?? 0)) * 1000) / n] as const).filter(([, ms]) => ms > 0);
      out[`${name}_thread_cpu_ms`] = Object.fromEntries(perThread.sort((a, b) => b[1] - a[1]).slice(0, 6).map(([t, ms]) => [`+${t}`, +ms.toFixed(2)]));
      out[`${name}_bytes`] = last.bytes;
      return last.body;
    } catch (e) {
      out[`${name}_error`] = String((e as Error).cause ?? (e as Error).message).slice(0, 300);
      return Buffer.from('[]');
    }
  };
  const fleet = { select: { kind: 'all' }, scope: { under: { kind: 'path', content: plan.fleet } } };
  const R = plan.repeat;
  out.settle_s = await settled(plan.serverPid);

  // resolution alone (the model query every read starts with), for the breakdown
  await timed('resolve_fleet_model_route', R, () => post('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } }));
  await timed('resolve_one_model_route', R * 3, () => post('/v1/model/resolve', { select: { kind: 'attribute_ids', content: [plan.big] }, scope: {} }));
  // The snapshots read through node:http over one kept-alive connection (an HMI polling),
  // timed to the body's last byte. Through fetch (undici, the row "through fetch") the client
  // itself spent 2.4-4 ms of CPU and waited ~4 ms for the first byte per 359 KB snapshot, on
  // the same two cores as a service whose HTTP thread spent 1-2 ms on it (2026-11-28,
  // decisions.md). JSON.parse of the body is the client's own step after it: its own figure.
  const kept = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const plantSnapshot = { resolve: { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } } };
  const snap = await timed('snapshot_1000', R * 3, () => postBulk('/v1/read/snapshot', plantSnapshot, 'application/json', kept));
  out.snapshot_1000_attributes = (parseJson(snap) as unknown[]).length;
  if (snap.length > 2) {
    const parse: number[] = [];
    for (let i = 0; i < R * 3; i++) { const t0 = performance.now(); JSON.parse(Buffer.from(snap.buffer, snap.byteOffset, snap.length).toString('utf8')); parse.push(performance.now() - t0); }
    out.snapshot_1000_client_parse_ms = +median(parse).toFixed(2);
  }
  await timed('snapshot_1000_fetch', R * 3, () => post('/v1/read/snapshot', plantSnapshot));
  const everything = { resolve: { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Wide' } } } };
  const wide = await timed('snapshot_wide', R * 3, () => postBulk('/v1/read/snapshot', everything, 'application/json', kept));
  out.snapshot_wide_attributes = (parseJson(wide) as unknown[]).length;
  await timed('snapshot_wide_msgpack', R * 3, () => postBulk('/v1/read/snapshot', everything, 'application/x-msgpack', kept));
  kept.destroy();

  const one = { select: { kind: 'attribute_ids', content: [plan.oneAttribute] }, scope: {} };
  const raw1 = await timed('raw_one_attribute_json', R * 3, () => post('/v1/read/raw', { resolve: one, start_ns: BigInt(plan.fleetStart), end_ns: BigInt(plan.fleetEnd) }));
  out.raw_one_attribute_points = (parseJson(raw1) as Array<{ segments: Array<{ points: unknown[] }> }>)[0]?.segments.reduce((a, s) => a + s.points.length, 0);

  const hour = { start_ns: BigInt(plan.hourStart), end_ns: BigInt(plan.hourEnd), max_points: 10_000_000 };
  await timed('raw_hour_all_numeric_msgpack', R, () => postBulk('/v1/read/raw', { resolve: fleet, ...hour }, 'application/x-msgpack'));
  // the columns layout (typed columns per segment, as the series routes' bulk reads): a third of the rows' bytes
  await timed('raw_hour_all_numeric_msgpack_columns', R, () => postBulk('/v1/read/raw', { resolve: fleet, ...hour, layout: 'columns' }, 'application/x-msgpack'));
  await timed('raw_hour_all_numeric_json_columns', R, () => postBulk('/v1/read/raw', { resolve: fleet, ...hour, layout: 'columns' }));
  {
    // timed after the other hour reads, and parsed in a block of its own: the client's heap after
    // parsing millions of objects slowed its next reads (the msgpack rows' client CPU 200 ->
    // 1,000 ms a read, even after a collection), and left reachable they made its collector
    // pause for seconds, on a loaded box long enough (10 s without reading) for uWebSockets to
    // close the response (docs/decisions.md)
    const items = parseJson(await timed('raw_hour_all_numeric_json', R, () => postBulk('/v1/read/raw', { resolve: fleet, ...hour }))) as Array<{ segments: Array<{ points: unknown[] }> }>;
    out.raw_hour_attributes = items.length;
    out.raw_hour_points = items.reduce((a, i) => a + i.segments.reduce((b, s) => b + s.points.length, 0), 0);
  }

  const bigOne = { select: { kind: 'attribute_ids', content: [plan.big] }, scope: {} };
  const bigRange = { start_ns: BigInt(plan.bigStart), end_ns: BigInt(plan.bigEnd) };
  const rollupStats = ['count', 'min', 'max', 'first', 'last', 'twa', 'percent_good'];
  const sum = await timed('summary_big_1d_rollup_stats', R * 3, () => post('/v1/read/summary', { resolve: bigOne, ...bigRange, interval: '1d', stats: rollupStats }));
  out.summary_big_1d_intervals = (parseJson(sum) as Array<{ intervals: unknown[] }>)[0]?.intervals.length;
  await timed('summary_big_1d_all_stats', Math.max(1, Math.floor(R / 3)), () => post('/v1/read/summary', { resolve: bigOne, ...bigRange, interval: '1d', stats: ['count', 'min', 'max', 'first', 'last', 'mean', 'twa', 'range', 'stddev', 'percent_good', 'duration_good_ns', 'duration_bad_ns', 'duration_uncertain_ns'] }));
  const twa = await timed('summary_1m_twa_hour_all_numeric', R, () => post('/v1/read/summary', { resolve: fleet, start_ns: hour.start_ns, end_ns: hour.end_ns, interval: '1m', stats: ['twa'] }));
  out.summary_1m_twa_attributes = (parseJson(twa) as unknown[]).length;

  const q = new URLSearchParams({ start_ns: plan.bigStart, end_ns: plan.bigEnd, width: '1000' });
  await timed('render_series_route_big_w1000', R * 2, () => get(`/v1/series/${plan.bigSeries}/render?${q}`));
  await timed('render_resolved_big_w1000', R * 2, () => post('/v1/read/render', { resolve: bigOne, ...bigRange, width: 1000 }));
  out.render_resolved_over_series_route = +((out.render_resolved_big_w1000_ms_p50 as number) / (out.render_series_route_big_w1000_ms_p50 as number)).toFixed(2);
  return out;
}

if (process.argv[1] !== undefined && new URL(import.meta.url).pathname === process.argv[1]) {
  const plan = JSON.parse(await readFile(process.argv[2], 'utf8')) as Plan;
  process.stdout.write(JSON.stringify(await client(plan)) + '\n');
}
