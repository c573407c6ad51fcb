// One lane (live or backfill) of a collector session: its sequence, its credit and the
// ordered list of batches not yet settled. Acknowledgements are cumulative per lane
// (`acked_through`), so a batch settles only after every earlier batch of its lane has:
// a rejection reported at arrival still waits for the durable writes queued before it.

export type LaneName = 'LIVE' | 'BACKFILL';

interface Slot {
  seq: number;
  points: number;
  settled: boolean;
}

export interface LaneAck {
  ackedThrough: number;
  points: number;
}

export class SessionLane {
  /** Next seq the server expects (sequences start at 1 in every session). */
  expectedSeq = 1;
  ackedThrough = 0;
  /** Points the collector may still send; negative after an over-credit batch. */
  credit: number;
  batchesAccepted = 0;
  batchesRejected = 0;
  pointsWritten = 0;
  pointsRefused = 0;
  overCreditTotal = 0;
  /** Total time this lane had no credit (ms), plus the running interval. */
  private waitMs = 0;
  private waitingSinceMs: number | null = null;
  /** Points settled but whose credit is still withheld (backfill pacing). */
  withheld = 0;
  /** Points settled since the last ack message of this lane. */
  unsentAckPoints = 0;
  /** Points of the batches registered and not yet settled. */
  unsettledPoints = 0;
  /** The largest batch this lane has received (credit never shrinks below two of them). */
  largestBatch = 0;
  /** When the last batch arrived (performance.now()); -Infinity before the first. */
  lastBatchMs = -Infinity;
  private readonly slots: Slot[] = [];
  private head = 0;

  constructor(readonly name: LaneName, initialCredit: number) {
    this.credit = initialCredit;
  }

  /** Takes credit for an arriving batch; returns the credit held before it. */
  take(points: number): number {
    const before = this.credit;
    this.credit -= points;
    if (this.credit <= 0 && this.waitingSinceMs === null) this.waitingSinceMs = performance.now();
    return before;
  }

  give(points: number): void {
    this.credit += points;
    if (this.credit > 0 && this.waitingSinceMs !== null) {
      this.waitMs += performance.now() - this.waitingSinceMs;
      this.waitingSinceMs = null;
    }
  }

  creditWaitMs(): number {
    return this.waitMs + (this.waitingSinceMs === null ? 0 : performance.now() - this.waitingSinceMs);
  }

  /** Registers an arriving in-sequence batch; the returned slot is settled later. */
  open(points: number): Slot {
    const slot: Slot = { seq: this.expectedSeq++, points, settled: false };
    this.slots.push(slot);
    this.unsettledPoints += points;
    if (points > this.largestBatch) this.largestBatch = points;
    this.lastBatchMs = performance.now();
    return slot;
  }

  /** Marks a slot settled and returns the cumulative ack it unlocks, if any. */
  settle(slot: Slot): LaneAck | null {
    slot.settled = true;
    let points = 0;
    let through = this.ackedThrough;
    while (this.head < this.slots.length && this.slots[this.head].settled) {
      const s = this.slots[this.head++];
      points += s.points;
      this.unsettledPoints -= s.points;
      through = s.seq;
    }
    if (this.head > 1024 && this.head * 2 > this.slots.length) { this.slots.splice(0, this.head); this.head = 0; }
    if (through === this.ackedThrough) return null;
    this.ackedThrough = through;
    return { ackedThrough: through, points };
  }

  /** Batches registered and not yet settled. */
  unsettled(): number {
    return this.slots.length - this.head;
  }
}

export type { Slot };
