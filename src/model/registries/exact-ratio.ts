// The exact ratios moved to the bottom of src (src/exact-ratio.ts) so that the read
// workers, below the model, convert units with the same arithmetic; this keeps the
// registry's imports as they were.
export * from '../../exact-ratio.js';
