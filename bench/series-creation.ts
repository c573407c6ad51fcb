// Series creation at first sight (issue 33, item 1): one collector declares N new streams
// and the figure is the time until the welcome says every one of them is accepted (its
// series and model rows created); then the same collector reconnects with the same
// streams (a higher epoch), which must create nothing. A real server process (node
// --import tsx src/main.ts) on PGlite, or on a fresh database of DATABASE_URL.
//   node --import tsx bench/series-creation.ts [--series 100000] [--json] [--cpu-prof <dir>]
//     --cpu-prof: V8 CPU profiles of every server thread, for finding where the time goes
// What was created is counted from the model's own log (GET /v1/model/events): model
// transactions and series 'created' events after the run started.
import { spawn, type ChildProcess } from 'node:child_process';
import { SERVICE_NODE_FLAGS } from './service-flags.js';
import { mkdtemp, rm, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CollectorClient, type StreamDeclaration } from '../src/collector/collector-client.js';
import { parseJson } from '../src/json/json.js';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
const SERIES = opt('series', 100_000);
const JSON_OUT = args.includes('--json');
const PROF_DIR = (() => { const i = args.indexOf('--cpu-prof'); return i >= 0 ? args[i + 1] : null; })();
const TYPES = ['float64', 'float64', 'float64', 'int64', 'boolean', 'string'] as const;

const freePort = () => new Promise<number>((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)); }); });

async function cpuSeconds(pid: number): Promise<number> {
  const f = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Tag names as a plant has them: area/unit/tag, of mixed value types. */
function streams(n: number): StreamDeclaration[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `area-${Math.floor(i / 10_000)}/unit-${Math.floor(i / 100) % 100}/tag-${i % 100}.pv`,
    type: TYPES[i % TYPES.length],
  }));
}

interface Tally { transactions: number; seriesCreated: number; lastTx: bigint }

