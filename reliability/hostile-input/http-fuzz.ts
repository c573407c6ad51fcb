// The hostile-input fuzz over HTTP: every operation of the router, requests generated from
// its schemas and mutated (mutations.ts), sent over real HTTP to a running service, each
// answer judged against the contract (oracle.ts). Counts what users are promised never
// happens: a 5xx other than the spec's 503s, a hang, an error that is not an ErrorEnvelope
// (code, error text, the field named for a 400), and an invalid request answered 2xx.
import fc from 'fast-check';
import { request as httpRequest, Agent } from 'node:http';
import { appendFileSync } from 'node:fs';
import type { AnyRoute } from '../../src/http/route.js';
import { ERROR_CODES } from '../../src/errors.js';
import { parseJson } from '../../src/json/json.js';
import { hostileRequestArbitrary, type HostileRequest } from './mutations.js';
import { ContractOracle, type Verdict } from './oracle.js';
import type { IdPool } from './schema-arbitrary.js';

export interface FuzzOptions {
  url: string;
  /** Sent with every request (an administrator's bearer token), so requests reach validation and handlers. */
  authorization: string;
  routes: AnyRoute[];
  bodyLimit: number;
  /** Stop after this many requests, or after `durationMs`, whichever comes first. */
  count: number;
  durationMs?: number;
  seed: number;
  concurrency?: number;
  /** A request with no complete answer after this long is a hang. */
  timeoutMs?: number;
  /** Ids never reused in generated requests: the fuzz's own credential, grant and principal. */
  protectedIds?: Set<string>;
  /** Operations left out (by "METHOD /path"), each with the reason printed in the report. */
  skip?: Map<string, string>;
  /**
   * A file each request is appended to (synchronously) before it is sent: when a request
   * freezes the service's event loop (the service runs in the harness's process), the last
   * lines name it.
   */
  traceFile?: string;
}

export type FindingKind = '5xx' | 'hang' | 'bad-envelope' | 'invalid-accepted' | 'other-field-named';

export interface Finding {
  kind: FindingKind;
  operation: string;
  area: string;
  mutation: string;
  target?: string;
  request: { method: string; url: string; headers: Record<string, string>; body?: string };
  status: number | null;
  answer: string;
  detail: string;
}

export interface FuzzFigures {
  sent: number;
  fiveXx: number;
  unavailable503: number;
  hangs: number;
  /** Heads over 4 KiB the server closed without an answer: uWS's documented limit (src/http/request-limits.ts). */
  headResets: number;
  badEnvelopes: number;
  invalidAccepted: number;
  /** 400s whose details.errors name neither the mutated member nor one of its ancestors (informative). */
  otherFieldNamed: number;
  validAnswered2xx: number;
  byStatus: Record<string, number>;
  byMutation: Record<string, number>;
  byArea: Record<string, { sent: number; findings: number }>;
  operations: number;
  seconds: number;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CODES_503 = new Set(Object.entries(ERROR_CODES).filter(([, v]) => v.status === 503).map(([k]) => k));
const POOL_MAX = 400;
/** uWS closes a connection whose head it cannot buffer, without an answer (documented in src/http/request-limits.ts and the README). */
const UWS_BUFFERED_HEAD_BYTES = 4096;

interface Answer { status: number; contentType: string; body: Buffer; streaming: boolean }

function send(agent: Agent, base: URL, req: HostileRequest, authorization: string, timeoutMs: number): Promise<Answer | 'hang' | Error> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { authorization, ...req.headers };
    if (req.body !== undefined) headers['content-length'] = String(req.body.byteLength);
    let done = false;
    const finish = (v: Answer | 'hang' | Error) => { if (!done) { done = true; clearTimeout(timer); resolve(v); } };
    const r = httpRequest({
      agent, host: base.hostname, port: base.port, method: req.method,
      path: req.path + (req.query ? `?${req.query}` : ''), headers,
    }, (res) => {
      const contentType = String(res.headers['content-type'] ?? '');
      // A subscription that was accepted streams forever: its status and headers are the answer.
      if (contentType.startsWith('text/event-stream')) {
        finish({ status: res.statusCode ?? 0, contentType, body: Buffer.alloc(0), streaming: true });
        res.destroy();
        return;
      }
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => finish({ status: res.statusCode ?? 0, contentType, body: Buffer.concat(parts), streaming: false }));
      res.on('error', (e) => finish(e));
    });
    const timer = setTimeout(() => { r.destroy(); finish('hang'); }, timeoutMs);
    r.on('error', (e) => finish(e));
    r.end(req.body === undefined ? undefined : Buffer.from(req.body));
  });
}

