// Calculation benchmark: the issue 27 figures on this machine, in one process (the service,
// its collector and the measuring code share the event loop, so figures are pessimistic).
//   node --import tsx bench/calc.ts [--assets 10000] [--seconds 20] [--days 365] [--json]
//     [--skip-evaluation] [--skip-latency] [--skip-backfill] [--timeline <file>] [--record-interval-ms <ms>] [--warm-seconds 5] [--phases 1] [--stream-batches] [--cpu-prof-sends <file>]
// 1. Compiled evaluation of `a * b + c` (calc-language's bench/calc-evaluation.ts).
// 2. Event-trigger latency: one template rule (Out = X * 2 + 1) over `assets` assets (made
//    by bulk-instantiate and bulk-bind model jobs), a collector in a process of its own
//    sending one point a second to each asset's X (one scan per phase, --phases) for `seconds` s; the figure is the time
//    from the input group's durability (the collector's ack follows it at once) to the
//    output's durable write, per evaluation from the oldest input it waited on (p50, p95,
//    p99; and again over the evaluations recorded after the first --warm-seconds of sends,
//    which leaves out the first outputs of the new series), whether the outputs kept up (ingest
//    acknowledged the inputs as fast as they were sent, the backlog of points acked but not yet evaluated,
//    sampled each second, does not grow, and drains within 1 s of the last input), the
//    engine's evaluate and write-wait time per second, and the load average.
// 3. Backfill of one rule (B - A) over `days` days of 1-second data from two inputs written
//    straight into storage: preview time, then commit time (wall, and the process's CPU seconds).
// 4. A late input point: time from its ack to the corrected output being durable.
// Inputs are generated from a fixed seed before timing.
import { execSync, fork, type ChildProcess } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { PerformanceObserver, monitorEventLoopDelay, type PerformanceEntry } from 'node:perf_hooks';
import { pino } from 'pino';
import { loadConfig } from '../src/config/config.js';
import { startService, type RunningService } from '../src/service.js';
import { CollectorClient } from '../src/collector/collector-client.js';
import { readRaw } from '../src/storage/series-store.js';
import { nowNs } from '../src/clock.js';
import { request } from '../test/helpers/service.js';
import { runCalcEvaluationBench } from './calc-evaluation.js';
import { mulberry32 } from './seeded-random.js';
import { benchDatabase } from './bench-database.js';
import { BatchTimeline, type BatchTimes } from '../src/calc/engine/batch-timeline.js';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
const ASSETS = opt('assets', 10_000), SECONDS = opt('seconds', 20), DAYS = opt('days', 365);
const JSON_OUT = args.includes('--json');
/** --timeline <file>: every live batch's times (and GC pauses) written there as JSON, for a look at the tail. */
const TIMELINE_FILE = (() => { const i = args.indexOf('--timeline'); return i >= 0 ? args[i + 1] : null; })();
const SEC = 1_000_000_000n;
/** Seconds of sends after which the latency is also reported on its own (latency_after_<n>s_*). */
const WARM_S = opt('warm-seconds', 5);
/**
 * --phases N: the assets' points of a second go out in N groups spread over it (group g at
 * g/N of the second, its timestamps likewise), as independent collectors and scan cycles
 * offer them; 1 (the default) sends all 10,000 at the same instant, the worst case.
 */
const PHASES = Math.max(1, Math.floor(opt('phases', 1)));
/**
 * --stream-batches: each input point goes out as a batch of its own stream (10,000 batches a
 * second), as before the collector protocol had scans; by default each phase's points go out
 * as one scan (DataBatch.streams), as a collector reading its tags once a second sends them.
 */
const STREAM_BATCHES = args.includes('--stream-batches');
/** --cpu-prof-sends <file>: a CPU profile of the main thread (the engine, its writes) over the sends, written there. */
const PROF_FILE = (() => { const i = args.indexOf('--cpu-prof-sends'); return i >= 0 ? args[i + 1] : null; })();
const figures: Record<string, number | string | null> = {};
const r1 = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
/** CPU seconds of this process (every thread) since `from`: on a loaded box, closer to the work than wall time. */
const cpuSeconds = (from: NodeJS.CpuUsage) => { const u = process.cpuUsage(from); return (u.user + u.system) / 1e6; };
/**
 * CPU seconds of the PostgreSQL backends serving this process's bench databases (model
 * statements: progress, lineage), sampled each second per backend (~1 % of the main thread): the pool closes idle
 * connections, and a backend gone between samples would take its ticks with it.
 */
