// When each target with pending work is due: one timer for the whole engine instead of a
// scan of every pending target per commit. Targets due now wait in a FIFO ready set (the
// oldest mark is evaluated first); targets waiting out a debounce sit in 10 ms slots, and
// one timer fires for the earliest slot and moves every slot that has passed to the ready
// set. Rescheduling (a debounce pushed back by a new commit) moves a target between slots
// in O(1); the slot numbers are a min-heap with lazy removal of emptied slots.
// With 10,000 targets and hundreds of commit groups a second, the former scan of the
// pending set on each commit and each pump turn was O(targets) per group.

/** Slot width: debounces are rounded up to it (a due time is never early). */
const SLOT_MS = 10;

export interface Scheduled {
  /** The slot the item waits in: -1 ready, 0 none, else its slot number. */
  wheelSlot: number;
}

export class DueWheel<T extends Scheduled> {
  private readonly ready = new Set<T>();
  private readonly slots = new Map<number, Set<T>>();
  private readonly heap: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private timerSlot = 0;

  /** `onReady` is called (from the timer) when waiting items become ready; `now` is the clock (tests give their own). */
  constructor(private readonly onReady: () => void, private readonly now: () => number = Date.now) {}

  /** Makes the item due at `dueMs` (now or earlier: ready at once), replacing where it was. */
  schedule(item: T, dueMs: number, nowMs = this.now()): void {
    if (dueMs <= nowMs) {
      if (item.wheelSlot === -1) return; // already ready: keep its place in line
      this.remove(item);
      this.ready.add(item);
      item.wheelSlot = -1;
      return;
    }
    const slot = Math.ceil(dueMs / SLOT_MS);
    if (item.wheelSlot === slot) return;
    this.remove(item);
    let set = this.slots.get(slot);
    if (!set) {
      set = new Set();
      this.slots.set(slot, set);
      heapPush(this.heap, slot);
    }
    set.add(item);
    item.wheelSlot = slot;
    this.arm();
  }

  remove(item: T): void {
    if (item.wheelSlot === -1) this.ready.delete(item);
    else if (item.wheelSlot !== 0) {
      const set = this.slots.get(item.wheelSlot);
      set?.delete(item);
      if (set && set.size === 0) this.slots.delete(item.wheelSlot); // its heap entry is dropped when reached
    }
    item.wheelSlot = 0;
  }

  /** Up to `max` ready items, oldest first, taken out of the wheel. */
  take(max: number): T[] {
    this.advance(this.now());
    const out: T[] = [];
    for (const item of this.ready) {
      if (out.length === max) break;
      out.push(item);
    }
    for (const item of out) { this.ready.delete(item); item.wheelSlot = 0; }
    return out;
  }

  hasReady(): boolean {
    this.advance(this.now());
    return this.ready.size > 0;
  }

  /** Moves every slot that has passed to the ready set. */
  private advance(nowMs: number): void {
    const nowSlot = Math.floor(nowMs / SLOT_MS);
    while (this.heap.length > 0 && this.heap[0] <= nowSlot) {
      const slot = heapPop(this.heap);
      const set = this.slots.get(slot);
      if (!set) continue;
      this.slots.delete(slot);
      for (const item of set) { this.ready.add(item); item.wheelSlot = -1; }
    }
  }

  /** One timer, for the earliest waiting slot. */
  private arm(): void {
    while (this.heap.length > 0 && !this.slots.has(this.heap[0])) heapPop(this.heap);
    if (this.heap.length === 0) return;
    const slot = this.heap[0];
    if (this.timer && this.timerSlot <= slot) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerSlot = slot;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.advance(this.now());
      this.arm();
      if (this.ready.size > 0) this.onReady();
    }, Math.max(0, slot * SLOT_MS - this.now()));
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

function heapPush(h: number[], v: number): void {
  h.push(v);
  let i = h.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (h[p] <= v) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = v;
}

function heapPop(h: number[]): number {
  const top = h[0];
  const last = h.pop() as number;
  if (h.length > 0) {
    let i = 0;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      let mv = last;
      if (l < h.length && h[l] < mv) { m = l; mv = h[l]; }
      if (r < h.length && h[r] < mv) { m = r; mv = h[r]; }
      if (m === i) break;
      h[i] = h[m];
      i = m;
    }
    h[i] = last;
  }
  return top;
}
