// Inputs of an evaluation as the engine and episode triggers read them; the reading itself
// is src/calc-kernel/input-read.ts, shared with the read pool's workers.
export { readInput, emptyColumns } from '../../calc-kernel/input-read.js';