class PostgresCpu {
  private readonly first = new Map<string, number>();
  private readonly last = new Map<string, number>();
  private started = false;
  private readonly timer = setInterval(() => this.sample(), 1000);
  constructor() { this.sample(); }
  private sample(): void {
    for (const d of readdirSync('/proc')) {
      if (!/^[0-9]+$/.test(d)) continue;
      try {
        if (!readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(`bench_calc_${process.pid}_`)) continue;
        const f = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ');
        const ticks = Number(f[11]) + Number(f[12]);
        // a backend first seen after the start counts from zero
        if (!this.last.has(d)) this.first.set(d, this.started ? 0 : ticks);
        this.last.set(d, ticks);
      } catch { /* gone meanwhile */ }
    }
    this.started = true;
  }
  /** Seconds since construction; stops the sampling. */
  stop(): number {
    this.sample();
    clearInterval(this.timer);
    let ticks = 0;
    for (const [d, t] of this.last) ticks += t - (this.first.get(d) ?? 0);
    return ticks / 100;
  }
}
/**
 * CPU ms by thread kind (ingest-worker, read-worker, ...; threads of one kind summed) from the
 * service's per-thread reports, when HISTORIAN_HEAP_REPORT names their directory (heap-report.ts;
 * written once a second, so each figure lags by up to a second); empty otherwise.
 */
function threadCpuMs(): Map<string, number> {
  const out = new Map<string, number>();
  const dir = process.env.HISTORIAN_HEAP_REPORT;
  if (!dir) return out;
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.json')) continue;
    const r = JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')) as { name: string; cpu_ms: number };
    out.set(r.name, (out.get(r.name) ?? 0) + r.cpu_ms);
  }
  return out;
}
/** CPU seconds of the main thread alone (its task's utime + stime, in clock ticks of 10 ms). */
const mainThreadCpuSeconds = () => { const f = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) / 100; };

/** A service on a fresh model database (benchDatabase: a new PostgreSQL database when DATABASE_URL is set, else PGlite), dropped by `drop`. */
async function service(): Promise<{ svc: RunningService; url: string; drop: () => Promise<void> }> {
  const db = await benchDatabase('calc', { pglite: !process.env.DATABASE_URL });
  const config = loadConfig({ SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: '0', SERVICE_GRPC_PORT: '0', SERVICE_DATA_DIR: db.dataDir, SERVICE_AUTH_MODE: 'disabled', ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}) });
  const svc = await startService(config, pino({ level: 'warn' }), { printBootstrapSecret: () => undefined });
  return { svc, url: `http://127.0.0.1:${svc.http.port}`, drop: () => db.drop() };
}

async function api<T>(url: string, method: string, path: string, body?: unknown): Promise<T> {
  const r = await request(url + path, { method, body });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.json as T;
}

const def = (name: string, writer = 'collector') => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'stepped', writer_class: writer, enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] });

