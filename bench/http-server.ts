// The server side of bench/http.ts: the real service on its embedded defaults (or
// DATABASE_URL), seeded with operation records so that the JSON read returns a
// realistic page. Prints {"port": N} on stdout when ready; stops on SIGTERM.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/log.js';
import { startService } from '../src/service.js';

const seed = Number(process.env.BENCH_OPERATIONS ?? 50);
const dataDir = process.env.SERVICE_DATA_DIR ?? await mkdtemp(join(tmpdir(), 'historian-bench-'));
const config = loadConfig({ ...process.env, SERVICE_DATA_DIR: dataDir, SERVICE_HTTP_PORT: '0', SERVICE_GRPC_PORT: '0' });
const service = await startService(config, createLogger(config.logLevel));
for (let i = 0; i < seed; i++) {
  await service.context.operations.start({
    namespace: 'lifecycle', kind: 'series.lifecycle-enforcement', principal: 'local-administrator',
    detail: { adapter: 'series-lifecycle', series_id: `bench-${i}` }, total: 100n,
  });
}
process.stdout.write(`${JSON.stringify({ port: service.http.port })}\n`);
process.on('SIGTERM', () => { service.stop().then(() => process.exit(0)); });
