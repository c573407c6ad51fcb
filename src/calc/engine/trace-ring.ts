// The trace of recent evaluations (GET /v1/calc/rules/{rule_id}/trace): per (rule, asset)
// a ring of the last TRACE_PER_TARGET evaluated instants with their inputs, outcome,
// value, quality and reason. In memory only: it explains what the engine did lately,
// while lineage (durable) says which version produced which window. A restart empties it.
//
// The ring keeps columns (typed arrays, grown by doubling up to the ring's size), and makes
// the route's entries only when asked: an object per instant and input, kept for 256 instants
// of each of 10,000 targets, was the HTTP thread's most promoted garbage at 10,000 inputs a
// second (2026-11-28). An instant costs ~80 bytes with one input (~250 as objects).

/** Evaluated instants kept per (rule, asset). */
export const TRACE_PER_TARGET = 256;
const FIRST_CAPACITY = 8;

import { traceContextOf, traceEntryOf, type Target, type TraceContext, type TraceEntry, type WindowOutcome } from '../../calc-kernel/window-eval.js';

export type { TraceEntry, TraceInput, TraceContext } from '../../calc-kernel/window-eval.js';

/** One (rule, asset)'s ring; the engine keeps it beside the target it belongs to (TraceStore.ringOf). */
export class Ring {
  private capacity = 0;
  /** Inputs per instant the input columns have room for. */
  private stride = 0;
  private next = 0;
  private size = 0;
  private instant = new BigInt64Array(0);
  private computedAt = new BigInt64Array(0);
  private windowStart = new BigInt64Array(0);
  private windowEnd = new BigInt64Array(0);
  private value = new Float64Array(0);
  private quality = new Uint32Array(0);
  private reason = new Uint8Array(0);
  private provisional = new Uint8Array(0);
  private context: TraceContext[] = [];
  private inputTs = new BigInt64Array(0);
  private inputValue = new Float64Array(0);
  /** -1: no point in force. */
  private inputQuality = new Float64Array(0);

  /** Room for one more instant with `inputs` inputs: the columns grown (in ring order, oldest first) when full or too narrow. */
  private room(inputs: number): void {
    if (this.size < this.capacity && inputs <= this.stride) return;
    const capacity = this.size < this.capacity ? this.capacity : Math.min(TRACE_PER_TARGET, Math.max(FIRST_CAPACITY, this.capacity * 2));
    if (capacity === this.capacity && inputs <= this.stride) return; // full at the ring's size: the oldest is overwritten
    const stride = Math.max(this.stride, inputs);
    const order = this.order();
    const pick = <A extends BigInt64Array | Float64Array | Uint32Array | Uint8Array>(a: A, make: (n: number) => A): A => {
      const out = make(capacity);
      order.forEach((from, to) => { out[to] = a[from]; });
      return out;
    };
    const pickInputs = <A extends BigInt64Array | Float64Array>(a: A, make: (n: number) => A, fill?: number): A => {
      const out = make(capacity * stride);
      if (fill !== undefined) (out as Float64Array).fill(fill);
      order.forEach((from, to) => { for (let r = 0; r < this.stride; r++) out[to * stride + r] = a[from * this.stride + r]; });
      return out;
    };
    this.instant = pick(this.instant, (n) => new BigInt64Array(n));
    this.computedAt = pick(this.computedAt, (n) => new BigInt64Array(n));
    this.windowStart = pick(this.windowStart, (n) => new BigInt64Array(n));
    this.windowEnd = pick(this.windowEnd, (n) => new BigInt64Array(n));
    this.value = pick(this.value, (n) => new Float64Array(n));
    this.quality = pick(this.quality, (n) => new Uint32Array(n));
    this.reason = pick(this.reason, (n) => new Uint8Array(n));
    this.provisional = pick(this.provisional, (n) => new Uint8Array(n));
    this.context = order.map((i) => this.context[i]);
    this.inputTs = pickInputs(this.inputTs, (n) => new BigInt64Array(n));
    this.inputValue = pickInputs(this.inputValue, (n) => new Float64Array(n));
    this.inputQuality = pickInputs(this.inputQuality, (n) => new Float64Array(n), -1);
    this.capacity = capacity;
    this.stride = stride;
    this.next = this.size % capacity;
  }

  /** Slots oldest first. */
  private order(): number[] {
    const out: number[] = [];
    const start = (this.next - this.size + this.capacity * 2) % Math.max(1, this.capacity);
    for (let i = 0; i < this.size; i++) out.push((start + i) % this.capacity);
    return out;
  }