async function plant(url: string, inputs: string[], assets: number): Promise<{ templateId: string; defs: Record<string, string>; attrs: Array<Record<string, string>>; assetIds: string[] }> {
  const tpl = await api<{ template_id: string; attributes: Array<[string, { name: string }]> }>(url, 'POST', '/v1/model/templates', { name: `T${inputs.join('')}`, attributes: [...inputs.map((n) => def(n)), def('Out', 'calculation')] });
  const root = await api<{ asset_id: string }>(url, 'POST', '/v1/model/assets', { name: `Site${inputs.join('')}` });
  const assetIds: string[] = [];
  for (let i = 0; i < assets; i++) assetIds.push((await api<{ asset_id: string }>(url, 'POST', '/v1/model/assets', { name: `A${i}`, parent: root.asset_id, template_id: tpl.template_id })).asset_id);
  const res = (await api<{ results: Array<{ attribute_id: string; asset_id: string; name: string }> }>(url, 'POST', '/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: root.asset_id } } })).results;
  const byAsset = new Map<string, Record<string, string>>();
  for (const r of res) { const m = byAsset.get(r.asset_id) ?? {}; m[r.name] = r.attribute_id; byAsset.set(r.asset_id, m); }
  return { templateId: tpl.template_id, defs: Object.fromEntries(tpl.attributes.map(([id, d]) => [d.name, id])), attrs: assetIds.map((a) => byAsset.get(a) as Record<string, string>), assetIds };
}

async function evaluationFigure(): Promise<void> {
  const f = await runCalcEvaluationBench({});
  figures.evaluation_points_per_input = f.points_per_input;
  for (const c of f.cases) {
    for (const [k, v] of Object.entries(c)) if (typeof v === 'number') figures[`evaluation_${String(c.name).replace(/[^a-z0-9]+/gi, '_')}_${k}`] = v;
  }
}

/** Runs a model job (bulk-instantiate, bulk-bind) to the end: preview, then commit. */
async function modelJob(url: string, kind: string, params: unknown): Promise<void> {
  const job = await api<{ job_id: string; preview: { skipped?: unknown[] } }>(url, 'POST', '/v1/model/jobs', { kind, params });
  if ((job.preview.skipped?.length ?? 0) > 0) throw new Error(`${kind} skipped ${job.preview.skipped?.length}: ${JSON.stringify(job.preview.skipped?.slice(0, 3))}`);
  await api(url, 'POST', `/v1/model/jobs/${job.job_id}/commit`);
}

/**
 * The event-trigger plant in bulk: one template, `assets` assets made by bulk-instantiate
 * jobs (5,000 each), a collector stream per asset named `A<i>.X` (opened by the sender
 * process), and one bulk-bind job binding every stream to its asset's X by that name.
 */
async function eventPlant(url: string, assets: number, sender: Sender) {
  const tpl = await api<{ template_id: string; attributes: Array<[string, { name: string }]> }>(url, 'POST', '/v1/model/templates', { name: 'TEvent', attributes: [def('X'), def('Out', 'calculation')] });
  await api(url, 'POST', '/v1/model/assets', { name: 'SiteEvent' });
  let t = Date.now();
  const phase = (name: string) => { figures[`latency_setup_${name}_s`] = r1((Date.now() - t) / 1000); t = Date.now(); };
  for (let i = 0; i < assets; i += 5000) {
    const list = [];
    for (let k = i; k < Math.min(assets, i + 5000); k++) list.push({ parent: '/SiteEvent', name: `A${k}` });
    await modelJob(url, 'bulk-instantiate', { template_id: tpl.template_id, assets: list });
  }
  phase('assets');
  await sender.ask({ kind: 'connect' }, 'connected');
  phase('streams');
  await modelJob(url, 'bulk-bind', { pattern: 'bench/{asset}.{attribute}', under: '/SiteEvent' });
  phase('bindings');
  const defs = Object.fromEntries(tpl.attributes.map(([id, d]) => [d.name, id]));
  return { templateId: tpl.template_id, outDef: defs.Out as string };
}

/**
 * The collector runs in a process of its own (as collectors do): sending 10,000 batches a
 * second from the service's own event loop measured the sender, not the engine.
 */
interface SenderMessage { kind: string; sent?: number; second?: number; error?: string; cpu_s?: number; offered_s?: number; late_ms?: number }
class Sender {
  private readonly waiting = new Map<string, (m: SenderMessage) => void>();
  /** Points acknowledged, as the sender last reported. */
  sent = 0;
  onSecond: (m: SenderMessage) => void = () => undefined;
  private constructor(private readonly proc: ChildProcess) {
    proc.on('message', (m: SenderMessage) => {
      if (m.kind === 'second') { this.sent = m.sent ?? this.sent; this.onSecond(m); return; }
      const w = this.waiting.get(m.kind) ?? this.waiting.get('*');
      if (m.kind === 'error') for (const f of this.waiting.values()) f(m);
      else w?.(m);
    });
  }
  static start(port: number, assets: number): Sender {
    const proc = fork(new URL(import.meta.url).pathname, ['--role', 'sender', '--port', String(port), '--assets', String(assets), '--phases', String(PHASES), ...(STREAM_BATCHES ? ['--stream-batches'] : [])], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Sender(proc);
  }
  ask(msg: Record<string, unknown>, reply: string): Promise<SenderMessage> {
    return new Promise((res, rej) => {
      const done = (m: SenderMessage) => { this.waiting.delete(reply); this.waiting.delete('error'); if (m.kind === 'error') rej(new Error(`sender: ${m.error}`)); else res(m); };
      this.waiting.set(reply, done);
      this.waiting.set('error', done);
      this.proc.send(msg);
    });
  }
  stop(): void { this.proc.kill(); }
}

/** The sender process: opens the streams, then sends one point per stream each second for `seconds` s. */
async function senderRole(): Promise<void> {
  const port = opt('port', 0);
  let collector: CollectorClient | null = null;
  const fail = (e: unknown) => process.send?.({ kind: 'error', error: e instanceof Error ? e.message : String(e) });
  process.on('message', (m: { kind: string; seconds?: number; start_ns?: string }) => {
    void (async () => {
      if (m.kind === 'connect') {
        collector = await CollectorClient.connect({ address: `127.0.0.1:${port}`, collectorId: 'bench', epoch: 1n, streams: Array.from({ length: ASSETS }, (_, i) => ({ name: `A${i}.X`, type: 'float64' as const })) });
        setInterval(() => collector?.heartbeat(), 10_000).unref();
        process.send?.({ kind: 'connected' });
      } else if (m.kind === 'send' && collector) {
        const c = collector;
        const r = mulberry32(7);
        const start = BigInt(m.start_ns as string);
        const seconds = m.seconds as number;
        let sent = 0;
        const cpu0 = process.cpuUsage();
        // Open loop, as collectors send: second s's points go out at t0 + s seconds whether or
        // not the earlier seconds are acknowledged yet. Waiting for each second's acks before
        // the next (the first version) added the ack latency to every second, so under load
        // the bench offered ~8,100-8,400 of its 10,000 inputs a second.
        const t0 = performance.now();
        const all: Array<Promise<unknown>> = [];
        let lastStart = t0;
        const perPhase = Math.ceil(ASSETS / PHASES);
        for (let s = 0; s < seconds; s++) {
          const sends: Array<Promise<unknown>> = [];
          for (let g = 0; g < PHASES; g++) {
            const wait = t0 + s * 1000 + (g * 1000) / PHASES - performance.now();
            if (wait > 0) await new Promise((res) => setTimeout(res, wait));
            if (g === 0) lastStart = performance.now();
            const at = start + BigInt(s) * SEC + (BigInt(g) * SEC) / BigInt(PHASES);
            const lo = g * perPhase, hi = Math.min(ASSETS, (g + 1) * perPhase);
            if (STREAM_BATCHES) {
              for (let i = lo; i < hi; i++) {
                sends.push(c.send('LIVE', i, 'float64', { times: BigInt64Array.of(at), values: Float64Array.of(Math.round(r() * 1000)), quality: null }).then(() => { sent++; }));
              }
            } else if (hi > lo) {
              const streams = new Uint32Array(hi - lo), values = new Float64Array(hi - lo);
              for (let i = lo; i < hi; i++) { streams[i - lo] = i; values[i - lo] = Math.round(r() * 1000); }
              sends.push(c.sendScan('LIVE', streams, 'float64', { times: new BigInt64Array(hi - lo).fill(at), values, quality: null }).then((o) => {
                if (!o.ok) throw new Error(`scan rejected: ${o.reason} ${o.detail}`);
                sent += hi - lo;
              }));
            }
          }
          all.push(Promise.all(sends).then(() => process.send?.({ kind: 'second', second: s, sent })));
        }
        await Promise.all(all);
        // The pace offered: points over the time from the first second's sends to one second past the last's start.
        const offeredS = (lastStart - t0) / 1000 + 1;
        process.send?.({ kind: 'sent', sent, cpu_s: cpuSeconds(cpu0), offered_s: offeredS, late_ms: Math.round(lastStart - t0 - (seconds - 1) * 1000) });
      }
    })().catch(fail);
  });
}

async function latencyFigure(): Promise<void> {
  const { svc, url, drop } = await service();
  const sender = Sender.start(svc.context.parts.ingest.port, ASSETS);
  try {
    const ts = Date.now();
    const p = await eventPlant(url, ASSETS, sender);
    await api<{ rule_id: string }>(url, 'POST', '/v1/model/calc/rules', { name: 'out', scope: { template_id: p.templateId, output_attr_def_id: p.outDef }, tier: 'expression', trigger: { kind: 'event', debounce_ms: 0 }, unit_check: 'off', provisional: 'emit', expression: 'X * 2 + 1' });
    const engine = svc.context.parts.calc;
    // --record-interval-ms: the progress recorder's least interval (A/B of the interval; 0 records as soon as the last recording ends).
    if (args.includes('--record-interval-ms')) engine.recorder.intervalMs = opt('record-interval-ms', 1000);
    const tr = Date.now();
    await engine.reload();
    figures.latency_setup_rule_plan_s = r1((Date.now() - tr) / 1000);
    figures.latency_setup_s = r1((Date.now() - ts) / 1000);
    const tr2 = Date.now();
    await engine.reload();
    figures.latency_replan_s = r1((Date.now() - tr2) / 1000);
    engine.latency.reset();
    for (const r of Object.values(engine.latencyParts)) r.reset();
    const evalBefore = engine.evaluations;
    const timeline = new BatchTimeline();
    engine.timeline = timeline;
    const gcs: Array<{ at: number; ms: number; kind: number }> = [];
    const gcObserver = new PerformanceObserver((l) => { for (const e of l.getEntries()) gcs.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, kind: ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind) ?? 0 }); });
    gcObserver.observe({ entryTypes: ['gc'] });
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    // Backlog: points acknowledged less outputs written, sampled as each second's sends are acknowledged.
    const backlog: number[] = [];
    sender.onSecond = (m) => { backlog.push((m.sent ?? 0) - (engine.evaluations - evalBefore)); };
    const t0 = Date.now();
    // The evaluations recorded from WARM_S seconds into the sends on (the first outputs of
    // 10,000 new output series and the service's cold start before), for a figure beside the whole run's.
    let warmMark = -1;
    const warmTimer = setTimeout(() => { warmMark = engine.latency.count; }, WARM_S * 1000);
    const cpu0 = process.cpuUsage();
    const mainCpu0 = mainThreadCpuSeconds();
    const pgCpu = new PostgresCpu();
    const threads0 = threadCpuMs();
    const rec0 = { recordings: engine.recorder.recordings, rows: engine.recorder.rows, ms: engine.recorder.ms };
    const profiler = PROF_FILE ? new Session() : null;
    if (profiler) { profiler.connect(); await profiler.post('Profiler.enable'); await profiler.post('Profiler.start'); }
    const done = await sender.ask({ kind: 'send', seconds: SECONDS, start_ns: String(nowNs()) }, 'sent');
    if (profiler && PROF_FILE) { const { profile } = await profiler.post('Profiler.stop'); writeFileSync(PROF_FILE, JSON.stringify(profile)); profiler.disconnect(); }
    const sent = done.sent ?? 0;
    const elapsed = (Date.now() - t0) / 1000;
    const td = Date.now();
    await engine.idle(120_000);
    const drainMs = Date.now() - td;
    gcObserver.disconnect();
    loopDelay.disable();
    engine.timeline = null;
    timelineFigures(timeline.list(), gcs, elapsed);
    figures.latency_loop_delay_p99_ms = r1(loopDelay.percentile(99) / 1e6);
    figures.latency_loop_delay_max_ms = r1(loopDelay.max / 1e6);
    if (TIMELINE_FILE) writeFileSync(TIMELINE_FILE, JSON.stringify({ batches: timeline.list(), gcs }));
    const [p50, p95, p99, max] = engine.latency.percentiles([50, 95, 99, 100]);
    figures.latency_assets = ASSETS;
    figures.latency_phases = PHASES;
    figures.latency_input_batches = STREAM_BATCHES ? 'one per stream' : 'one scan per phase';
    figures.latency_seconds = SECONDS;
    // The pace the sender kept (it sends on a fixed schedule, not after acks), and how far its last second started late.
    figures.latency_inputs_per_s = r1(sent / (done.offered_s ?? elapsed));
    // From the first send to the last acknowledgement: past `seconds` when acks fell behind the sends.
    figures.latency_send_to_last_ack_s = r1(elapsed);
    figures.latency_sender_last_second_late_ms = done.late_ms ?? null;
    figures.latency_outputs = engine.evaluations - evalBefore;
    figures.latency_inputs = sent;
    figures.latency_p50_ms = r1(p50);
    figures.latency_p95_ms = r1(p95);
    figures.latency_p99_ms = r1(p99);
    figures.latency_max_ms = r1(max);
    clearTimeout(warmTimer);
    if (warmMark >= 0) {
      const [w50, w95, w99, wmax] = engine.latency.percentiles([50, 95, 99, 100], warmMark);
      figures[`latency_after_${WARM_S}s_p50_ms`] = r1(w50);
      figures[`latency_after_${WARM_S}s_p95_ms`] = r1(w95);
      figures[`latency_after_${WARM_S}s_p99_ms`] = r1(w99);
      figures[`latency_after_${WARM_S}s_max_ms`] = r1(wmax);
    }
    for (const [name, r] of Object.entries(engine.latencyParts)) {
      const [a, b] = r.percentiles([50, 99]);
      figures[`latency_${name}_p50_ms`] = r1(a);
      figures[`latency_${name}_p99_ms`] = r1(b);
    }
    figures.latency_sender_cpu_per_s = r1((done.cpu_s ?? 0) / elapsed);
    figures.latency_batches = engine.batches;
    figures.progress_recordings_per_s = r1((engine.recorder.recordings - rec0.recordings) / elapsed);
    figures.progress_rows_per_s = r1((engine.recorder.rows - rec0.rows) / elapsed);
    figures.progress_ms_per_s = r1((engine.recorder.ms - rec0.ms) / elapsed);
    figures.latency_engine_evaluate_ms_per_s = r1(engine.evaluateMs / elapsed);
    figures.latency_engine_write_wait_ms_per_s = r1(engine.writeWaitMs / elapsed);
    const cpu = cpuSeconds(cpu0);
    figures.latency_service_cpu_per_s = r1(cpu / elapsed);
    // CPU per input (every thread of the service, sending to drained): what load on the box does not change much.
    figures.latency_service_cpu_us_per_input = r1((cpu / Math.max(1, sent)) * 1e6);
    figures.latency_postgres_cpu_us_per_input = r1((pgCpu.stop() / Math.max(1, sent)) * 1e6);
    const mainUs = ((mainThreadCpuSeconds() - mainCpu0) / Math.max(1, sent)) * 1e6;
    let namedUs = mainUs;
    for (const [name, ms] of threadCpuMs()) {
      // A read worker asleep in Atomics.wait runs no timers, so its report is stale: it is counted in the rest.
      if (name === 'read-worker') continue;
      const us = ((ms - (threads0.get(name) ?? 0)) / Math.max(1, sent)) * 1e3;
      figures[`latency_thread_${name}_cpu_us_per_input`] = r1(us);
      namedUs += us;
    }
    figures.latency_main_thread_cpu_us_per_input = r1(mainUs);
    if (threads0.size > 0) figures.latency_other_threads_cpu_us_per_input = r1((cpu / Math.max(1, sent)) * 1e6 - namedUs);
    // Keeping up: ingest acknowledged the inputs at the pace they were sent (the last ack within
    // 2 s of the last second's sends: credit throttles a collector whose acks lag, and the
    // backlog below counts acknowledged inputs only), the second half's backlog is no larger than
    // the first half's (or than one second of inputs), and it drains within a second after the last input.
    const half = Math.floor(backlog.length / 2);
    const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
    figures.latency_backlog_first_half = r1(mean(backlog.slice(0, half)));
    figures.latency_backlog_second_half = r1(mean(backlog.slice(half)));
    figures.latency_drain_after_last_input_ms = drainMs;
    figures.latency_keeps_up = sent >= ASSETS * SECONDS && elapsed <= SECONDS + 2 && mean(backlog.slice(half)) <= Math.max(ASSETS, 1.2 * mean(backlog.slice(0, half))) && drainMs < 1000 ? 'yes' : 'no';
    figures.latency_loadavg = execSync('cat /proc/loadavg').toString().trim();
  } finally {
    sender.stop();
    await svc.stop(5_000);
    await drop();
  }
}

