// Point sources as columnar batches: one stream per series, points taken in order, batch by
// batch, into typed arrays (no per-point objects beyond what the generator itself yields).
// The simulator's own plant (plant-signals.ts) is the default source; loadDataset streams
// the shared industrial dataset (../shared/datasets/industrial.mjs), a test and benchmark aid.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { OutgoingColumns } from './collector-client.js';

interface DatasetSeries {
  name: string;
  type: ValueType;
  points(): Iterator<[bigint, unknown, number]>;
}

export interface DatasetOptions {
  series: number;
  points: number;
  seed: number;
  startNs?: bigint;
  /** Where industrial.mjs lives (the shared test and benchmark dataset); default ../shared/datasets from the working directory. */
  path?: string;
}

export interface SourceStream {
  name: string;
  type: ValueType;
  /** ENUM streams: the enum set the dataset's values name (e.g. "machine-state"). */
  enumSet?: string;
  /** Next batch of at most n points (only those at or before `until` when given); null when none. */
  next(n: number, until?: bigint): OutgoingColumns | null;
  /** Drops points at or before ts (resume after the server's last durable point). */
  skipThrough(ts: bigint): void;
}

export async function loadDataset(opts: DatasetOptions): Promise<SourceStream[]> {
  const file = opts.path ?? resolve(process.cwd(), '../shared/datasets/industrial.mjs');
  const mod = await import(pathToFileURL(file).href) as { datasetSeries(o: Record<string, unknown>): DatasetSeries[] };
  const list = mod.datasetSeries({ series: opts.series, points: opts.points, seed: opts.seed, ...(opts.startNs !== undefined ? { startNs: opts.startNs } : {}) });
  return list.map((s) => streamOfPoints(s.name, s.type, s.points()));
}

/**
 * A stream over [ts, value, quality] points in time order, pulled batch by batch into typed
 * arrays. An enum stream names its set (`enumSet`), or its first value does ({enum_set, ordinal}).
 */
export function streamOfPoints(name: string, type: ValueType, it: Iterator<[bigint, unknown, number]>, declaredEnumSet?: string): SourceStream {
  const s = { name, type };
  let peeked: [bigint, unknown, number] | null = null;
  let enumSet: string | undefined = declaredEnumSet;
  const pull = (): [bigint, unknown, number] | null => {
    if (peeked) { const p = peeked; peeked = null; return p; }
    const r = it.next();
    return r.done ? null : r.value;
  };
  if (s.type === 'enum' && enumSet === undefined) {
    const first = pull();
    if (first) peeked = first;
    const set = (first?.[1] as { enum_set?: unknown } | undefined)?.enum_set;
    if (typeof set === 'string') enumSet = set;
  }
  return {
    name: s.name,
    type: s.type,
    ...(enumSet ? { enumSet } : {}),
    skipThrough(ts) {
      for (;;) { const p = pull(); if (!p) return; if (p[0] > ts) { peeked = p; return; } }
    },
    next(n, until) {
      const times = new BigInt64Array(n);
      const quality = new Uint32Array(n);
      const f64 = s.type === 'float64' ? new Float64Array(n) : null;
      const i64 = s.type === 'int64' ? new BigInt64Array(n) : null;
      const u8 = s.type === 'boolean' ? new Uint8Array(n) : null;
      const ord = s.type === 'enum' ? new Int32Array(n) : null;
      const str: string[] | null = s.type === 'string' ? [] : null;
      let k = 0;
      for (; k < n; k++) {
        const p = pull();
        if (!p) break;
        if (until !== undefined && p[0] > until) { peeked = p; break; }
        times[k] = p[0]; quality[k] = p[2];
        const v = p[1];
        if (f64) f64[k] = v as number;
        else if (i64) i64[k] = BigInt(v as number);
        else if (u8) u8[k] = v ? 1 : 0;
        else if (ord) ord[k] = (v as { ordinal: number }).ordinal;
        else if (str) str.push(v as string);
      }
      if (k === 0) return null;
      const values = (f64 ?? i64 ?? u8 ?? ord ?? str) as OutgoingColumns['values'];
      const cut = <T extends { subarray(a: number, b: number): T }>(a: T) => a.subarray(0, k);
      return {
        times: cut(times),
        values: Array.isArray(values) ? values : cut(values as Float64Array),
        quality: cut(quality),
      };
    },
  };
}
