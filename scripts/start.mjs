// `npm start` runs `node scripts/start.mjs node <flags> dist/main.js [args]`: it builds dist/
// (`npm run build`) only when a file under src/ or a build setting is newer than the last
// build, then runs the service as a child that it hands its signals to and whose exit
// status it returns. `--help` needs no build: it prints the configuration from the sources.
// A full build takes about 20 s on the 2-core box (docs/decisions.md, 2026-11-27), which
// every start used to pay; the check walks about 500 files' mtimes (src/ and portal/) in milliseconds.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(ROOT, 'dist', '.build-stamp');
/** Besides src/ (files and folders: a deleted file changes its folder's mtime). */
const SETTINGS = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

function newestMtimeMs(path) {
  const st = statSync(path);
  let newest = st.mtimeMs;
  if (st.isDirectory()) {
    for (const name of readdirSync(path)) newest = Math.max(newest, newestMtimeMs(join(path, name)));
  }
  return newest;
}

function stampMtimeMs() {
  try { return statSync(STAMP).mtimeMs; } catch { return -1; }
}

/** Whether dist/ is older than a source or a build setting. */
export function buildIsStale() {
  const stamp = stampMtimeMs();
  if (stamp < 0) return true;
  // portal/: the page's sources, which `npm run build` bundles into dist/portal (scripts/build-portal.mjs).
  let newest = newestMtimeMs(join(ROOT, 'src'));
  try { newest = Math.max(newest, newestMtimeMs(join(ROOT, 'portal'))); } catch { /* a checkout without the portal */ }
  for (const f of SETTINGS) { try { newest = Math.max(newest, statSync(join(ROOT, f)).mtimeMs); } catch { /* absent */ } }
  return newest > stamp;
}

/** Builds dist/ when buildIsStale(); returns the build's exit status (0 when none was needed). */
export function buildIfStale() {
  if (!buildIsStale()) return 0;
  process.stderr.write('sources changed since the last build: npm run build\n');
  const started = Date.now();
  const status = run(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', 'build']);
  if (status !== 0) return status;
  // The stamp carries the build's start time: a file saved during the build is newer than it.
  writeFileSync(STAMP, `${new Date(started).toISOString()}\n`);
  utimesSync(STAMP, started / 1000, started / 1000);
  process.stderr.write(`built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return 0;
}

/**
 * What the service's environment gets unless the user's already sets it (issue 33, resident
 * memory; docs/decisions.md). Glibc reads these when the process starts, so they are set
 * here, in the parent, not by the service.
 * - MALLOC_ARENA_MAX=2: glibc gives each thread that allocates an arena of its own, and the
 *   service's threads (HTTP, ingest, seal, PGlite, a read worker) each held tens of MB free
 *   in theirs: the bulk load's RSS peak 660 -> 577 MB.
 * - MALLOC_MMAP_THRESHOLD_=65536: blocks of 64 KB and more (open heads' columns, batches,
 *   PGlite's start-up buffers) are mapped on their own and unmapped when freed, instead of
 *   left as holes in the heap that stay resident; an untouched tail of one costs nothing.
 *   Fresh service 346 -> 299 MB; bulk load peak 568-583 -> 525 MB.
 */
export const SERVICE_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '65536' };

/** `env` with SERVICE_ENV's settings where it has none. */
export function serviceEnv(env) {
  const out = { ...env };
  for (const [k, v] of Object.entries(SERVICE_ENV)) if (out[k] === undefined || out[k] === '') out[k] = v;
  return out;
}

function run(command, args) {
  const r = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

function main() {
  const [command, ...args] = process.argv.slice(2);
  if (!command) { process.stderr.write('usage: node scripts/start.mjs <command> [args]\n'); process.exit(2); }
  if (args.includes('--help') || args.includes('-h')) {
    process.exit(run(process.execPath, ['--import', 'tsx', 'src/main.ts', '--help']));
  }
  const status = buildIfStale();
  if (status !== 0) process.exit(status);
  const child = spawn(command === 'node' ? process.execPath : command, args, { cwd: ROOT, stdio: 'inherit', env: serviceEnv(process.env) });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGHUP' ? 1 : 15) : 1)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
