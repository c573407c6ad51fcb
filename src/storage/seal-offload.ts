// The writer's side of the seal thread. When an append fills a head, the writer posts a copy
// of its open points to the thread instead of encoding them inside its write transaction;
// the head stays open (its points are durable in head segments meanwhile). The chunks come
// back as messages and the next write transaction stores them (write-apply.ts
// installSeals), but only if the head's front is still the one copied: a merge, a replace
// or a seal in between changes frontVersion and the chunks are dropped (the head is then
// simply sealed again). A bounded number of copies is in flight; beyond it a full head waits
// for its next append, and one at the point cap (or one the thread failed) is sealed by the
// writer in its own thread as before.
import type { Worker } from 'node:worker_threads';
import { headIsFull, type SealBudget } from './chunk-fit.js';
import type { PointColumns } from './encoding/chunk-types.js';
import { CALIBRATE_MIN_POINTS, type OpenHead } from './open-head.js';
import type { SealReply, SealRequest } from './seal-messages.js';
import { siblingEntry, startThread } from '../threads/thread-boot.js';

/** Heads whose copies may be on the thread at once (~16 B per point each, at most a few chunks). */
export const MAX_SEALS_IN_FLIGHT = 256;

/** Replies one write transaction stores at most (~30 µs each: a chunk put, the head's persist). */
export const MAX_INSTALLS_PER_TXN = 64;

export interface FinishedSeal {
  series: Buffer;
  head: OpenHead;
  /** head.frontVersion when its points were copied. */
  version: number;
  /** Every copied point was sealed (requestAll): the last chunk may be short. */
  all: boolean;
  reply: SealReply;
}

interface InFlight {
  series: Buffer;
  head: OpenHead;
  version: number;
  all: boolean;
}

const NO_QUALITY = new Uint32Array(0);

/**
 * A copy of the head's open points. A head whose points all have one quality (`uniform`,
 * what a collector sending none gives) sends no quality column: the thread views a column
 * of its own filled with it (4 of a copy's 20 B a float64 point: allocated, copied and
 * collected on the writer's thread for nothing).
 */
function copyOpenPoints(c: PointColumns, uniform: number): { cols: PointColumns; transfer: ArrayBuffer[] } {
  const n = c.count;
  const cols: PointColumns = {
    type: c.type, count: n, tsBase: c.tsBase,
    tsOffset: c.tsOffset.slice(0, n),
    f64: c.f64 === null ? null : c.f64.slice(0, n),
    i64: c.i64 === null ? null : c.i64.slice(0, n),
    u8: c.u8 === null ? null : c.u8.slice(0, n),
    ord: c.ord === null ? null : c.ord.slice(0, n),
    str: c.str === null ? null : c.str.slice(0, n),
    quality: uniform >= 0 ? NO_QUALITY : c.quality.slice(0, n),
  };
  const transfer: ArrayBuffer[] = [cols.tsOffset.buffer as ArrayBuffer];
  if (uniform < 0) transfer.push(cols.quality.buffer as ArrayBuffer);
  for (const v of [cols.f64, cols.i64, cols.u8, cols.ord]) if (v !== null) transfer.push(v.buffer as ArrayBuffer);
  return { cols, transfer };
}

export class SealOffload {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly inFlight = new Map<number, InFlight>();
  private finished: FinishedSeal[] = [];
  private closed = false;
  /** Encoder failures reported by the thread (the heads went back to sealing in the writer). */
  failures = 0;
  /** Chunks stored from the thread's replies, and replies dropped because their head had changed. */
  installedChunks = 0;
  staleReplies = 0;

  /** onFinished: chunks are waiting for a write transaction to store them. */
  constructor(private readonly onFinished: () => void, private readonly maxInFlight = MAX_SEALS_IN_FLIGHT) {
    this.worker = startThread(siblingEntry(import.meta.url, 'seal-thread'), {});
    // the bootstrap's start-failed note is not a reply: the thread then exits and fail() follows
    this.worker.on('message', (m: SealReply | { rpc: string }) => {
      if ('id' in m) this.receive(m);
    });
    this.worker.on('error', () => this.fail());
    this.worker.on('exit', () => this.fail());
    this.worker.unref();
  }

