// What the engine knows of one target (a rule on one asset) between batches: how far its
// outputs are durable, the window it still owes, and where the due wheel holds it.
import type { Target } from './pool-windows.js';
import type { LineageCursor } from './progress-store.js';
import type { Ring } from './trace-ring.js';
import type { TraceContext } from '../../calc-kernel/window-eval.js';

export interface TargetState {
  readonly key: string;
  target: Target;
  /** Outputs are durable through this instant (INT64_MIN: nothing evaluated). */
  through: bigint;
  dirtyFrom: bigint | null;
  dirtyTo: bigint;
  dueMs: number;
  /** Where the due wheel holds it (due-wheel.ts). */
  wheelSlot: number;
  /** When the oldest pending mark was made (ms), for lag. */
  dirtySinceMs: number;
  /** Ack time (absolute ms) of the oldest input commit waiting for this target, for latency (the longest wait counts). */
  inputDurableMs: number;
  provisionalFromNs: bigint | null;
  lastError: string | null;
  /** This target's newest lineage window (extended while its version continues). */
  lineage: LineageCursor;
  /** The trace ring and context of `target` (made at its first traced window; a new target looks them up again). */
  trace?: { target: Target; context: TraceContext; ring: Ring };
}
