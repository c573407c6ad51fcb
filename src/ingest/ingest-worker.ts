// Entry of the ingest worker_thread: opens its own engine over the shared LMDB
// environment, builds the ingest core and starts the gRPC server, then serves the main
// thread's questions (diagnostics, stop) over the parent port.
import { parentPort, workerData } from 'node:worker_threads';
import { PortRpc } from './port-rpc.js';
import { IngestCore, type MainSide } from './ingest-core.js';
import { EngineIngestStore, warmUpEngine } from './ingest-store.js';
import { startGrpcServer } from './grpc-server.js';
import { reportExtra } from '../threads/heap-report.js';
import { cachedHeadFigures } from '../storage/series-store.js';
import type { AuthenticateResult, CollectorRow, IngestWorkerData, OpenSessionResult } from './thread-messages.js';

async function run(): Promise<void> {
  if (!parentPort) throw new Error('BUG: ingest-worker must run in a worker_thread');
  const data = workerData as IngestWorkerData;
  // the open heads' share of this thread's external memory (issue 33: RSS during a bulk load)
  reportExtra(cachedHeadFigures);
  const rpc = new PortRpc(parentPort);
  // The core is made below, over this store; until then nothing was written to seal.
  let core: IngestCore | undefined;
  const store = EngineIngestStore.open(data.seriesDir, data.tuning.quietSealMs, () => core !== undefined && !core.storageFull(), data.latest);
  const main: MainSide = {
    authenticate: (arg) => rpc.call<AuthenticateResult>('authenticate', arg),
    openSession: (arg) => rpc.call<OpenSessionResult>('openSession', arg),
    persist: (rows: CollectorRow[]) => rpc.notify('persist', rows),
    fatal: (message) => rpc.notify('fatal', message),
    log: (level, msg, fields) => rpc.notify('log', { level, msg, fields }),
    commits: (group, transfer) => rpc.notify('commits', group, transfer),
  };
  core = new IngestCore(store, main, data.tuning, data.authMode, data.dataDir, data.known);
  await core.checkDisk();
  // before the port opens: the first collectors' batches then meet compiled code
  await warmUpEngine().catch((e: unknown) => main.log('warn', 'ingest warm-up failed (the first batches will be slower)', { error: e instanceof Error ? e.message : String(e) }));
  const server = await startGrpcServer(core, {
    host: data.host, port: data.port, tls: data.tls, maxMessageBytes: data.tuning.maxMessageBytes,
  }, (msg, fields) => main.log('error', msg, fields));

  rpc.handle('diagnostics', () => core.diagnostics());
  // The series live subscriptions watch (the whole set each time); answered once applied.
  rpc.handle<string[]>('watch', (ids) => { core.feed.setWatched(ids); return core.feed.watching; });
  rpc.handle<string>('detail', (id) => core.detail(id));
  rpc.handle('stop', async () => {
    await server.stop();
    await core.stop();
    await store.close();
    return true;
  });
  rpc.notify('ready', { port: server.port });
}

run().catch((e: unknown) => {
  parentPort?.postMessage({ rpc: 'note', op: 'start-failed', arg: e instanceof Error ? e.stack ?? e.message : String(e) });
});