  /** Copies on the thread plus replies not yet taken by a write transaction. */
  get pending(): number { return this.inFlight.size + this.finished.length; }

  /**
   * Sends a full head's points to the thread. True when the head needs nothing more from
   * the writer now (sent, already on the thread, not full, or deferred while the queue is
   * full); false: seal it in the writer.
   */
  request(series: Buffer, head: OpenHead, budget: SealBudget): boolean {
    if (head.sealPending) return true;
    // a series not measured yet goes too, once it has enough points: the thread samples it
    const measure = Number.isNaN(head.bytesPerPoint) && head.count >= CALIBRATE_MIN_POINTS;
    if (!measure && !headIsFull(head.count, head.bytesPerPoint, budget)) return true;
    if (this.closed || head.sealHere) return false;
    // Queue full: a head below the point cap waits for its next append (its points are
    // durable in head segments); one at the cap is sealed by the writer now.
    if (this.inFlight.size >= this.maxInFlight) return head.count < budget.chunkPoints;
    this.send(series, head, budget, false);
    return true;
  }

  /**
   * Sends a whole head to be sealed, its last chunk short (a quiet seal). False when the
   * thread cannot take it (closed, failed on this head, or every copy slot taken): the
   * writer then seals it itself. A head already on the thread counts as sent: its reply
   * comes first, and what it leaves open goes with the next quiet seal.
   */
  requestAll(series: Buffer, head: OpenHead, budget: SealBudget): boolean {
    if (head.sealPending) return true;
    if (this.closed || head.sealHere || this.inFlight.size >= this.maxInFlight) return false;
    this.send(series, head, budget, true);
    return true;
  }

  /** Copy slots free on the thread. */
  get room(): number { return this.closed ? 0 : Math.max(0, this.maxInFlight - this.inFlight.size); }

  private send(series: Buffer, head: OpenHead, budget: SealBudget, all: boolean): void {
    const quality = head.commonQuality;
    const { cols, transfer } = copyOpenPoints(head.cols, quality);
    const id = this.nextId++;
    const req: SealRequest = { id, cols, quality, budget, bytesPerPoint: head.bytesPerPoint, all };
    this.inFlight.set(id, { series, head, version: head.frontVersion, all });
    head.sealPending = true;
    this.worker.postMessage(req, transfer);
  }

  /**
   * Up to `limit` of the replies received, oldest first; their heads may be sent again from
   * now on. The limit spreads the stores of a burst of replies (all heads of lockstep
   * collectors fill together) over several transactions.
   */
  take(limit = MAX_INSTALLS_PER_TXN): FinishedSeal[] {
    const out = this.finished.length <= limit ? this.finished : this.finished.slice(0, limit);
    this.finished = this.finished.length <= limit ? [] : this.finished.slice(limit);
    for (const f of out) f.head.sealPending = false;
    if (this.finished.length > 0) this.onFinished();
    return out;
  }

  private receive(reply: SealReply): void {
    const f = this.inFlight.get(reply.id);
    if (f === undefined) return;
    this.inFlight.delete(reply.id);
    if (reply.error !== null) { this.failures++; f.head.sealHere = true; }
    this.finished.push({ series: f.series, head: f.head, version: f.version, all: f.all, reply });
    if (this.finished.length === 1) this.onFinished();
  }

  /** The thread died: every head in flight is sealed by the writer from now on. */
  private fail(): void {
    if (this.closed) return;
    this.closed = true;
    for (const f of this.inFlight.values()) f.head.sealPending = false;
    this.inFlight.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const f of this.inFlight.values()) f.head.sealPending = false;
    this.inFlight.clear();
    await this.worker.terminate();
  }
}
