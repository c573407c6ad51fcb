// The check after the run: the data directory is opened read-only (the service is down) and
// every stream's series is read in full. Per stream: every acknowledged point must be stored
// once, with the value and quality it was sent with (lost otherwise); a time stored twice is a
// duplicate; a stored point that is not a planned point, or carries another value or quality,
// is corrupt; a stored point that was sent but never acknowledged is allowed (its outcome was
// unknown to the collector) and only counted. Checksums are order-independent sums over the
// acknowledged points: the collectors' side from the plan, the storage side from the reads.
import { join } from 'node:path';
import { openSeriesEnv, withReadView, readRaw } from '../../src/storage/series-store.js';
import type { TimedPoints } from '../../src/storage/point-runs.js';
import { expectedValue, float64Of, indexOf, int64Of, booleanOf, stringOf, qualityOf, timeOf, type PlannedStream } from './point-plan.js';
import type { AckLedger } from './ack-ledger.js';

export interface StreamCheck {
  stream: string;
  series: string;
  acked: number;
  stored: number;
  ackedFound: number;
  lost: number;
  duplicated: number;
  corrupt: number;
  /** Sent, not acknowledged, but stored (an ack lost with the connection): allowed. */
  storedUnacked: number;
  checksumCollector: number;
  checksumStored: number;
  /** First few problems, for the report. */
  examples: string[];
}

const PAGE = 1_000_000;

function mix(h: number, x: number): number {
  h = Math.imul(h ^ x, 0x01000193) >>> 0;
  return (h ^ (h >>> 15)) >>> 0;
}

const f64 = new Float64Array(1);
const words = new Uint32Array(f64.buffer);

function valueWordOf(v: number | bigint | boolean | string): number {
  if (typeof v === 'number') { f64[0] = v; return mix(words[0], words[1]); }
  if (typeof v === 'bigint') return mix(Number(v & 0xffffffffn), Number((v >> 32n) & 0xffffffffn));
  if (typeof v === 'boolean') return v ? 1 : 2;
  let h = 0x811c9dc5;
  for (let i = 0; i < v.length; i++) h = mix(h, v.charCodeAt(i));
  return h;
}

/** One acknowledged point's contribution; summed (mod 2^32) so the order does not matter. */
function pointWord(k: number, v: number | bigint | boolean | string, q: number): number {
  return mix(mix(mix(0x9e3779b9, k), valueWordOf(v)), q);
}

function storedValue(p: TimedPoints, i: number): number | bigint | boolean | string {
  switch (p.type) {
    case 'float64': return (p.f64 as Float64Array)[i];
    case 'int64': return (p.i64 as BigInt64Array)[i];
    case 'boolean': return (p.u8 as Uint8Array)[i] === 1;
    case 'string': return (p.str as string[])[i];
    default: return (p.ord as Int32Array)[i];
  }
}

function sameValue(s: PlannedStream, k: number, v: number | bigint | boolean | string): boolean {
  switch (s.type) {
    case 'float64': return Object.is(v, float64Of(s, k));
    case 'int64': return v === int64Of(s, k);
    case 'boolean': return v === booleanOf(s, k);
    default: return v === stringOf(s, k);
  }
}

export function verifyStored(dataDir: string, streams: Array<{ key: string; series: string; plan: PlannedStream }>, ledger: AckLedger): StreamCheck[] {
  const env = openSeriesEnv(join(dataDir, 'series'), { readOnly: true });
  try {
    return streams.map(({ key, series, plan }) => {
      const acked = ledger.ackedOf(key);
      const sentEnd = ledger.sentEnd(key);
      const r: StreamCheck = { stream: key, series, acked: acked.size(), stored: 0, ackedFound: 0, lost: 0, duplicated: 0, corrupt: 0, storedUnacked: 0, checksumCollector: 0, checksumStored: 0, examples: [] };
      const note = (m: string) => { if (r.examples.length < 5) r.examples.push(m); };
      for (const [a, b] of acked.ranges()) for (let k = a; k < b; k++) r.checksumCollector = (r.checksumCollector + pointWord(k, expectedValue(plan, k), qualityOf(k))) >>> 0;
      const startNs = plan.t0, endNs = timeOf(plan, sentEnd + 1);
      let after: bigint | undefined;
      let lastT: bigint | null = null;
      for (;;) {
        const page = withReadView(env, (view) => readRaw(view, series, { startNs, endNs, limit: PAGE, afterNs: after }));
        for (let i = 0; i < page.count; i++) {
          const t = page.ts[i];
          r.stored++;
          if (lastT !== null && t <= lastT) { r.duplicated++; note(`time ${t} stored again after ${lastT}`); continue; }
          lastT = t;
          const k = indexOf(plan, t);
          const v = storedValue(page, i), q = page.quality[i];
          if (k < 0 || k >= sentEnd) { r.corrupt++; note(`time ${t} was never sent`); continue; }
          if (!sameValue(plan, k, v) || q !== qualityOf(k)) { r.corrupt++; note(`point ${k} at ${t}: stored ${String(v)}/${q}, sent ${String(expectedValue(plan, k))}/${qualityOf(k)}`); continue; }
          if (acked.has(k)) { r.ackedFound++; r.checksumStored = (r.checksumStored + pointWord(k, v, q)) >>> 0; }
          else r.storedUnacked++;
        }
        if (page.nextCursor === null || page.count === 0) break;
        after = page.nextCursor;
      }
      r.lost = r.acked - r.ackedFound;
      if (r.lost > 0) {
        // Name the first lost point, so the report points at it.
        for (const [a, b] of acked.ranges()) {
          let hit = -1;
          const page = withReadView(env, (view) => readRaw(view, series, { startNs: timeOf(plan, a), endNs: timeOf(plan, b), limit: b - a }));
          if (page.count < b - a) {
            const have = new Set<bigint>(Array.from(page.ts.subarray(0, page.count)));
            for (let k = a; k < b && hit < 0; k++) if (!have.has(timeOf(plan, k))) hit = k;
          }
          if (hit >= 0) { note(`acknowledged point ${hit} (time ${timeOf(plan, hit)}) is not stored`); break; }
        }
      }
      return r;
    });
  } finally {
    env.close();
  }
}
