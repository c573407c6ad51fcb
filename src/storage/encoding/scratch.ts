// Per-thread scratch columns for encoders and decoders. Each slot is one reusable
// Float64Array grown on demand and never shrunk, so steady-state coding allocates
// nothing. Slots are distinct so that a decoder holding one (say, exponents) can call a
// helper that uses another. The returned arrays are views valid until the next call for
// the same slot; the codecs are synchronous, so no caller holds one across an await.

export const ScratchSlot = {
  IntDeltas: 0,
  IntTyped: 1,
  FloatSigns: 2,
  FloatExponents: 3,
  FloatMantissas: 4,
  ValueNumbers: 5,
  TimeUnits: 6,
  BlockMeta: 7,
  TimeOffsets: 8,
  FloatMantissasLow: 9,
  TimeSkips: 10,
  TimeResiduals: 11,
  Quality: 12,
  RangeBlock: 13,
  RiceCheckpoints: 14,
  RiceRange: 15,
} as const;
export type ScratchSlot = (typeof ScratchSlot)[keyof typeof ScratchSlot];

const slots: Float64Array[] = [];

export function scratchColumn(slot: ScratchSlot, n: number): Float64Array {
  const cur = slots[slot];
  if (cur !== undefined && cur.length >= n) return cur;
  const grown = new Float64Array(Math.max(n, 1024, cur === undefined ? 0 : Math.ceil(cur.length * 1.5)));
  slots[slot] = grown;
  return grown;
}
