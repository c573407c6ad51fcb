// VictoriaMetrics as a peer in the benchmarks (bench:compare, bench:ingest --peer vm): where
// its binary is, starting it on a fresh directory, and loading points through its InfluxDB
// line protocol endpoint (/write) the way its own docs suggest for bulk loads.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort, sleep } from '../reliability/crash-loop/service-child.js';

export const VM_BIN = process.env.VICTORIA_METRICS_BIN ?? '/usr/bin/victoria-metrics';

/** Null when the binary is there, else the sentence saying how to get it. */
export function vmMissing(): string | null {
  return existsSync(VM_BIN) ? null : `VictoriaMetrics is not installed (${VM_BIN}); apt-get install -y victoria-metrics, or set VICTORIA_METRICS_BIN`;
}

export interface VmServer { url: string; child: ChildProcess; pid: number; stop(): Promise<void> }

export async function startVm(dir: string): Promise<VmServer> {
  const port = await freePort();
  const child = spawn(VM_BIN, [`-storageDataPath=${dir}`, `-httpListenAddr=127.0.0.1:${port}`, '-retentionPeriod=100y', '-loggerLevel=ERROR', '-search.maxPointsPerTimeseries=10000000', '-search.maxExportDuration=1000h'], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const stop = () => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) { resolve(); return; }
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
  for (let i = 0; i < 300; i++) {
    try { if ((await fetch(`${url}/health`)).status === 200) return { url, child, pid: child.pid as number, stop }; } catch { /* not up yet */ }
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error('victoria-metrics did not answer /health in 30 s');
}

/** Line protocol escapes of a tag value: comma, space and equals sign. */
const tagValue = (s: string) => s.replace(/[, =]/g, (c) => `\\${c}`);

/**
 * Influx line protocol bodies of `linesPerBody` lines, series after series
 * (`plant,series=<name> value=<v> <ts ns>`; VM stores the metric as plant_value).
 */
export function influxBodies(series: ReadonlyArray<{ name: string; times: BigInt64Array; values: Float64Array }>, linesPerBody: number): Buffer[] {
  const bodies: Buffer[] = [];
  let lines: string[] = [];
  for (const s of series) {
    const head = `plant,series=${tagValue(s.name)} value=`;
    for (let i = 0; i < s.times.length; i++) {
      lines.push(`${head}${s.values[i]} ${s.times[i]}`);
      if (lines.length === linesPerBody) { bodies.push(Buffer.from(lines.join('\n'))); lines = []; }
    }
  }
  if (lines.length > 0) bodies.push(Buffer.from(lines.join('\n')));
  return bodies;
}

/** POSTs every body to /write, `inFlight` at a time; throws on any answer but 2xx. */
export async function writeVm(url: string, bodies: readonly Buffer[], inFlight: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < bodies.length) {
      const res = await fetch(`${url}/write`, { method: 'POST', body: bodies[next++] });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`vm /write: ${res.status} ${text.slice(0, 300)}`);
    }
  }));
}

/** Asks VM to make its in-memory parts searchable (and written). */
export async function flushVm(url: string): Promise<void> {
  const res = await fetch(`${url}/internal/force_flush`);
  await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`vm force_flush: ${res.status}`);
}
