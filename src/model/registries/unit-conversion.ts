// Unit conversion through a quantity kind's canonical unit. Each unit u carries an exact
// factor f_u and offset o_u with canonical = v·f_u + o_u, so a value converts from a to b
// as v_b = v_a·(f_a/f_b) + (o_a − o_b)/f_b. The combined factor and offset are computed
// once per pair (a UnitConversion), exactly, and every value is rounded once.
import { ServiceError } from '../../errors.js';
import { type Ratio, ONE, ZERO, add, sub, mul, div, fromDouble, toDouble, equals } from './exact-ratio.js';

export interface UnitScale {
  id: string;
  /** Quantity kind the unit measures. */
  kindId: string;
  factor: Ratio;
  offset: Ratio;
}

export interface UnitConversion {
  readonly factor: Ratio;
  readonly offset: Ratio;
  /** True when the conversion changes nothing (same unit, or an alias with factor 1 and offset 0). */
  readonly identity: boolean;
  /** Converts one value; non-finite values pass through unchanged (they carry no magnitude). */
  apply(value: number): number;
  /** Converts a column in place or into out (same length); returns out. */
  applyColumn(values: Float64Array, out?: Float64Array): Float64Array;
}

/** The conversion from one unit to another of the same quantity kind. */
export function unitConversion(from: UnitScale, to: UnitScale): UnitConversion {
  if (from.kindId !== to.kindId) {
    throw new ServiceError('invalid-request', `unit ${from.id} and unit ${to.id} measure different quantity kinds (${from.kindId}, ${to.kindId})`,
      { errors: [{ field: 'unit', problem: 'different quantity kinds' }] });
  }
  const factor = div(from.factor, to.factor);
  const offset = div(sub(from.offset, to.offset), to.factor);
  const identity = equals(factor, ONE) && equals(offset, ZERO);
  const apply = (value: number): number => {
    if (identity || !Number.isFinite(value)) return value;
    return toDouble(add(mul(fromDouble(value), factor), offset));
  };
  return {
    factor, offset, identity, apply,
    applyColumn(values, out = values) {
      if (out.length !== values.length) throw new RangeError('BUG: applyColumn output length differs from input');
      for (let i = 0; i < values.length; i++) out[i] = apply(values[i]);
      return out;
    },
  };
}

/** Converts one value between two units (see unitConversion for repeated use). */
export function convertValue(value: number, from: UnitScale, to: UnitScale): number {
  return unitConversion(from, to).apply(value);
}
