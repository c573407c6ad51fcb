// The resolved reads the widgets draw from, by attribute id (spec "Resolved reads").
import { post, type ReadPoint, type SnapshotItem, type SummaryItem } from './api.js';
import { msToNs } from './time.js';

const byIds = (ids: string[]) => ({ select: { kind: 'attribute_ids', content: ids }, scope: {} });

export function numericValue(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v && typeof v === 'object' && 'ordinal' in v) return Number((v as { ordinal: number }).ordinal);
  return null;
}

/** The latest point of each attribute (null when it has none). */
export async function readSnapshots(ids: string[]): Promise<Map<string, ReadPoint | null>> {
  if (ids.length === 0) return new Map();
  const items = await post<SnapshotItem[]>('/v1/read/snapshot', { resolve: byIds(ids) });
  return new Map(items.map((i) => [i.attribute_id, i.snapshot]));
}

export interface Interval { startMs: number; endMs: number; twa: number | null; min: number | null; max: number | null }

/** `count` equal intervals over the window, time-weighted average, min and max of each. */
export async function readIntervals(ids: string[], startMs: number, endMs: number, count: number): Promise<Map<string, Interval[]>> {
  if (ids.length === 0) return new Map();
  const startNs = msToNs(startMs), endNs = msToNs(endMs);
  const step = (endNs - startNs) / BigInt(count);
  const items = await post<SummaryItem[]>('/v1/read/summary', {
    resolve: byIds(ids), start_ns: startNs, end_ns: endNs, interval: step > 0n ? step : 1n, stats: ['twa', 'min', 'max'],
  });
  return new Map(items.map((i) => [i.attribute_id, i.intervals.map((iv) => ({
    startMs: iv.start_ns / 1e6, endMs: iv.end_ns / 1e6, twa: iv.twa ?? null, min: iv.min ?? null, max: iv.max ?? null,
  }))]));
}