/** Why an error answer is not an ErrorEnvelope, or null when it is one. */
export function envelopeProblem(a: Answer): string | null {
  if (!a.contentType.includes('json')) return `content-type ${a.contentType || 'none'}`;
  let v: unknown;
  try { v = parseJson(a.body); } catch { return 'body is not JSON'; }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'body is not an object';
  const e = v as { code?: unknown; error?: unknown; correlation_id?: unknown; details?: { errors?: unknown } };
  if (typeof e.code !== 'string' || !(e.code in ERROR_CODES)) return `code ${String(e.code)} is not in the error table`;
  if (typeof e.error !== 'string' || e.error === '') return 'no error text';
  if (typeof e.correlation_id !== 'string' || !UUID_RE.test(e.correlation_id)) return 'no correlation_id';
  const status = ERROR_CODES[e.code as keyof typeof ERROR_CODES].status;
  if (status !== a.status) return `code ${e.code} belongs to ${status}, answered ${a.status}`;
  if (e.code === 'invalid-request') {
    const errors = e.details?.errors;
    if (!Array.isArray(errors) || errors.length === 0) return 'invalid-request without details.errors';
    for (const f of errors) {
      if (!f || typeof (f as { field?: unknown }).field !== 'string' || (f as { field: string }).field === '' || typeof (f as { problem?: unknown }).problem !== 'string') return 'details.errors entry without field and problem';
    }
  }
  return null;
}

function namedFields(a: Answer): string[] {
  try {
    const e = parseJson(a.body) as { details?: { errors?: Array<{ field: string }> } };
    return (e.details?.errors ?? []).map((x) => x.field);
  } catch { return []; }
}

/** Ids in a successful answer, reused by later requests so handlers get past "not found". */
function harvest(body: Buffer, pool: IdPool, protectedIds: Set<string>): void {
  let v: unknown;
  try { v = parseJson(body); } catch { return; }
  const walk = (x: unknown, key: string, depth: number): void => {
    if (depth > 5) return;
    if (typeof x === 'string') {
      if (UUID_RE.test(x) && !protectedIds.has(x) && !pool.uuids.includes(x)) pool.uuids.push(x);
      else if (/(^|_)id$/.test(key) && /^[1-9][0-9]{0,18}$/.test(x) && !pool.int64Ids.includes(x)) pool.int64Ids.push(x);
    } else if ((typeof x === 'number' || typeof x === 'bigint') && /(^|_)id$/.test(key) && x > 0 && !pool.int64Ids.includes(String(x))) pool.int64Ids.push(String(x));
    else if (Array.isArray(x)) x.slice(0, 20).forEach((y) => walk(y, key, depth + 1));
    else if (x && typeof x === 'object') for (const [k, y] of Object.entries(x)) walk(y, k, depth + 1);
  };
  walk(v, '', 0);
  if (pool.uuids.length > POOL_MAX) pool.uuids.splice(0, pool.uuids.length - POOL_MAX);
  if (pool.int64Ids.length > POOL_MAX) pool.int64Ids.splice(0, pool.int64Ids.length - POOL_MAX);
}

const clip = (s: string, n = 600) => (s.length > n ? `${s.slice(0, n)}... (${s.length} characters)` : s);

