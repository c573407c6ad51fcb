// The main thread's side of ingest: starts the ingest worker (which hosts the gRPC
// server and writes), answers its questions about credentials and the model, persists
// its counters, and relays diagnostics to the HTTP routes. A storage fault reported by
// the worker stops the process (an fsync failure must not be retried: the data directory
// stays consistent only if nobody writes after it).
import type { Worker } from 'node:worker_threads';
import { siblingEntry, startThread } from '../threads/thread-boot.js';
import type { ServiceContext } from '../service-context.js';
import { ServiceError } from '../errors.js';
import { authOf, authenticateServiceToken } from '../auth/index.js';
import { PortRpc } from './port-rpc.js';
import { unpackCommits } from './commit-feed.js';
import { claimEpoch, collectorIdentitiesNamed, listCollectorRows, saveCollectorRows } from './collector-records.js';
import { readTlsFiles, type IngestConfig } from '../config/ingest-config.js';
import { resolveStreams } from './stream-series.js';
import type {
  AuthenticateArg, AuthenticateResult, CollectorDetail, CommittedGroup, PackedCommits, CollectorDiagnostic, CollectorRow, IngestWorkerData, OpenSessionArg, OpenSessionResult,
} from './thread-messages.js';

declare module '../service-context.js' {
  interface ServiceParts {
    ingest: IngestHost;
  }
}

export interface IngestHostOptions {
  /** What to do on a storage fault; default: log and exit the process with code 70. */
  onFatal?: (message: string) => void;
}

export class IngestHost {
  private readonly commitListeners = new Set<(group: CommittedGroup) => void>();
  /** Each commit-feed client's watched series (see watch()). */
  private readonly watchSets = new Map<string, readonly string[]>();

  private constructor(
    private readonly worker: Worker,
    private readonly rpc: PortRpc,
    readonly port: number,
    private readonly context: ServiceContext,
  ) {}

