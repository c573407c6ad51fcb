// Lifecycle enforcement: a function the server runs in the background; it returns what
// it did so the caller can record an Operation. Raw chunks whose last point is older than
// now - keep_days are dropped (then 'rollups' keeps the rollups of that time, 'delete'
// drops them too); rollup rows older than rollups.keep are trimmed. Annotations live in
// the model: the report carries their cutoff per series for the model to apply.
import { chunkKey, seriesKey } from './keys.js';
import { headerOf, allChunks } from './chunk-access.js';
import { removeChunk } from './tail-packs.js';
import { readHead, clearHeadInTxn } from './head-record.js';
import { keepNs } from './lifecycle-policy.js';
import { trimRollups } from './rollups.js';
import { decodeMeta, type SeriesMeta } from './series-meta.js';
import type { ReadView } from './series-env.js';

export interface LifecycleSeriesReport {
  series: string;
  policyVersion: bigint;
  chunksDropped: number;
  pointsDropped: number;
  bytesFreed: number;
  rollupsDropped: number;
  /** Annotations older than this should be trimmed by the model; null = keep forever. */
  annotationsCutoffNs: bigint | null;
}

export interface LifecycleReport {
  nowNs: bigint;
  series: LifecycleSeriesReport[];
  chunksDropped: number;
  pointsDropped: number;
  rollupsDropped: number;
}

/** Applies every series' policy inside the current write txn (view.txn undefined). */
export function enforceLifecycleInTxn(view: ReadView, nowNs: bigint): LifecycleReport {
  const report: LifecycleReport = { nowNs, series: [], chunksDropped: 0, pointsDropped: 0, rollupsDropped: 0 };
  const metas: SeriesMeta[] = [];
  for (const { value } of view.env.meta.getRange({ transaction: view.txn })) {
    const m = decodeMeta(value);
    if (m.lifecycle) metas.push(m);
  }
  for (const meta of metas) {
    const r = enforceOne(view, meta, nowNs);
    report.series.push(r);
    report.chunksDropped += r.chunksDropped; report.pointsDropped += r.pointsDropped; report.rollupsDropped += r.rollupsDropped;
  }
  return report;
}

function enforceOne(view: ReadView, meta: SeriesMeta, nowNs: bigint): LifecycleSeriesReport {
  const policy = meta.lifecycle!.policy;
  const series = seriesKey(meta.id);
  const r: LifecycleSeriesReport = { series: meta.id, policyVersion: meta.lifecycle!.version, chunksDropped: 0, pointsDropped: 0, bytesFreed: 0, rollupsDropped: 0, annotationsCutoffNs: null };
  let rollupCutoff: bigint | null = null;
  if ('keep_days' in policy.raw) {
    const cutoff = nowNs - BigInt(policy.raw.keep_days) * 86_400_000_000_000n;
    const doomed: { start: bigint; count: number; bytes: number }[] = [];
    for (const c of allChunks(view, series)) {
      const h = headerOf(series, c.start, c.bytes);
      if (h.lastTs >= cutoff) break;
      doomed.push({ start: c.start, count: h.count, bytes: c.bytes.byteLength });
    }
    for (const d of doomed) {
      removeChunk(view.env, chunkKey(series, d.start));
      r.chunksDropped++; r.pointsDropped += d.count; r.bytesFreed += d.bytes;
    }
    // a head that went stale entirely (no writes for keep_days) goes too
    const head = readHead(view, series);
    if (head.cols && head.cols.count > 0 && head.cols.tsBase + BigInt(head.cols.tsOffset[head.cols.count - 1]) < cutoff) {
      r.pointsDropped += head.cols.count;
      clearHeadInTxn(view, series, head.cols.tsBase + BigInt(head.cols.tsOffset[head.cols.count - 1]), head.lastWriteMs);
    }
    if (policy.raw.then === 'delete') rollupCutoff = cutoff;
  }
  const rk = keepNs(policy.rollups.keep);
  if (rk !== null) {
    const c = nowNs - rk;
    if (rollupCutoff === null || c > rollupCutoff) rollupCutoff = c;
  }
  // a bucket goes once it ends before the cutoff
  if (rollupCutoff !== null) r.rollupsDropped += trimRollups(view, series, rollupCutoff);
  const ak = keepNs(policy.annotations.keep);
  r.annotationsCutoffNs = ak === null ? null : nowNs - ak;
  return r;
}