/**
 * Where the slowest batches' time went: the 1 % of batches with the longest oldest-ack ->
 * durable span, each split into queued (ack -> taken off the wheel), evaluate, waiting for
 * the earlier batch's write, and its own write until durable (medians over those batches);
 * and the main thread's GC pauses.
 */
function timelineFigures(list: BatchTimes[], gcs: Array<{ ms: number }>, elapsed: number): void {
  const withAck = list.filter((b) => b.oldestAckMs > 0);
  if (withAck.length === 0) return;
  const med = (xs: number[]) => { const s = xs.slice().sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
  const span = (b: BatchTimes) => b.durableMs - b.oldestAckMs;
  const worst = withAck.slice().sort((a, b) => span(b) - span(a)).slice(0, Math.max(1, Math.ceil(withAck.length / 100)));
  figures.timeline_batches_per_s = r1(list.length / elapsed);
  figures.timeline_targets_per_batch = r1(list.reduce((a, b) => a + b.targets, 0) / list.length);
  figures.timeline_worst1pct_span_ms = r1(med(worst.map(span)));
  figures.timeline_worst1pct_queued_ms = r1(med(worst.map((b) => b.takenMs - b.oldestAckMs)));
  figures.timeline_worst1pct_evaluate_ms = r1(med(worst.map((b) => b.evaluatedMs - b.takenMs)));
  figures.timeline_worst1pct_write_wait_ms = r1(med(worst.map((b) => b.writeStartMs - b.evaluatedMs)));
  figures.timeline_worst1pct_write_ms = r1(med(worst.map((b) => b.durableMs - b.writeStartMs)));
  figures.timeline_worst1pct_targets = r1(med(worst.map((b) => b.targets)));
  figures.timeline_write_p50_ms = r1(med(list.map((b) => b.durableMs - b.writeStartMs)));
  const g = gcs.map((x) => x.ms).sort((a, b) => a - b);
  figures.gc_main_pauses = g.length;
  figures.gc_main_total_ms = r1(g.reduce((a, b) => a + b, 0));
  figures.gc_main_max_ms = r1(g.length > 0 ? g[g.length - 1] : 0);
}

async function backfillAndLateFigures(): Promise<void> {
  const { svc, url, drop } = await service();
  try {
    const p = await plant(url, ['A', 'B'], 1);
    const collector = await CollectorClient.connect({ address: `127.0.0.1:${svc.context.parts.ingest.port}`, collectorId: 'bench-bf', epoch: 1n, streams: [{ name: 'a', type: 'float64' }, { name: 'b', type: 'float64' }] });
    const [sa, sb] = collector.welcome.streams.map((s) => s.series_id);
    await api(url, 'POST', '/v1/model/bindings', { attribute_id: p.attrs[0].A, series_id: sa, from_ns: 0 });
    await api(url, 'POST', '/v1/model/bindings', { attribute_id: p.attrs[0].B, series_id: sb, from_ns: 0 });
    const storage = svc.context.parts.storage;
    const n = DAYS * 86_400;
    const start = (nowNs() / SEC - BigInt(n) - 3600n) * SEC;
    const r = mulberry32(11);
    const CH = 500_000;
    const tw = Date.now();
    for (let k = 0; k < n; k += CH) {
      const m = Math.min(CH, n - k);
      const times = new BigInt64Array(m), va = new Float64Array(m), vb = new Float64Array(m);
      for (let i = 0; i < m; i++) { times[i] = start + BigInt(k + i) * SEC; va[i] = Math.round(r() * 1000) / 10; vb[i] = Math.round(r() * 1000) / 10; }
      await storage.write([{ series: sa, times, values: va, quality: new Uint32Array(m).fill(192) }, { series: sb, times: times.slice(), values: vb, quality: new Uint32Array(m).fill(192) }], { principal: 'bench' });
    }
    figures.backfill_input_write_s = r1((Date.now() - tw) / 1000);
    const rule = await api<{ rule_id: string }>(url, 'POST', '/v1/model/calc/rules', { name: 'diff', scope: { template_id: p.templateId, output_attr_def_id: p.defs.Out }, tier: 'expression', trigger: { kind: 'event', debounce_ms: 0 }, unit_check: 'off', provisional: 'emit', expression: 'B - A' });
    const poll = async (id: string, state: string) => { for (;;) { const v = await api<{ state: string }>(url, 'GET', `/v1/calc/backfill/${id}`); if (v.state === state) return v; if (v.state === 'failed') throw new Error(JSON.stringify(v)); await new Promise((res) => setTimeout(res, 50)); } };
    const tp = Date.now();
    const cp = process.cpuUsage();
    const job = await api<{ job_id: string }>(url, 'POST', '/v1/calc/backfill', { rule_id: rule.rule_id, assets: 'all', start_ns: start, end_ns: start + BigInt(n) * SEC, mode: 'fill-gaps' });
    const pv = await poll(job.job_id, 'preview') as unknown as { preview: { points_added: number } };
    figures.backfill_days = DAYS;
    figures.backfill_outputs = Number(pv.preview.points_added);
    figures.backfill_preview_s = r1((Date.now() - tp) / 1000);
    figures.backfill_preview_process_cpu_s = r1(cpuSeconds(cp));
    const tc = Date.now();
    const cc = process.cpuUsage();
    await api(url, 'POST', `/v1/calc/backfill/${job.job_id}/commit`);
    const done = await poll(job.job_id, 'committed') as unknown as { progress: { points_written: number; rate_limited_ms: number } };
    figures.backfill_commit_s = r1((Date.now() - tc) / 1000);
    figures.backfill_commit_process_cpu_s = r1(cpuSeconds(cc));
    figures.backfill_points_written = Number(done.progress.points_written);

    // A late point in the middle of the last hour of history: ack → corrected output.
    const out = (await api<{ assets: Array<{ output_series: string }> }>(url, 'GET', `/v1/calc/rules/${rule.rule_id}/status`)).assets[0].output_series;
    const at = start + BigInt(n - 1800) * SEC;
    const before = storage.read((v) => readRaw(v, out, { startNs: at, endNs: at + 1n, limit: 1 })).f64?.[0];
    const tl = performance.now();
    const ack = await collector.send('BACKFILL', 0, 'float64', { times: BigInt64Array.of(at), values: Float64Array.of(-12345), quality: null });
    const acked = performance.now();
    if (!ack.ok) throw new Error('late point refused');
    for (;;) {
      const v = storage.read((view) => readRaw(view, out, { startNs: at, endNs: at + 1n, limit: 1 })).f64?.[0];
      if (v !== before) break;
      if (performance.now() - tl > 10_000) throw new Error('late point not corrected in 10 s');
      await new Promise((res) => setTimeout(res, 1));
    }
    figures.late_point_ack_ms = r1(acked - tl);
    figures.late_point_corrected_after_ack_ms = r1(performance.now() - acked);
    await collector.close();
  } finally {
    await svc.stop(5_000);
    await drop();
  }
}

async function main(): Promise<void> {
  figures.load_at_start = execSync('uptime').toString().trim();
  if (!args.includes('--skip-evaluation')) await evaluationFigure().catch((e: Error) => { figures.evaluation_error = e.message; });
  if (!args.includes('--skip-latency')) await latencyFigure().catch((e: Error) => { figures.latency_error = e.message; });
  if (!args.includes('--skip-backfill')) await backfillAndLateFigures().catch((e: Error) => { figures.backfill_error = e.message; });
  figures.load_at_end = execSync('uptime').toString().trim();
  if (JSON_OUT) { console.log(JSON.stringify(figures)); return; }
  console.log('calculation figures (one process; see the header for what each measures)');
  for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(36)} ${v}`);
}

if (args.includes('--role')) void senderRole();
else main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
