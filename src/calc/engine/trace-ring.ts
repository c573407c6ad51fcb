// The trace of recent evaluations (GET /v1/calc/rules/{rule_id}/trace): per (rule, asset)
// a ring of the last TRACE_PER_TARGET evaluated instants with their inputs, outcome,
// value, quality and reason. In memory only: it explains what the engine did lately,
// while lineage (durable) says which version produced which window. A restart empties it.

/** Evaluated instants kept per (rule, asset): ~250 B each, 10,000 targets ≈ 640 MB worst case, so kept small. */
export const TRACE_PER_TARGET = 256;

import type { TraceEntry } from '../../calc-kernel/window-eval.js';

export type { TraceEntry, TraceInput } from '../../calc-kernel/window-eval.js';

class Ring {
  private readonly items: Array<TraceEntry | undefined> = new Array(TRACE_PER_TARGET);
  private next = 0;
  private size = 0;
  push(e: TraceEntry): void {
    this.items[this.next] = e;
    this.next = (this.next + 1) % TRACE_PER_TARGET;
    if (this.size < TRACE_PER_TARGET) this.size++;
  }
  /** Oldest first. */
  list(): TraceEntry[] {
    const out: TraceEntry[] = [];
    const start = (this.next - this.size + TRACE_PER_TARGET) % TRACE_PER_TARGET;
    for (let i = 0; i < this.size; i++) out.push(this.items[(start + i) % TRACE_PER_TARGET] as TraceEntry);
    return out;
  }
}

export class TraceStore {
  private readonly rings = new Map<string, Ring>();

  add(ruleId: string, e: TraceEntry): void {
    const k = `${ruleId}/${e.asset_id}`;
    let r = this.rings.get(k);
    if (!r) { r = new Ring(); this.rings.set(k, r); }
    r.push(e);
  }

  /** Evaluations of one (rule, asset) whose instant falls in [startNs, endNs), by instant then computation time. */
  query(ruleId: string, assetId: string, startNs: bigint, endNs: bigint): TraceEntry[] {
    const r = this.rings.get(`${ruleId}/${assetId}`);
    if (!r) return [];
    return r.list().filter((e) => e.eval_instant_ns >= startNs && e.eval_instant_ns < endNs)
      .sort((a, b) => (a.eval_instant_ns < b.eval_instant_ns ? -1 : a.eval_instant_ns > b.eval_instant_ns ? 1 : a.computed_at_ns < b.computed_at_ns ? -1 : 1));
  }

  dropRule(ruleId: string): void {
    for (const k of this.rings.keys()) if (k.startsWith(`${ruleId}/`)) this.rings.delete(k);
  }
}
