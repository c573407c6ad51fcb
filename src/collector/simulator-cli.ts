// npm run collector -- [options]: a collector that streams a simulated plant (plant-signals.ts)
// to the service's gRPC port: by default the last hour as history, then live until stopped.
// `--dataset FILE` streams the shared industrial dataset instead (tests and benchmarks).
// Progress (points sent, acknowledged, buffered, rate) is one line on stderr, rewritten in place.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadDataset, type SourceStream } from './dataset-source.js';
import { PLANT_ENUM_SETS, plantStreams } from './plant-signals.js';
import { Simulator } from './simulator.js';

const FLAGS = new Set(['enum-sets', 'help']);

function parseArgs(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h') { out.help = 'true'; continue; }
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const k = a.slice(2);
    if (FLAGS.has(k)) { out[k] = 'true'; continue; }
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${a} needs a value`);
    out[k] = v;
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

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90s`, `15m`, `1h`, `7d` or `0`, in seconds. */
function parseDuration(flag: string, v: string): number {
  if (v === '0') return 0;
  const m = /^(\d+)(s|m|h|d)$/.exec(v);
  if (!m) throw new Error(`--${flag} must be a duration like 90s, 15m, 1h or 7d, got ${v}`);
  return Number(m[1]) * UNIT_S[m[2]];
}

/** An ISO 8601 time with a zone (`2026-01-01T00:00:00Z`) or integer nanoseconds since the Unix epoch. */
function parseTime(flag: string, v: string): bigint {
  if (/^\d{1,19}$/.test(v)) return BigInt(v);
  const ms = /(Z|[+-]\d\d:?\d\d)$/.test(v) ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) throw new Error(`--${flag} must be an ISO 8601 time with a zone (2026-01-01T00:00:00Z) or nanoseconds since the Unix epoch, got ${v}`);
  return BigInt(ms) * 1_000_000n;
}

/** Where the forward buffer and the session epoch live unless --state-dir says: beside the service's data. */
function defaultStateDir(collectorId: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.SERVICE_DATA_DIR || './data', 'collector-state', collectorId);
}

const USAGE = `Usage: npm run collector -- [options]
Streams a simulated plant (pumps, tanks, compressors, packaging lines: analog values,
counters, on/off states, an equipment-state enum, batch and product tags) to the service's
collector port. By default it writes the last hour as history, as fast as the server takes
it, then goes on live, a point a second per signal, until Ctrl-C.
  --address HOST:PORT      service gRPC address [127.0.0.1:8081]
  --collector-id ID        collector id; the bearer token's identity must have this name [sim-1]
  --token svc_...          bearer token of a collector identity [SERVICE_COLLECTOR_TOKEN]
  --series N               signals to stream, unit by unit [24]; --seed N [1]
  --mode live|fast         live: history up to now, then real time until stopped [live];
                           fast: --points seconds of every signal from the start as fast as
                           credit allows, then exit
  --history DURATION       live mode: history written before now, e.g. 15m, 1h, 7d, 0 [1h]
  --start TIME             a fixed start instead (2026-01-01T00:00:00Z or ns since the epoch);
                           fast mode's default start is --points seconds before now
  --points N               fast mode: seconds of data per signal [3600]
  --duration DURATION      live mode: stop after this long [until Ctrl-C]
  --batch N                points per batch [1000]
  --state-dir DIR          store-and-forward buffer and session epoch
                           [$SERVICE_DATA_DIR/collector-state/<collector id>, data dir ./data]
  --ca FILE [--cert FILE --key FILE] [--server-name HOST]   TLS / mTLS
  --dataset FILE           stream the shared industrial dataset generator instead of the plant
                           (tests and benchmarks: ../shared/datasets/industrial.mjs)
  --enum-sets              print the enum sets the plant's streams name, one registry entry body
                           a line (POST /v1/model/registries/enum-sets/entries), and exit
The plant's equipment-state streams are refused until an administrator has registered its
enum set once:
  npm run --silent collector -- --enum-sets | curl -b cookies \\
    -H 'Content-Type: application/json' --data @- http://127.0.0.1:8080/v1/model/registries/enum-sets/entries
`;

const REGISTER_HINT = 'register the enum set once as an administrator: npm run --silent collector -- --enum-sets | '
  + 'curl -b cookies -H \'Content-Type: application/json\' --data @- http://127.0.0.1:8080/v1/model/registries/enum-sets/entries';

async function sources(a: Record<string, string>, mode: 'live' | 'fast'): Promise<SourceStream[]> {
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  const points = num(a, 'points', 3600);
  const startNs = a.start !== undefined ? parseTime('start', a.start)
    : mode === 'fast' ? nowNs - BigInt(points) * 1_000_000_000n
    : nowNs - BigInt(parseDuration('history', a.history ?? '1h')) * 1_000_000_000n;
  if (a.dataset) {
    return loadDataset({ series: num(a, 'series', 100), points: num(a, 'points', mode === 'fast' ? 10_000 : 10_000_000), seed: num(a, 'seed', 1), path: resolve(a.dataset), startNs });
  }
  return plantStreams({ series: num(a, 'series', 24), seed: num(a, 'seed', 1), startNs, ...(mode === 'fast' ? { points } : {}) });
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  if (a.help) { process.stdout.write(USAGE); return; }
  if (a['enum-sets']) { for (const set of PLANT_ENUM_SETS) process.stdout.write(`${JSON.stringify(set)}\n`); return; }
  const mode = (a.mode ?? 'live') as 'live' | 'fast';
  if (mode !== 'live' && mode !== 'fast') throw new Error('--mode must be live or fast');
  const streams = await sources(a, mode);
  const tls = a.ca ? {
    caPem: readFileSync(a.ca), certPem: a.cert ? readFileSync(a.cert) : undefined, keyPem: a.key ? readFileSync(a.key) : undefined, serverName: a['server-name'],
  } : undefined;
  const collectorId = a['collector-id'] ?? 'sim-1';
  const stateDir = a['state-dir'] ? resolve(a['state-dir']) : defaultStateDir(collectorId);
  const sim = new Simulator({
    address: a.address ?? '127.0.0.1:8081', collectorId,
    token: a.token ?? process.env.SERVICE_COLLECTOR_TOKEN, tls, streams, mode,
    batchPoints: num(a, 'batch', 1000), stateDir,
    log: (line) => process.stderr.write(`\n${line}${line.includes('is not in the registry') ? `\n  ${REGISTER_HINT}` : ''}\n`),
  });
  process.stderr.write(`streaming ${streams.length} signals as collector ${collectorId} to ${a.address ?? '127.0.0.1:8081'} (state in ${join(stateDir)})\n`);
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
  const duration = mode === 'live' && a.duration !== undefined ? setTimeout(stop, parseDuration('duration', a.duration) * 1000) : null;
  await sim.run();
  clearInterval(progress);
  if (duration) clearTimeout(duration);
  const secs = (performance.now() - t0) / 1000;
  process.stderr.write(`\ndone: ${sim.stats.acked} points acknowledged in ${secs.toFixed(1)} s (${Math.round(sim.stats.acked / secs)} pts/s), ${sim.stats.sessions} session(s)\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`collector: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
