// The real service as a child process, so a harness can SIGKILL it and start it again on
// the same data directory and ports: `node --import tsx src/main.ts` (or the built
// dist/main.js) with its configuration in the environment, stdout and stderr appended to a
// log file the harness names in its report.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { openSync, closeSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface ServiceChildOptions {
  dataDir: string;
  logFile: string;
  /** Extra SERVICE_* variables (ingest thresholds and the like). */
  env?: Record<string, string>;
  /** Run dist/main.js instead of the TypeScript sources (after `npm run build`). */
  built?: boolean;
  /** Postgres for the model; unset means PGlite under the data directory (the default a crash test wants). */
  databaseUrl?: string;
  /**
   * The checkout whose service runs (default: this one; RELIABILITY_SERVICE_ROOT overrides), e.g.
   * a `git archive` export of a commit with node_modules linked in, to test a fixed version.
   */
  root?: string;
  /** Extra node options (a profile: --cpu-prof --cpu-prof-dir=...). */
  nodeArgs?: string[];
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export class ServiceChild {
  private child: ChildProcess | null = null;
  private exited: Promise<number | null> = Promise.resolve(null);
  starts = 0;
  /** Exits the harness did not cause (a crash of the service itself), with their codes. */
  readonly unexpectedExits: Array<{ code: number | null; signal: string | null }> = [];
  private expectingExit = false;

  private constructor(private readonly opts: ServiceChildOptions, readonly httpPort: number, readonly grpcPort: number) {}

  static async create(opts: ServiceChildOptions): Promise<ServiceChild> {
    return new ServiceChild(opts, await freePort(), await freePort());
  }

  get url(): string { return `http://127.0.0.1:${this.httpPort}`; }
  get grpcAddress(): string { return `127.0.0.1:${this.grpcPort}`; }
  get running(): boolean { return this.child !== null; }
  /** The running service's process id (a harness reads its threads' CPU from /proc). */
  get pid(): number | undefined { return this.child?.pid; }

  /** Starts the service and resolves once HTTP answers and the model is ready. */
  async start(readyTimeoutMs = 90_000): Promise<void> {
    if (this.child) throw new Error('the service is already running');
    const root = this.opts.root ?? process.env.RELIABILITY_SERVICE_ROOT ?? REPO;
    const entry = this.opts.built ? ['dist/main.js'] : ['--import', 'tsx', 'src/main.ts'];
    if (this.opts.built && !existsSync(`${root}/dist/main.js`)) throw new Error('dist/main.js is missing: run npm run build first');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR,
      SERVICE_HOST: '127.0.0.1',
      SERVICE_HTTP_PORT: String(this.httpPort),
      SERVICE_GRPC_PORT: String(this.grpcPort),
      SERVICE_DATA_DIR: this.opts.dataDir,
      SERVICE_AUTH_MODE: 'disabled',
      SERVICE_WORKERS: '1',
      SERVICE_LOG_LEVEL: 'info',
      ...(this.opts.databaseUrl ? { DATABASE_URL: this.opts.databaseUrl } : {}),
      ...this.opts.env,
    };
    const fd = openSync(this.opts.logFile, 'a');
    const child = spawn(process.execPath, ['--v8-pool-size=2', ...(this.opts.nodeArgs ?? []), ...entry], { cwd: root, env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    this.child = child;
    this.starts++;
    this.expectingExit = false;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (!this.expectingExit) this.unexpectedExits.push({ code, signal });
        if (this.child === child) this.child = null;
        resolve(code);
      });
    });
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      if (this.child !== child) throw new Error(`the service exited while starting (see ${this.opts.logFile})`);
      if (await this.ready()) return;
      if (Date.now() > deadline) throw new Error(`the service did not become ready in ${readyTimeoutMs} ms (see ${this.opts.logFile})`);
      await sleep(100);
    }
  }

  private async ready(): Promise<boolean> {
    try {
      const h = await fetch(`${this.url}/v1/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (h.status !== 200) return false;
      const m = await fetch(`${this.url}/v1/model/healthz`, { signal: AbortSignal.timeout(2_000) });
      return m.status === 200;
    } catch {
      return false;
    }
  }

  /** SIGKILL: no shutdown code runs, nothing is flushed that was not already. */
  async kill(): Promise<void> {
    if (!this.child) return;
    this.expectingExit = true;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM and wait (graceful stop). */
  async stop(): Promise<void> {
    if (!this.child) return;
    this.expectingExit = true;
    this.child.kill('SIGTERM');
    const killed = setTimeout(() => this.child?.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(killed);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
