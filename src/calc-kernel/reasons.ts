// Reasons travel through the evaluation as bit flags (an undefined operand makes its
// result undefined: the flags OR together), and leave it as one code, the lowest set bit,
// so the most basic cause wins: an input without a value before a division by zero.
import { EVALUATION_REASONS, type EvaluationReason } from './evaluation.js';

const flag = (reason: EvaluationReason): number => 1 << (EVALUATION_REASONS.indexOf(reason) - 1);

export const NO_VALUE = flag('no-input-value');
export const DIVISION_BY_ZERO = flag('division-by-zero');
export const DOMAIN_ERROR = flag('domain-error');
export const NON_FINITE = flag('non-finite');
export const CONDITION_FALSE = flag('condition-false');
export const LOOKBACK_EXCEEDED = flag('lookback-exceeded');

/** The reason code (index into EVALUATION_REASONS) of a set of flags; 0 for none. */
export function reasonCode(flags: number): number {
  return flags === 0 ? 0 : 32 - Math.clz32(flags & -flags);
}

/** Constants carry this quality: above every real one, so min() ignores them; reported as good (192). */
export const CONSTANT_QUALITY = 0xffffffff;
export const GOOD_QUALITY = 192;
