// Entry point: `npm start` (compiled) or `npm run dev` (tsx). Configuration comes from
// the environment; `--help` lists it. SIGTERM and SIGINT stop gracefully.
import { loadConfig, helpText, ConfigError } from './config/config.js';
import { createLogger } from './log.js';
import { reportHeap } from './threads/heap-report.js';

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(helpText());
    return;
  }
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) { process.stderr.write(`configuration error: ${e.message}\n\n${helpText()}`); process.exitCode = 2; return; }
    throw e;
  }
  const log = createLogger(config.logLevel);
  reportHeap('main');
  // Imported here, not at the top: `--help` and a configuration error need none of the service's modules.
  const { startService } = await import('./service.js');
  const service = await startService(config, log);
  log.info({ url: `http://${config.host}:${service.http.port}`, data_dir: config.dataDir, model: service.context.db.kind, auth_mode: config.authMode }, 'service started');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    service.stop().then(() => { log.info('stopped'); log.flush(); }, (e) => { log.error({ err: e }, 'stop failed'); process.exitCode = 1; });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e) => {
  process.stderr.write(`failed to start: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
