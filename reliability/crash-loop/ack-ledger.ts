// The collectors' own record: per stream, which point indexes were acknowledged by the
// server (durable, by the protocol's promise) and the highest index ever sent. Kept as a
// sorted list of disjoint half-open ranges, so ten minutes at full speed stay small.
export class RangeSet {
  /** Sorted, disjoint, non-adjacent [start, end) pairs. */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  add(start: number, end: number): void {
    if (end <= start) return;
    // First range whose end reaches start (adjacent ranges merge too).
    let i = this.lowerBound(start);
    let s = start, e = end;
    let j = i;
    while (j < this.starts.length && this.starts[j] <= e) {
      s = Math.min(s, this.starts[j]);
      e = Math.max(e, this.ends[j]);
      j++;
    }
    this.starts.splice(i, j - i, s);
    this.ends.splice(i, j - i, e);
  }

  /** Index of the first range with end >= x. */
  private lowerBound(x: number): number {
    let lo = 0, hi = this.ends.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.ends[mid] < x) lo = mid + 1; else hi = mid; }
    return lo;
  }

  has(x: number): boolean {
    const i = this.lowerBound(x + 1);
    return i < this.starts.length && this.starts[i] <= x && x < this.ends[i];
  }

  size(): number {
    let n = 0;
    for (let i = 0; i < this.starts.length; i++) n += this.ends[i] - this.starts[i];
    return n;
  }

  ranges(): Array<[number, number]> {
    return this.starts.map((s, i) => [s, this.ends[i]]);
  }
}

export class AckLedger {
  private readonly acked = new Map<string, RangeSet>();
  private readonly sentThrough = new Map<string, number>();

  private set(stream: string): RangeSet {
    let r = this.acked.get(stream);
    if (!r) { r = new RangeSet(); this.acked.set(stream, r); }
    return r;
  }

  sent(stream: string, k0: number, n: number): void {
    this.sentThrough.set(stream, Math.max(this.sentThrough.get(stream) ?? 0, k0 + n));
  }

  ack(stream: string, k0: number, n: number): void {
    this.set(stream).add(k0, k0 + n);
  }

  ackedOf(stream: string): RangeSet {
    return this.set(stream);
  }

  /** One past the highest index ever produced (sent or buffered). */
  sentEnd(stream: string): number {
    return this.sentThrough.get(stream) ?? 0;
  }

  totalAcked(): number {
    let n = 0;
    for (const r of this.acked.values()) n += r.size();
    return n;
  }
}
