// Ingest settings from the environment (each with a default sized for this 2-core class of
// machine; the figures behind them are in docs/decisions.md). Parsed with the rest of
// the configuration at start, so a typo fails the start with a message.
import { readFileSync } from 'node:fs';

/** Limits and pacing; defaults in ingest-config.ts, each overridable from the environment. */
export interface IngestTuning {
  liveCredit: number;
  backfillCredit: number;
  maxBatchPoints: number;
  /** Largest group commit in points; live batches always go first. */
  maxGroupPoints: number;
  /** Largest backfill-only group commit, in points (bounds the engine time a live batch can wait behind). */
  backfillGroupPoints: number;
  /** Engine time a group should take (ms); group sizes follow the measured time per point. */
  groupTargetMs: number;
  /** Live ack latency the credit is sized for (ms): live sessions share rate x this many points. */
  ackTargetMs: number;
  /** Backfill points per group commit while live points are waiting. */
  backfillShareWhileLive: number;
  /** Group commits in flight at once (the next one applies while the previous one syncs). */
  commitsInFlight: number;
  heartbeatIntervalMs: number;
  /** A session silent for this long is closed. */
  idleTimeoutMs: number;
  /** Below this many free bytes in the data directory, batches are refused (retryable). */
  minFreeBytes: number;
  /** Batches with a time further ahead of the server clock are refused (bad-timestamps). */
  maxFutureNs: bigint;
  maxMessageBytes: number;
  /** The ingest engine seals its open heads once no batch has come for this long (ms; 0: only the idle-head job). */
  quietSealMs: number;
}

export interface IngestConfig {
  tuning: IngestTuning;
  /** PEM files for TLS on the gRPC port; a client CA turns on mTLS (client certificates required). */
  tls: { certFile: string; keyFile: string; clientCaFile: string | null } | null;
}

