// Per-batch timeline of the engine's live batches, for finding what makes the tail of the
// input-ack -> durable-output latency (bench/calc.ts turns it on; off it costs one null check).
// Each batch: the oldest input ack it waited on, when its targets were taken off the due
// wheel, evaluated in the read pool, when its write began (after the earlier batch's turn)
// and when it was durable. Absolute ms (performance.timeOrigin + now), newest batches kept.

export interface BatchTimes {
  targets: number;
  points: number;
  oldestAckMs: number;
  takenMs: number;
  evaluatedMs: number;
  writeStartMs: number;
  durableMs: number;
}

const FIELDS = 7;

export class BatchTimeline {
  private readonly rows: Float64Array;
  private n = 0;
  constructor(private readonly capacity = 20_000) {
    this.rows = new Float64Array(capacity * FIELDS);
  }

  add(b: BatchTimes): void {
    const at = (this.n % this.capacity) * FIELDS;
    const r = this.rows;
    r[at] = b.targets; r[at + 1] = b.points; r[at + 2] = b.oldestAckMs; r[at + 3] = b.takenMs;
    r[at + 4] = b.evaluatedMs; r[at + 5] = b.writeStartMs; r[at + 6] = b.durableMs;
    this.n++;
  }

  /** A batch's times, its oldest input ack (0: none waited) and points written taken from its windows and output batches. */
  addBatch(work: ReadonlyArray<{ ackMs: number }>, batches: ReadonlyArray<{ times: { length: number } }>,
    at: { takenMs: number; evaluatedMs: number; writeStartMs: number; durableMs: number }): void {
    let oldest = Infinity, points = 0;
    for (const w of work) if (w.ackMs > 0 && w.ackMs < oldest) oldest = w.ackMs;
    for (const b of batches) points += b.times.length;
    this.add({ targets: work.length, points, oldestAckMs: oldest === Infinity ? 0 : oldest, ...at });
  }

  reset(): void { this.n = 0; }

  /** The batches kept, oldest first. */
  list(): BatchTimes[] {
    const k = Math.min(this.n, this.capacity);
    const out: BatchTimes[] = [];
    for (let i = this.n - k; i < this.n; i++) {
      const at = (i % this.capacity) * FIELDS, r = this.rows;
      out.push({ targets: r[at], points: r[at + 1], oldestAckMs: r[at + 2], takenMs: r[at + 3], evaluatedMs: r[at + 4], writeStartMs: r[at + 5], durableMs: r[at + 6] });
    }
    return out;
  }
}
