// Configuration comes from the environment only (see `npm start -- --help`); every
// variable has a default that works on a laptop. Parsed once at start and validated, so
// a typo fails the start with a message rather than later with a surprise.
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { INGEST_VARIABLES, loadIngestConfig, type IngestConfig } from './ingest-config.js';

/** How authorization is applied: checked, checked and only logged, or off (every request is the local administrator). */
export type AuthMode = 'enforced' | 'shadow' | 'disabled';

export interface Config {
  host: string;
  httpPort: number;
  grpcPort: number;
  dataDir: string;
  databaseUrl: string | undefined;
  authMode: AuthMode;
  adminPassword: string | undefined;
  workers: number;
  /** Largest JSON request body in bytes. */
  bodyLimit: number;
  /** Largest annotation attachment upload in bytes (streamed to disk, never buffered whole). */
  attachmentMaxBytes: number;
  logLevel: string;
  /** Behind a TLS-terminating proxy that sets X-Forwarded-Proto (cookies get Secure). */
  trustProxy: boolean;
  /** Origins (`scheme://host[:port]`) whose browser pages may change state with the session cookie (src/auth/csrf.ts). */
  trustedOrigins: ReadonlySet<string>;
  /** Collector ingest (src/ingest/ingest-config.ts). */
  ingest: IngestConfig;
  oidc: { issuer: string; clientId: string; clientSecret: string | undefined; redirectUri: string; portalUrl: string; defaultRole: string } | undefined;
}

export const CONFIG_VARIABLES: Array<{ name: string; default: string; meaning: string }> = [
  { name: 'SERVICE_HOST', default: '127.0.0.1', meaning: 'listen address for HTTP and gRPC' },
  { name: 'SERVICE_HTTP_PORT', default: '8080', meaning: 'REST port (0 picks a free one)' },
  { name: 'SERVICE_GRPC_PORT', default: '8081', meaning: 'collector stream port (0 picks a free one)' },
  { name: 'SERVICE_DATA_DIR', default: './data', meaning: 'LMDB environment and the embedded model' },
  { name: 'DATABASE_URL', default: '(unset)', meaning: 'Postgres for the model; unset means embedded PGlite under the data directory' },
  { name: 'SERVICE_AUTH_MODE', default: 'enforced', meaning: 'enforced, shadow or disabled' },
  { name: 'SERVICE_ADMIN_PASSWORD', default: '(unset)', meaning: 'password of the bootstrap principal "admin" on first start; generated and written to <data dir>/initial-admin-password when unset' },
  { name: 'SERVICE_WORKERS', default: 'cores', meaning: 'read worker pool size' },
  { name: 'SERVICE_BODY_LIMIT', default: '4194304', meaning: 'largest JSON request body in bytes (413 beyond it)' },
  { name: 'SERVICE_ATTACHMENT_MAX_BYTES', default: '134217728', meaning: 'largest annotation attachment upload in bytes (413 beyond it); uploads stream to <data dir>/attachments' },
  { name: 'SERVICE_LOG_LEVEL', default: 'info', meaning: 'pino level: fatal, error, warn, info, debug, trace, silent' },
  { name: 'SERVICE_TRUST_PROXY', default: 'false', meaning: 'trust X-Forwarded-Proto from a TLS-terminating proxy (session cookies get Secure)' },
  { name: 'SERVICE_TRUSTED_ORIGINS', default: '(none)', meaning: 'comma-separated origins (scheme://host[:port]) besides the service itself whose browser pages may send state-changing requests with the session cookie, e.g. a portal on another host' },
  { name: 'SERVICE_OIDC_ISSUER', default: '(unset)', meaning: 'OpenID Connect issuer URL; setting it enables the oidc login method' },
  { name: 'SERVICE_OIDC_CLIENT_ID', default: '(unset)', meaning: 'OIDC client id' },
  { name: 'SERVICE_OIDC_CLIENT_SECRET', default: '(unset)', meaning: 'OIDC client secret (confidential clients)' },
  { name: 'SERVICE_OIDC_REDIRECT_URI', default: 'http://<host>:<port>/v1/auth/callback', meaning: 'redirect URI registered with the provider' },
  { name: 'SERVICE_PORTAL_URL', default: '/', meaning: 'where the OIDC callback sends the browser after login' },
  { name: 'SERVICE_OIDC_DEFAULT_ROLE', default: 'viewer', meaning: 'built-in role granted everywhere to a principal created at first OIDC login' },
  ...INGEST_VARIABLES,
];

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

