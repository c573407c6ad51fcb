// Starts the real service for a test: a fresh data directory, a fresh Postgres
// database when DATABASE_URL is set (PGlite under the data directory otherwise), port 0
// on loopback. Everything is torn down when the test ends.
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { startService, type RunningService } from '../../src/service.js';
import { parseJson, stringifyJson } from '../../src/json/json.js';
import type { AnyRoute } from '../../src/http/route.js';
import { migratedTemplate } from './model-template.js';

export interface TestService {
  url: string;
  service: RunningService;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Stops the service (idempotent; also runs at teardown). */
  stop(): Promise<void>;
}

/**
 * A fresh database on the configured Postgres, dropped at teardown; undefined when
 * DATABASE_URL is unset. Empty, or with `migrated` a clone of a template holding every
 * migration (model-template.ts), which the service's own migrate() then finds up to date.
 */
export async function freshDatabase(t: Test, opts: { migrated?: boolean } = {}): Promise<string | undefined> {
  const url = process.env.DATABASE_URL;
  if (!url) return undefined;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const template = opts.migrated ? ` TEMPLATE ${await migratedTemplate(admin, url)}` : '';
  await admin.query(`CREATE DATABASE ${name}${template}`);
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function startTestService(
  t: Test,
  opts: {
    env?: Record<string, string>; logLevel?: string; extraRoutes?: AnyRoute[]; printBootstrapSecret?: (line: string) => void;
    /** Where the service's log lines go (stdout when unset); for tests that read the log. */
    logStream?: NodeJS.WritableStream;
  } = {},
): Promise<TestService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'historian-test-'));
  const databaseUrl = await freshDatabase(t, { migrated: true });
  const config = loadConfig({
    SERVICE_HOST: '127.0.0.1',
    SERVICE_HTTP_PORT: '0',
    SERVICE_GRPC_PORT: '0',
    SERVICE_DATA_DIR: dataDir,
    SERVICE_AUTH_MODE: 'disabled',
    SERVICE_WORKERS: '2',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...opts.env,
  });
  const level = opts.logLevel ?? process.env.TEST_LOG_LEVEL ?? 'silent';
  const log = opts.logStream ? pino({ level }, opts.logStream) : pino({ level });
  const service = await startService(config, log, { extraRoutes: opts.extraRoutes, printBootstrapSecret: opts.printBootstrapSecret ?? (() => undefined) });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await service.stop(2_000);
  };
  t.teardown(async () => {
    await stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  return { url: `http://127.0.0.1:${service.http.port}`, service, dataDir, databaseUrl, stop };
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed losslessly (int64 beyond 2^53 as bigint); undefined when not JSON. */
  json: unknown;
}

/** A real HTTP request; bodies that are not strings or buffers are sent as JSON. */
export async function request(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string | Uint8Array } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | Uint8Array | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = stringifyJson(init.body); // the service's own lossless writer: bigint as exact digits
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
  const buf = new Uint8Array(await res.arrayBuffer());
  const text = Buffer.from(buf).toString('utf8');
  let json: unknown;
  if ((res.headers.get('content-type') ?? '').includes('json') && buf.byteLength > 0) json = parseJson(buf);
  return { status: res.status, headers: res.headers, text, json };
}