/** fetch, tried again for 60 s when the connection fails (on a box loaded 15x its cores, undici's 10 s connect timeout expires). */
async function fetchPatiently(url: string): Promise<Response> {
  for (const end = Date.now() + 60_000; ;) {
    try { return await fetch(url); } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Model transactions and series-created events after sinceTx, from GET /v1/model/events. */
async function tally(http: string, sinceTx: bigint): Promise<Tally> {
  const out: Tally = { transactions: 0, seriesCreated: 0, lastTx: sinceTx };
  for (;;) {
    const r = await fetchPatiently(`${http}/v1/model/events?since_tx=${out.lastTx}&limit=10000`);
    if (!r.ok) throw new Error(`GET /v1/model/events: ${r.status} ${await r.text()}`);
    const txs = parseJson(new Uint8Array(await r.arrayBuffer())) as Array<{ tx_id: bigint | number; events: Array<{ entity_kind: string; action: string }> }>;
    for (const t of txs) {
      out.transactions++;
      out.lastTx = BigInt(t.tx_id);
      for (const e of t.events) if (e.entity_kind === 'series' && e.action === 'created') out.seriesCreated++;
    }
    if (txs.length < 10_000) return out;
  }
}

async function open(address: string, epoch: bigint, decl: StreamDeclaration[]): Promise<{ client: CollectorClient; ms: number }> {
  const t0 = performance.now();
  const client = await CollectorClient.connect({ address, collectorId: 'bench-series', epoch, streams: decl });
  const ms = performance.now() - t0;
  const refused = client.welcome.streams.filter((s) => !s.accepted);
  if (client.welcome.streams.length !== decl.length || refused.length > 0) {
    throw new Error(`welcome: ${client.welcome.streams.length} streams, ${refused.length} refused (${refused[0]?.refusal ?? ''})`);
  }
  return { client, ms };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'historian-bench-series-'));
  let dbName: string | null = null;
  let databaseUrl: string | undefined;
  if (process.env.DATABASE_URL) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
    dbName = `bench_series_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${dbName}`); await admin.end();
    const u = new URL(process.env.DATABASE_URL); u.pathname = `/${dbName}`; databaseUrl = u.toString();
  }
  const grpcPort = await freePort(), httpPort = await freePort();
  const server: ChildProcess = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...(PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : []), '--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: String(httpPort), SERVICE_GRPC_PORT: String(grpcPort), SERVICE_DATA_DIR: dataDir,
      SERVICE_AUTH_MODE: 'disabled', SERVICE_LOG_LEVEL: 'error', SERVICE_WORKERS: '1', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const address = `127.0.0.1:${grpcPort}`, http = `http://127.0.0.1:${httpPort}`;
  try {
    // ready: a probe collector of one stream gets its welcome
    for (const end = Date.now() + 180_000; ;) {
      try { (await CollectorClient.connect({ address, collectorId: 'bench-probe', epoch: 1n, streams: [{ name: 'probe', type: 'float64' }] })).close(); break; } catch (e) {
        if (Date.now() > end) throw e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    const decl = streams(SERIES);
    const pid = server.pid as number;
    const load0 = loadavg()[0];
    const before = await tally(http, 0n);

    const cpu0 = await cpuSeconds(pid);
    const first = await open(address, 1n, decl);
    const createCpu = (await cpuSeconds(pid)) - cpu0;
    const ids = first.client.welcome.streams.map((s) => s.series_id);
    first.client.close();
    const created = await tally(http, before.lastTx);

    const cpu1 = await cpuSeconds(pid);
    const again = await open(address, 2n, decl);
    const reconnectCpu = (await cpuSeconds(pid)) - cpu1;
    const same = again.client.welcome.streams.every((s, i) => s.series_id === ids[i]);
    again.client.close();
    const reconnect = await tally(http, created.lastTx);
    const load1 = loadavg()[0];

    const result = {
      backend: databaseUrl ? 'postgresql' : 'pglite',
      series: SERIES,
      create_ms: Math.round(first.ms),
      create_series_per_s: Math.round(SERIES / (first.ms / 1000)),
      create_server_cpu_s: Number(createCpu.toFixed(2)),
      create_model_transactions: created.transactions,
      create_series_created: created.seriesCreated,
      reconnect_ms: Math.round(again.ms),
      reconnect_server_cpu_s: Number(reconnectCpu.toFixed(2)),
      reconnect_model_transactions: reconnect.transactions,
      reconnect_series_created: reconnect.seriesCreated,
      reconnect_same_series: same,
      load_average_1m: [Number(load0.toFixed(2)), Number(load1.toFixed(2))],
    };
    if (JSON_OUT) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      const rows: Array<[string, string, string]> = [
        ['create: until the welcome (ms)', String(result.create_ms), '< 10,000 for 100,000'],
        ['  series per second', String(result.create_series_per_s), ''],
        ['  server CPU (s)', String(result.create_server_cpu_s), ''],
        ['  model transactions / series created', `${result.create_model_transactions} / ${result.create_series_created}`, ''],
        ['reconnect: until the welcome (ms)', String(result.reconnect_ms), ''],
        ['  server CPU (s)', String(result.reconnect_server_cpu_s), ''],
        ['  model transactions / series created', `${result.reconnect_model_transactions} / ${result.reconnect_series_created}`, '0 / 0'],
        ['  same series as the first session', String(result.reconnect_same_series), 'true'],
        ['load average (1 min) before / after', result.load_average_1m.join(' / '), ''],
      ];
      process.stdout.write(`series creation: one collector, ${SERIES} new streams, ${result.backend}\n`);
      for (const [a, b, c] of rows) process.stdout.write(`  ${a.padEnd(40)} ${b.padStart(14)}   ${c}\n`);
    }
  } finally {
    await new Promise<void>((resolve) => { server.once('exit', () => resolve()); server.kill('SIGTERM'); setTimeout(() => server.kill('SIGKILL'), 10_000).unref(); });
    await rm(dataDir, { recursive: true, force: true });
    if (dbName && process.env.DATABASE_URL) {
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await admin.end();
    }
  }
}

main().catch((e: unknown) => { process.stderr.write(`bench/series-creation: ${e instanceof Error ? e.stack : String(e)}\n`); process.exit(1); });