export async function runHttpFuzz(o: FuzzOptions): Promise<{ figures: FuzzFigures; findings: Finding[] }> {
  const base = new URL(o.url);
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency ?? 3 });
  const oracle = new ContractOracle(o.routes, o.bodyLimit);
  const pool: IdPool = { uuids: [], int64Ids: [] };
  const protectedIds = o.protectedIds ?? new Set<string>();
  const routes = o.routes.filter((r) => !o.skip?.has(`${r.method.toUpperCase()} ${r.path}`));
  const arbitraries = routes.map((r) => hostileRequestArbitrary(r, pool));
  // Requests are drawn in batches per operation, each batch from its own seed: a run is
  // reproducible from --seed, and later batches reuse ids harvested from earlier answers.
  const queues = routes.map(() => [] as HostileRequest[]);
  const refills = routes.map(() => 0);
  const next = (k: number): HostileRequest => {
    if (queues[k].length === 0) {
      queues[k] = fc.sample(arbitraries[k], { seed: (o.seed * 7919 + k * 104729 + refills[k]++ * 1299709) | 0, numRuns: 6 });
    }
    return queues[k].shift() as HostileRequest;
  };
  const figures: FuzzFigures = {
    sent: 0, fiveXx: 0, unavailable503: 0, hangs: 0, headResets: 0, badEnvelopes: 0, invalidAccepted: 0, otherFieldNamed: 0, validAnswered2xx: 0,
    byStatus: {}, byMutation: {}, byArea: {}, operations: routes.length, seconds: 0,
  };
  const findings: Finding[] = [];
  const started = Date.now();
  const deadline = o.durationMs ? started + o.durationMs : Infinity;
  let issued = 0;

  const one = async (): Promise<void> => {
    const i = issued++;
    const route = routes[i % routes.length];
    const req = next(i % routes.length);
    if (route.idempotency && req.headers['idempotency-key'] === undefined && i % 3 !== 0) {
      req.headers['idempotency-key'] = `fuzz-${o.seed}-${i}`;
      if (req.base) req.base.headers['idempotency-key'] = `fuzz-${o.seed}-${i}`;
    }
    const verdict: Verdict = await oracle.verdict(route, req);
    if (o.traceFile) appendFileSync(o.traceFile, `${JSON.stringify({ i, operation: req.operation, mutation: req.mutation, target: req.target, url: clip(req.path + (req.query ? `?${req.query}` : ''), 300), headers: req.headers, body: req.body ? clip(Buffer.from(req.body).toString('utf8'), 2000) : undefined })}\n`);
    const answer = await send(agent, base, req, o.authorization, o.timeoutMs ?? 15_000);
    figures.sent++;
    figures.byMutation[req.mutation] = (figures.byMutation[req.mutation] ?? 0) + 1;
    const area = (figures.byArea[route.area] ??= { sent: 0, findings: 0 });
    area.sent++;
    const record = (kind: FindingKind, status: number | null, answerText: string, detail: string) => {
      area.findings++;
      if (findings.filter((f) => f.operation === req.operation && f.kind === kind && f.mutation === req.mutation).length >= 3) return;
      findings.push({
        kind, operation: req.operation, area: route.area, mutation: req.mutation, target: req.target, status, answer: clip(answerText), detail,
        request: { method: req.method, url: clip(req.path + (req.query ? `?${req.query}` : '')), headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, clip(v, 100)])), body: req.body ? clip(Buffer.from(req.body).toString('utf8')) : undefined },
      });
    };
    if (answer === 'hang') { figures.hangs++; record('hang', null, '', `no complete answer in ${o.timeoutMs ?? 15_000} ms`); return; }
    if (answer instanceof Error) {
      const headBytes = req.path.length + req.query.length + Object.entries(req.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
      if (headBytes > UWS_BUFFERED_HEAD_BYTES) { figures.headResets++; return; }
      // The server closed the connection without an answer: a hang as far as a client can tell.
      figures.hangs++;
      record('hang', null, '', `connection ended without an answer: ${answer.message}`);
      return;
    }
    figures.byStatus[answer.status] = (figures.byStatus[answer.status] ?? 0) + 1;
    const text = answer.body.toString('utf8');
    if (answer.status >= 500) {
      const code = (() => { try { return (parseJson(answer.body) as { code?: string }).code; } catch { return undefined; } })();
      if (answer.status === 503 && code && CODES_503.has(code)) figures.unavailable503++;
      else { figures.fiveXx++; record('5xx', answer.status, text, `verdict ${verdict.kind}`); }
    }
    if (answer.status >= 400) {
      const problem = envelopeProblem(answer);
      if (problem) { figures.badEnvelopes++; record('bad-envelope', answer.status, text, problem); }
      else if (answer.status === 400 && req.target && /^(path|query|body)\./.test(req.target) && verdict.kind === 'invalid'
        && req.base && (await oracle.verdict(route, req.base)).kind === 'valid') {
        const fields = namedFields(answer);
        const t = req.target;
        if (fields.length && !fields.some((f) => t.startsWith(f) || f.startsWith(t))) {
          figures.otherFieldNamed++;
          record('other-field-named', answer.status, text, `mutated ${t}, the 400 names ${fields.join(', ')}`);
        }
      }
    } else if (answer.status < 400 && !answer.streaming && answer.status !== 101) {
      harvest(answer.body, pool, protectedIds);
    }
    if (answer.status >= 200 && answer.status < 300) {
      if (verdict.kind === 'invalid') { figures.invalidAccepted++; record('invalid-accepted', answer.status, text, verdict.why); }
      if (verdict.kind === 'valid') figures.validAnswered2xx++;
    }
  };

  const worker = async () => {
    while (issued < o.count && Date.now() < deadline) await one();
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 3 }, worker));
  agent.destroy();
  figures.seconds = (Date.now() - started) / 1000;
  return { figures, findings };
}

/** The figures as the table the report and docs/reliability.md quote. */
export function figuresTable(f: FuzzFigures): string {
  const rows: Array<[string, string | number]> = [
    ['operations', f.operations], ['requests sent', f.sent], ['5xx (other than the spec\'s 503s)', f.fiveXx], ['503 with a 503 code', f.unavailable503],
    ['hangs', f.hangs], ['heads over 4 KiB reset by uWS (documented)', f.headResets], ['bad envelopes', f.badEnvelopes], ['invalid accepted', f.invalidAccepted],
    ['valid requests answered 2xx', f.validAnswered2xx], ['400s naming another member than the one mutated', f.otherFieldNamed], ['seconds', f.seconds.toFixed(1)],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')
    + `\nby status: ${Object.entries(f.byStatus).map(([k, v]) => `${k}=${v}`).join(' ')}`
    + `\nby area: ${Object.entries(f.byArea).map(([k, v]) => `${k}=${v.sent}${v.findings ? ` (${v.findings} findings)` : ''}`).join(', ')}`;
}
