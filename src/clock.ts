// The service's clock in int64 nanoseconds since the Unix epoch. Anchored once to the
// wall clock and advanced by the monotonic high-resolution timer, so successive
// readings never go backwards within a process and carry real sub-millisecond digits.
const anchorEpochNs = BigInt(Date.now()) * 1_000_000n;
const anchorHr = process.hrtime.bigint();
let last = 0n;

export function nowNs(): bigint {
  let t = anchorEpochNs + (process.hrtime.bigint() - anchorHr);
  if (t <= last) t = last + 1n; // strictly increasing: usable as an ordering key
  last = t;
  return t;
}
