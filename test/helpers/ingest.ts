// Helpers for ingest tests: a collector connected to the test service over loopback gRPC,
// float batches with exact timestamps, and reading a series back from the engine.
import type { TestService } from './service.js';
import { CollectorClient, type ConnectOptions, type StreamDeclaration } from '../../src/collector/collector-client.js';
import { readRaw } from '../../src/storage/series-store.js';
import { valueAt, type PointValue } from '../../src/storage/point-runs.js';

export const T0 = 1_700_000_000_123_456_789n;

export function grpcAddress(svc: TestService): string {
  return `127.0.0.1:${svc.service.context.parts.ingest.port}`;
}

export function connect(svc: TestService, opts: Partial<ConnectOptions> & { streams: StreamDeclaration[] }): Promise<CollectorClient> {
  return CollectorClient.connect({ address: grpcAddress(svc), collectorId: 'line-1', epoch: 1n, ...opts });
}

/** n float points from start, one per step ns, value = base + i. */
export function floatBatch(start: bigint, n: number, step = 1_000_000_000n, base = 0): { times: BigInt64Array; values: Float64Array; quality: Uint32Array | null } {
  const times = new BigInt64Array(n);
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) { times[i] = start + BigInt(i) * step; values[i] = base + i; }
  return { times, values, quality: null };
}

/** Every point of a series (times and values) straight from the engine. */
export function readAll(svc: TestService, seriesId: string): Array<{ ts: bigint; value: PointValue; quality: number }> {
  const store = svc.service.context.parts.storage;
  const out: Array<{ ts: bigint; value: PointValue; quality: number }> = [];
  let cursor: bigint | undefined;
  for (;;) {
    const page = store.read((v) => readRaw(v, seriesId, { startNs: 0n, endNs: 2n ** 62n, limit: 1_000_000, afterNs: cursor }));
    for (let i = 0; i < page.count; i++) out.push({ ts: page.ts[i], value: valueAt(page, i), quality: page.quality[i] });
    if (page.nextCursor === null) return out;
    cursor = page.nextCursor;
  }
}

/** Polls until fn() is true (the diagnostics are refreshed asynchronously). */
export async function until(fn: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A TCP proxy in front of the gRPC port, so a test can cut the network under a running
 * collector (every connection dropped, new ones refused) and then restore it.
 */
export interface TcpProxy {
  address: string;
  /** Drops every open connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function tcpProxy(targetPort: number): Promise<TcpProxy> {
  const { createServer, connect: tcpConnect } = await import('node:net');
  const sockets = new Set<import('node:net').Socket>();
  let down = false;
  const server = createServer((inbound) => {
    if (down) { inbound.destroy(); return; }
    const outbound = tcpConnect(targetPort, '127.0.0.1');
    sockets.add(inbound); sockets.add(outbound);
    const drop = () => { inbound.destroy(); outbound.destroy(); sockets.delete(inbound); sockets.delete(outbound); };
    inbound.on('error', drop); outbound.on('error', drop);
    inbound.on('close', drop); outbound.on('close', drop);
    inbound.pipe(outbound); outbound.pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    address: `127.0.0.1:${port}`,
    cut() { down = true; for (const s of sockets) s.destroy(); sockets.clear(); },
    restore() { down = false; },
    close: () => new Promise<void>((resolve) => { down = true; for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}