/** SERVICE_TRUSTED_ORIGINS: comma-separated origins, kept in the form browsers send in `Origin`. */
function trustedOrigins(raw: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const piece of (raw ?? '').split(',')) {
    const s = piece.trim();
    if (s === '') continue;
    let u: URL | null = null;
    try { u = new URL(s); } catch { /* reported below */ }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.pathname !== '/' || u.search || u.hash || u.username) {
      throw new ConfigError(`SERVICE_TRUSTED_ORIGINS: "${s}" is not an origin (scheme://host[:port], no path)`);
    }
    out.add(u.origin);
  }
  return out;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const authMode = (env.SERVICE_AUTH_MODE || 'enforced') as AuthMode;
  if (!['enforced', 'shadow', 'disabled'].includes(authMode)) {
    throw new ConfigError(`SERVICE_AUTH_MODE must be enforced, shadow or disabled, got "${env.SERVICE_AUTH_MODE}"`);
  }
  const host = env.SERVICE_HOST || '127.0.0.1';
  const httpPort = int(env, 'SERVICE_HTTP_PORT', 8080, 0, 65535);
  const issuer = env.SERVICE_OIDC_ISSUER || undefined;
  if (issuer && !env.SERVICE_OIDC_CLIENT_ID) throw new ConfigError('SERVICE_OIDC_CLIENT_ID is required when SERVICE_OIDC_ISSUER is set');
  return {
    host,
    httpPort,
    grpcPort: int(env, 'SERVICE_GRPC_PORT', 8081, 0, 65535),
    dataDir: resolve(env.SERVICE_DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    authMode,
    adminPassword: env.SERVICE_ADMIN_PASSWORD || undefined,
    workers: int(env, 'SERVICE_WORKERS', Math.max(1, availableParallelism()), 1, 256),
    bodyLimit: int(env, 'SERVICE_BODY_LIMIT', 4 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    attachmentMaxBytes: int(env, 'SERVICE_ATTACHMENT_MAX_BYTES', 128 * 1024 * 1024, 1, 64 * 1024 * 1024 * 1024),
    logLevel: env.SERVICE_LOG_LEVEL || 'info',
    trustProxy: env.SERVICE_TRUST_PROXY === 'true' || env.SERVICE_TRUST_PROXY === '1',
    trustedOrigins: trustedOrigins(env.SERVICE_TRUSTED_ORIGINS),
    ingest: loadIngestConfig(env, (m) => new ConfigError(m)),
    oidc: issuer ? {
      issuer,
      clientId: env.SERVICE_OIDC_CLIENT_ID as string,
      clientSecret: env.SERVICE_OIDC_CLIENT_SECRET || undefined,
      redirectUri: env.SERVICE_OIDC_REDIRECT_URI || `http://${host}:${httpPort}/v1/auth/callback`,
      portalUrl: env.SERVICE_PORTAL_URL || '/',
      defaultRole: env.SERVICE_OIDC_DEFAULT_ROLE || 'viewer',
    } : undefined,
  };
}

export function helpText(): string {
  const w = Math.max(...CONFIG_VARIABLES.map((v) => v.name.length));
  return [
    'historian: industrial time-series model and storage service',
    '',
    'Usage: npm start            (or: node dist/main.js)',
    '',
    'Configuration is read from the environment:',
    ...CONFIG_VARIABLES.map((v) => `  ${v.name.padEnd(w)}  ${v.meaning} [default: ${v.default}]`),
    '',
  ].join('\n');
}