export const INGEST_VARIABLES: Array<{ name: string; default: string; meaning: string }> = [
  { name: 'SERVICE_GRPC_TLS_CERT', default: '(unset)', meaning: 'PEM certificate chain for TLS on the collector port (with SERVICE_GRPC_TLS_KEY)' },
  { name: 'SERVICE_GRPC_TLS_KEY', default: '(unset)', meaning: 'PEM private key for TLS on the collector port' },
  { name: 'SERVICE_GRPC_CLIENT_CA', default: '(unset)', meaning: 'PEM CA bundle; when set, collectors must present a client certificate it signed (mTLS)' },
  { name: 'SERVICE_INGEST_LIVE_CREDIT', default: '10000', meaning: 'live-lane credit per session at welcome and at most, in points (under load each session gets its share of SERVICE_INGEST_ACK_TARGET_MS)' },
  { name: 'SERVICE_INGEST_ACK_TARGET_MS', default: '15', meaning: 'live ack latency the credit is sized for: all live sessions together may hold the engine rate times this many points' },
  { name: 'SERVICE_INGEST_BACKFILL_CREDIT', default: '20000', meaning: 'backfill-lane credit per session, in points' },
  { name: 'SERVICE_INGEST_MAX_BATCH_POINTS', default: '50000', meaning: 'largest batch a collector may send, in points' },
  { name: 'SERVICE_INGEST_GROUP_POINTS', default: '60000', meaning: 'largest group commit, in points' },
  { name: 'SERVICE_INGEST_BACKFILL_GROUP_POINTS', default: '60000', meaning: 'largest group commit of backfill batches only, in points' },
  { name: 'SERVICE_INGEST_GROUP_TARGET_MS', default: '20', meaning: 'engine time a group commit should take; groups are sized from the measured time per point (what a live batch can wait behind)' },
  { name: 'SERVICE_INGEST_MIN_FREE_BYTES', default: '1073741824', meaning: 'below this many free bytes in the data directory, batches are refused (retryable)' },
  { name: 'SERVICE_INGEST_IDLE_TIMEOUT_MS', default: '60000', meaning: 'a session silent this long is closed' },
  { name: 'SERVICE_INGEST_QUIET_SEAL_MS', default: '3000', meaning: 'once no collector batch has come for this long after 100,000 points or more, the open heads the ingest engine wrote are sealed into chunks (0: only heads idle for 10 minutes are)' },
  { name: 'SERVICE_INGEST_MAX_FUTURE_MS', default: '86400000', meaning: 'batches with a time further ahead of the server clock are refused (bad-timestamps)' },
];

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, dflt: number, min: number, max: number, fail: (m: string) => Error): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw fail(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function loadIngestConfig(env: Env, fail: (message: string) => Error): IngestConfig {
  const maxBatchPoints = int(env, 'SERVICE_INGEST_MAX_BATCH_POINTS', 50_000, 1, 1_000_000, fail);
  const tuning: IngestTuning = {
    liveCredit: int(env, 'SERVICE_INGEST_LIVE_CREDIT', 10_000, 1, 100_000_000, fail),
    backfillCredit: int(env, 'SERVICE_INGEST_BACKFILL_CREDIT', 20_000, 1, 100_000_000, fail),
    maxBatchPoints,
    maxGroupPoints: int(env, 'SERVICE_INGEST_GROUP_POINTS', 60_000, 1, 100_000_000, fail),
    backfillGroupPoints: int(env, 'SERVICE_INGEST_BACKFILL_GROUP_POINTS', 60_000, 1, 100_000_000, fail),
    groupTargetMs: int(env, 'SERVICE_INGEST_GROUP_TARGET_MS', 20, 1, 10_000, fail),
    ackTargetMs: int(env, 'SERVICE_INGEST_ACK_TARGET_MS', 15, 1, 60_000, fail),
    backfillShareWhileLive: 10_000,
    commitsInFlight: 2,
    heartbeatIntervalMs: 10_000,
    idleTimeoutMs: int(env, 'SERVICE_INGEST_IDLE_TIMEOUT_MS', 60_000, 100, 3_600_000, fail),
    minFreeBytes: int(env, 'SERVICE_INGEST_MIN_FREE_BYTES', 1024 ** 3, 0, Number.MAX_SAFE_INTEGER, fail),
    maxFutureNs: BigInt(int(env, 'SERVICE_INGEST_MAX_FUTURE_MS', 86_400_000, 0, 10 * 365 * 86_400_000, fail)) * 1_000_000n,
    // Room for a full batch of strings; a bigger message is refused by grpc-js before decoding.
    maxMessageBytes: Math.max(4 * 1024 * 1024, maxBatchPoints * 64),
    quietSealMs: int(env, 'SERVICE_INGEST_QUIET_SEAL_MS', 3000, 0, 3_600_000, fail),
  };
  const cert = env.SERVICE_GRPC_TLS_CERT || undefined;
  const key = env.SERVICE_GRPC_TLS_KEY || undefined;
  const ca = env.SERVICE_GRPC_CLIENT_CA || undefined;
  if ((cert === undefined) !== (key === undefined)) throw fail('SERVICE_GRPC_TLS_CERT and SERVICE_GRPC_TLS_KEY must be set together');
  if (ca && !cert) throw fail('SERVICE_GRPC_CLIENT_CA needs SERVICE_GRPC_TLS_CERT and SERVICE_GRPC_TLS_KEY');
  return { tuning, tls: cert && key ? { certFile: cert, keyFile: key, clientCaFile: ca ?? null } : null };
}

export function readTlsFiles(tls: IngestConfig['tls']): { certPem: string; keyPem: string; clientCaPem: string | null } | null {
  if (!tls) return null;
  return {
    certPem: readFileSync(tls.certFile, 'utf8'),
    keyPem: readFileSync(tls.keyFile, 'utf8'),
    clientCaPem: tls.clientCaFile ? readFileSync(tls.clientCaFile, 'utf8') : null,
  };
}
