// HTTP front-end benchmark: requests per second and latency percentiles for the
// liveness probe and for a JSON read (GET /v1/operations, a page of 50 records),
// driven by autocannon in this process against the service in a second process over
// loopback. Both share the machine's cores, as they would on a small edge box.
//   node --import tsx bench/http.ts [--json] [--seconds 5] [--connections 50] [--workers 2]
import { spawn } from 'node:child_process';
import { SERVICE_NODE_FLAGS } from './service-flags.js';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const opt = (name: string, dflt: number) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt; };
const seconds = opt('--seconds', 5);
const connections = opt('--connections', 50);
// One autocannon thread cannot saturate the server (measured: the server idled 54% at 33k req/s), so load comes from two.
const workers = opt('--workers', 2);

const server = spawn(process.execPath, [...SERVICE_NODE_FLAGS, '--import', 'tsx', new URL('./http-server.ts', import.meta.url).pathname], {
  env: { ...process.env, SERVICE_AUTH_MODE: process.env.SERVICE_AUTH_MODE ?? 'disabled', SERVICE_LOG_LEVEL: process.env.SERVICE_LOG_LEVEL ?? 'info' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise<number>((resolve, reject) => {
  const rl = createInterface({ input: server.stdout });
  rl.on('line', (line) => { try { const m = JSON.parse(line) as { port?: number }; if (m.port) resolve(m.port); } catch { /* log line */ } });
  server.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
});

interface Figure { path: string; requests_per_s: number; p50_ms: number; p99_ms: number; errors: number; non2xx: number }

async function load(path: string): Promise<Figure> {
  const url = `http://127.0.0.1:${port}${path}`;
  await autocannon({ url, connections, duration: 1, workers }); // warm-up: JIT, connection setup
  const r = await autocannon({ url, connections, duration: seconds, workers });
  return { path, requests_per_s: Math.round(r.requests.average), p50_ms: r.latency.p50, p99_ms: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

const figures: Figure[] = [];
try {
  figures.push(await load('/v1/healthz'));
  figures.push(await load('/v1/operations?limit=50'));
} finally {
  server.kill('SIGTERM');
}

const result = { benchmark: 'http', connections, workers, seconds, node: process.version, figures };
if (asJson) process.stdout.write(`${JSON.stringify(result)}\n`);
else {
  console.log(`HTTP front end: autocannon (${workers} threads), ${connections} connections, ${seconds} s per route, server in a second process`);
  console.log('route                          req/s      p50 ms   p99 ms   errors  non-2xx');
  for (const f of figures) {
    console.log(`${f.path.padEnd(30)} ${String(f.requests_per_s).padStart(8)}  ${String(f.p50_ms).padStart(7)}  ${String(f.p99_ms).padStart(7)}  ${String(f.errors).padStart(6)}  ${String(f.non2xx).padStart(7)}`);
  }
}
