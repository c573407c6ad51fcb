// npm run collector -- [options]: a collector that streams the shared industrial dataset.
//   --address 127.0.0.1:8081   --collector-id sim-1   --token svc_...  (or SERVICE_COLLECTOR_TOKEN)
//   --series 100 --points 10000 --seed 1   --mode live|fast   --batch 1000
//   --state-dir ./collector-state   --ca ca.pem [--cert client.pem --key client.key] [--server-name host]
//   --dataset ../shared/datasets/industrial.mjs
// Progress (points sent, acknowledged, buffered, rate) is one line on stderr, rewritten in place.
import { readFileSync } from 'node:fs';
import { loadDataset } from './dataset-source.js';
import { Simulator } from './simulator.js';

function parse(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${a} needs a value`);
    out[a.slice(2)] = v;
    i++;
  }
  return out;
}

function num(a: Record<string, string>, k: string, d: number): number {
  if (a[k] === undefined) return d;
  const n = Number(a[k]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${k} must be a positive integer, got ${a[k]}`);
  return n;
}

const USAGE = `Usage: npm run collector -- [options]
Streams the shared industrial dataset to the service's collector port.
  --address HOST:PORT      service gRPC address [127.0.0.1:8081]
  --collector-id ID        collector id; the bearer token's identity must have this name [sim-1]
  --token svc_...          bearer token of a collector identity [SERVICE_COLLECTOR_TOKEN]
  --series N --points N    dataset size [100 x 10000]; --seed N [1]
  --mode live|fast         live: real time from now; fast: as fast as credit allows [fast]
  --batch N                points per batch [1000]
  --state-dir DIR          store-and-forward buffer while disconnected [./collector-state]
  --ca FILE [--cert FILE --key FILE] [--server-name HOST]   TLS / mTLS
  --dataset FILE           dataset generator [../shared/datasets/industrial.mjs]
`;

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) { process.stdout.write(USAGE); return; }
  const a = parse(process.argv.slice(2));
  const mode = (a.mode ?? 'fast') as 'live' | 'fast';
  if (mode !== 'live' && mode !== 'fast') throw new Error('--mode must be live or fast');
  const streams = await loadDataset({
    series: num(a, 'series', 100), points: num(a, 'points', 10_000), seed: num(a, 'seed', 1), path: a.dataset,
    ...(mode === 'live' ? { startNs: BigInt(Date.now()) * 1_000_000n } : {}),
  });
  const tls = a.ca ? {
    caPem: readFileSync(a.ca), certPem: a.cert ? readFileSync(a.cert) : undefined, keyPem: a.key ? readFileSync(a.key) : undefined, serverName: a['server-name'],
  } : undefined;
  const sim = new Simulator({
    address: a.address ?? '127.0.0.1:8081', collectorId: a['collector-id'] ?? 'sim-1',
    token: a.token ?? process.env.SERVICE_COLLECTOR_TOKEN, tls, streams, mode,
    batchPoints: num(a, 'batch', 1000), stateDir: a['state-dir'] ?? './collector-state',
    log: (line) => process.stderr.write(`\n${line}\n`),
  });
  const t0 = performance.now();
  let lastAcked = 0, lastT = t0;
  const progress = setInterval(() => {
    const now = performance.now(), s = sim.stats;
    const rate = ((s.acked - lastAcked) * 1000) / Math.max(1, now - lastT);
    lastAcked = s.acked; lastT = now;
    process.stderr.write(`\r${s.connected ? 'connected ' : 'offline   '} sent ${s.sent}  acked ${s.acked}  buffered ${s.bufferedBytes} B  rate ${Math.round(rate)} pts/s  credit-wait ${Math.round(sim.creditWaitMs())} ms  refused ${s.refused}  rejected ${s.rejected}   `);
  }, 500);
  const stop = () => sim.stop();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await sim.run();
  clearInterval(progress);
  const secs = (performance.now() - t0) / 1000;
  process.stderr.write(`\ndone: ${sim.stats.acked} points acknowledged in ${secs.toFixed(1)} s (${Math.round(sim.stats.acked / secs)} pts/s), ${sim.stats.sessions} session(s)\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`collector: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
