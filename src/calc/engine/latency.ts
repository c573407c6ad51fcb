// Input ack → durable output latency of event-triggered evaluations, kept as a bounded
// sample for bench/calc.ts (the p99 < 100 ms figure) and status.

/** Samples kept (the newest win): enough for a stable p99 of a benchmark run. */
const SAMPLES = 200_000;

export class LatencyRecorder {
  private readonly ms = new Float64Array(SAMPLES);
  private n = 0;
  private total = 0;

  add(ms: number): void {
    this.ms[this.n % SAMPLES] = ms;
    this.n++;
    this.total++;
  }

  reset(): void { this.n = 0; this.total = 0; }

  /** Percentiles (0..100) of the samples kept, in ms; null when none. */
  percentiles(ps: readonly number[]): Array<number | null> {
    const k = Math.min(this.n, SAMPLES);
    if (k === 0) return ps.map(() => null);
    const sorted = this.ms.slice(0, k).sort();
    return ps.map((p) => sorted[Math.min(k - 1, Math.floor((p / 100) * k))]);
  }

  get count(): number { return this.total; }
}