  /** The traced instants of one window's outcome, oldest first (at most 64: fewer than the ring holds). */
  pushWindow(c: TraceContext, o: WindowOutcome, from: bigint, to: bigint): void {
    const tr = o.trace, b = o.batch;
    if (tr === null || b === null) return;
    const k = c.inputs.length;
    for (let j = 0; j < tr.values.length; j++) {
      this.room(k);
      const s = this.next;
      const at = b.times[tr.first + j];
      this.instant[s] = at;
      this.computedAt[s] = tr.computedAtNs;
      this.windowStart[s] = from;
      this.windowEnd[s] = to;
      this.value[s] = tr.values[j];
      this.quality[s] = b.quality[tr.first + j];
      this.reason[s] = tr.reasons[j];
      this.provisional[s] = o.provisionalFromNs !== null && at >= o.provisionalFromNs ? 1 : 0;
      this.context[s] = c;
      for (let r = 0; r < this.stride; r++) {
        const d = s * this.stride + r;
        if (r < k) { this.inputTs[d] = tr.inputTs[j * k + r]; this.inputValue[d] = tr.inputValues[j * k + r]; this.inputQuality[d] = tr.inputQuality[j * k + r]; }
        else this.inputQuality[d] = -1;
      }
      this.next = (s + 1) % this.capacity;
      if (this.size < this.capacity) this.size++;
    }
  }

  /** The entries whose instant falls in [startNs, endNs), oldest first. */
  list(startNs: bigint, endNs: bigint): TraceEntry[] {
    const out: TraceEntry[] = [];
    for (const s of this.order()) {
      const at = this.instant[s];
      if (at < startNs || at >= endNs) continue;
      const base = s * this.stride;
      out.push(traceEntryOf(this.context[s], { start_ns: this.windowStart[s], end_ns: this.windowEnd[s] }, at, this.computedAt[s],
        this.value[s], this.quality[s], this.reason[s], this.provisional[s] === 1,
        (r) => (this.inputQuality[base + r] < 0 ? null : { ts: this.inputTs[base + r], value: this.inputValue[base + r], quality: this.inputQuality[base + r] })));
    }
    return out;
  }
}

/** Each target's trace context, made once (plans are swapped, not changed); the trigger is named by its kind, as the engine's batches name it. */
const contexts = new WeakMap<Target, TraceContext>();
export function traceContextFor(t: Target): TraceContext {
  let c = contexts.get(t);
  if (!c) { c = traceContextOf(t, t.rule.trigger.kind); contexts.set(t, c); }
  return c;
}

/**
 * Each context's ring key, made once: a fresh key string per window was built and hashed
 * again for every evaluation (10,000 a second in bench/calc.ts); a kept string keeps its hash.
 */
const ringKeys = new WeakMap<TraceContext, { ruleId: string; key: string }>();
function ringKeyOf(ruleId: string, c: TraceContext): string {
  let k = ringKeys.get(c);
  if (k === undefined || k.ruleId !== ruleId) { k = { ruleId, key: `${ruleId}/${c.assetId}` }; ringKeys.set(c, k); }
  return k.key;
}

export class TraceStore {
  private readonly rings = new Map<string, Ring>();

  /**
   * The ring of the target described by `c`, made if new. The engine keeps it with the
   * target's state: looking up the context, its key and the ring for each of 10,000 windows a
   * second was most of the trace's time on the HTTP thread (profile, 2026-11-28). A kept ring
   * is the store's own until dropRule; the engine drops a dropped rule's states with it.
   */
  ringOf(ruleId: string, c: TraceContext): Ring {
    const k = ringKeyOf(ruleId, c);
    let r = this.rings.get(k);
    if (!r) { r = new Ring(); this.rings.set(k, r); }
    return r;
  }

  /** Evaluations of one (rule, asset) whose instant falls in [startNs, endNs), by instant then computation time. */
  query(ruleId: string, assetId: string, startNs: bigint, endNs: bigint): TraceEntry[] {
    const r = this.rings.get(`${ruleId}/${assetId}`);
    if (!r) return [];
    return r.list(startNs, endNs)
      .sort((a, b) => (a.eval_instant_ns < b.eval_instant_ns ? -1 : a.eval_instant_ns > b.eval_instant_ns ? 1 : a.computed_at_ns < b.computed_at_ns ? -1 : 1));
  }

  dropRule(ruleId: string): void {
    for (const k of this.rings.keys()) if (k.startsWith(`${ruleId}/`)) this.rings.delete(k);
  }
}