  static async start(context: ServiceContext, config: IngestConfig, opts: IngestHostOptions = {}): Promise<IngestHost> {
    const { db, log } = context;
    const ilog = log.child({ area: 'ingest' });
    const entry = siblingEntry(import.meta.url, 'ingest-worker');
    const data: IngestWorkerData = {
      entry,
      host: context.config.host,
      port: context.config.grpcPort,
      seriesDir: `${context.config.dataDir}/series`,
      dataDir: context.config.dataDir,
      authMode: context.config.authMode,
      tls: readTlsFiles(config.tls),
      tuning: config.tuning,
      known: await listCollectorRows(db),
      latest: context.parts.storage?.latest?.buffer ?? null,
    };
    const worker = startThread(entry, data);
    const rpc = new PortRpc(worker);
    const fatal = opts.onFatal ?? ((message: string) => {
      ilog.fatal({ reason: message }, 'ingest storage fault: stopping the process');
      log.flush?.();
      process.exit(70);
    });
    rpc.handle<AuthenticateArg>('authenticate', (arg) => authenticateCollector(context, arg));
    rpc.handle<OpenSessionArg>('openSession', (arg) => openSession(context, arg));
    rpc.handle<CollectorRow[]>('persist', (rows) => saveCollectorRows(db, rows).catch((e: unknown) => ilog.warn({ err: e }, 'saving collector counters failed')));
    rpc.handle<string>('fatal', (message) => fatal(message));
    rpc.handle<{ level: 'info' | 'warn' | 'error'; msg: string; fields: Record<string, unknown> }>('log', ({ level, msg, fields }) => ilog[level](fields, msg));

    const port = await new Promise<number>((resolve, reject) => {
      rpc.handle<{ port: number }>('ready', ({ port: p }) => resolve(p));
      rpc.handle<string>('start-failed', (stack) => reject(new Error(`the ingest worker failed to start: ${stack}`)));
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the ingest worker exited with code ${code} while starting`)));
    });
    const host = new IngestHost(worker, rpc, port, context);
    rpc.handle<PackedCommits>('commits', (packed) => {
      const group = unpackCommits(packed);
      for (const l of host.commitListeners) {
        try { l(group); } catch (e) { ilog.warn({ err: e }, 'a commit-feed listener failed'); }
      }
    });
    worker.on('error', (e) => fatal(`ingest worker failed: ${e.stack ?? e.message}`));
    ilog.info({ port, tls: config.tls !== null, mtls: config.tls?.clientCaFile != null }, 'collector ingest listening');
    return host;
  }

  /** The spec's Collector diagnostics, one per collector ever seen, by collector_id. */
  diagnostics(): Promise<CollectorDiagnostic[]> {
    return this.rpc.call<CollectorDiagnostic[]>('diagnostics', null).catch(async (e: unknown) => {
      this.context.log.warn({ err: e }, 'ingest worker unreachable; answering diagnostics from the model');
      return (await listCollectorRows(this.context.db)).map((r) => ({
        ...r, acked_through: 0n, credit_live: 0n, credit_backfill: 0n,
      }));
    });
  }

  /**
   * The commit feed (commit-feed.ts): durable points of the watched series, one group per
   * group commit, in commit order. Returns the unsubscribe function.
   */
  onCommits(listener: (group: CommittedGroup) => void): () => void {
    this.commitListeners.add(listener);
    return () => { this.commitListeners.delete(listener); };
  }

  /**
   * Replaces one client's watched series; the worker reports commits of the union of every
   * client's set. Calls reach the worker in order, so the last union sent is the one applied.
   */
  watch(client: string, seriesIds: readonly string[]): Promise<void> {
    if (seriesIds.length === 0) this.watchSets.delete(client); else this.watchSets.set(client, seriesIds);
    const union = new Set<string>();
    for (const ids of this.watchSets.values()) for (const id of ids) union.add(id);
    return this.rpc.call<number>('watch', [...union]).then(() => undefined);
  }

  detail(collectorId: string): Promise<CollectorDetail | null> {
    return this.rpc.call<CollectorDetail | null>('detail', collectorId);
  }

  async stop(): Promise<void> {
    try {
      await Promise.race([this.rpc.call('stop', null), new Promise((r) => setTimeout(r, 5_000).unref())]);
    } finally {
      this.rpc.close(new ServiceError('shutting-down', 'the ingest worker stopped'));
      this.worker.removeAllListeners('error');
      await this.worker.terminate();
    }
  }
}

/** Bearer token of a collector identity named like the collector, or a client certificate SAN naming one. */
async function authenticateCollector(context: ServiceContext, arg: AuthenticateArg): Promise<AuthenticateResult> {
  if (arg.bearer) {
    let identity;
    try {
      identity = await authenticateServiceToken(authOf(context), arg.bearer);
    } catch (e) {
      if (e instanceof ServiceError && e.code === 'unauthenticated') return { ok: false, status: 'unauthenticated', message: e.message };
      throw e;
    }
    if (identity.kind !== 'collector') return { ok: false, status: 'permission-denied', message: `identity ${identity.name} is of kind ${identity.kind}, not collector` };
    if (identity.name !== arg.collectorId) return { ok: false, status: 'permission-denied', message: `the token belongs to collector ${identity.name}, not ${arg.collectorId}` };
    return { ok: true, identity: identity.name };
  }
  if (arg.sans && arg.sans.length > 0) {
    const names = arg.sans.filter((s) => s.startsWith('URI:') || s.startsWith('DNS:')).map((s) => s.slice(4));
    const known = await collectorIdentitiesNamed(context.db, names);
    if (known.includes(arg.collectorId)) return { ok: true, identity: arg.collectorId };
    if (known.length > 0) return { ok: false, status: 'permission-denied', message: `the client certificate names collector ${known[0]}, not ${arg.collectorId}` };
    return { ok: false, status: 'permission-denied', message: 'no subject alternative name of the client certificate matches a collector identity' };
  }
  return { ok: false, status: 'unauthenticated', message: 'send a bearer service token (authorization metadata) or a client certificate' };
}

async function openSession(context: ServiceContext, arg: OpenSessionArg): Promise<OpenSessionResult> {
  const stale = await claimEpoch(context.db, arg.collectorId, BigInt(arg.epoch), arg.identity);
  if (stale !== null) return { ok: false, reason: 'stale-epoch', currentEpoch: stale.toString() };
  return { ok: true, streams: await resolveStreams(context, arg) };
}

