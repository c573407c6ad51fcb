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

  /**
   * Percentiles (0..100) of the samples kept, in ms; null when none. `since` (a `count` read
   * earlier) keeps only the samples added after it (those still kept): the bench's figure
   * without its first seconds beside the whole one.
   */
  percentiles(ps: readonly number[], since = 0): Array<number | null> {
    const from = Math.max(since, this.n - SAMPLES);
    const k = this.n - from;
    if (k <= 0) return ps.map(() => null);
    const sorted = new Float64Array(k);
    for (let i = 0; i < k; i++) sorted[i] = this.ms[(from + i) % SAMPLES];
    sorted.sort();
    return ps.map((p) => sorted[Math.min(k - 1, Math.floor((p / 100) * k))]);
  }

  get count(): number { return this.total; }
}
