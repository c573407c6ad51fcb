// A small plant for the expression tests: a scope over named inputs with quantity kinds
// and units as the system registries define them, and column builders. Not a test file
// (tap runs *.test.ts only); shared by test/calc/expression-*.test.ts.
import type { ExpressionScope, InputDescriptor, PointColumns, QuantityKindRef, UnitDescriptor } from '../../src/calc/expression/index.js';

export const PRESSURE: QuantityKindRef = { id: 'qk-pressure', name: 'Pressure' };
export const FLOW: QuantityKindRef = { id: 'qk-flow', name: 'Volume flow rate' };
export const TEMPERATURE: QuantityKindRef = { id: 'qk-temperature', name: 'Temperature' };

const unit = (id: string, symbol: string, quantityKind: QuantityKindRef, factor: number, offset = 0): UnitDescriptor => ({ id, symbol, quantityKind, factor, offset });
export const UNITS: Record<string, UnitDescriptor> = {
  bar: unit('u-bar', 'bar', PRESSURE, 1e5),
  kPa: unit('u-kpa', 'kPa', PRESSURE, 1e3),
  psi: unit('u-psi', 'psi', PRESSURE, 4.4482216152605 / 0.00064516),
  'm³/h': unit('u-m3h', 'm³/h', FLOW, 1 / 3600),
  'L/s': unit('u-ls', 'L/s', FLOW, 0.001),
  '°C': unit('u-degc', '°C', TEMPERATURE, 1, 273.15),
  K: unit('u-k', 'K', TEMPERATURE, 1),
};

const numeric = (key: string, quantityKind: QuantityKindRef | null = null, u: UnitDescriptor | null = null, valueType: 'float64' | 'int64' = 'float64'): InputDescriptor =>
  ({ key, valueType, quantityKind, unitId: u?.id ?? null, unit: u, enumSet: null });

export const INPUTS: Record<string, InputDescriptor> = {
  a: numeric('A'), b: numeric('B'), c: numeric('C'), d: numeric('D'),
  Count: numeric('COUNT', null, null, 'int64'),
  'Discharge Pressure': numeric('DP', PRESSURE, UNITS.bar),
  'Suction Pressure': numeric('SP', PRESSURE, UNITS.kPa),
  Flow: numeric('FLOW', FLOW, UNITS['m³/h']),
  '..|Flow': numeric('PARENT-FLOW', FLOW, UNITS['L/s']),
  '../Pump 2|Flow': numeric('P2-FLOW', FLOW, UNITS['m³/h']),
  Temperature: numeric('T', TEMPERATURE, UNITS['°C']),
  Running: { key: 'RUN', valueType: 'bool', quantityKind: null, unitId: null, unit: null, enumSet: null },
  State: { key: 'STATE', valueType: 'enum', quantityKind: null, unitId: null, unit: null, enumSet: 'PumpState' },
  'Other State': { key: 'STATE2', valueType: 'enum', quantityKind: null, unitId: null, unit: null, enumSet: 'ValveState' },
  Mode: { key: 'MODE', valueType: 'string', quantityKind: null, unitId: null, unit: null, enumSet: null },
  'Mode 2': { key: 'MODE2', valueType: 'string', quantityKind: null, unitId: null, unit: null, enumSet: null },
};

const ENUMS: Record<string, string[]> = { PumpState: ['Stopped', 'Running', 'Tripped'], ValveState: ['Closed', 'Open'] };

export const scope: ExpressionScope = {
  reference: (text) => INPUTS[text] ?? null,
  unit: (symbol) => UNITS[symbol] ?? null,
  enumMember: (set, member) => {
    const i = ENUMS[set]?.indexOf(member) ?? -1;
    return i < 0 ? null : i;
  },
};

export const outputOf = (key: string, quantityKind: QuantityKindRef | null, u: UnitDescriptor | null, valueType: InputDescriptor['valueType'] = 'float64'): InputDescriptor =>
  ({ key, valueType, quantityKind, unitId: u?.id ?? null, unit: u, enumSet: null });

export const SEC = 1_000_000_000;
export const BASE = 1_800_000_000_000_000_000n;

/** float64 columns from [seconds after BASE, value, quality?] triples. */
export function floats(points: Array<[number, number, number?]>, tsBase = BASE): PointColumns {
  const n = points.length;
  return {
    type: 'float64', count: n, tsBase,
    tsOffset: Float64Array.from(points, ([s]) => Math.round(s * SEC) - Number(tsBase - BASE)),
    f64: Float64Array.from(points, ([, v]) => v), i64: null, u8: null, ord: null, str: null,
    quality: Uint32Array.from(points, ([, , q]) => q ?? 192),
  };
}

export function typed(type: 'int64' | 'boolean' | 'enum' | 'string', points: Array<[number, number | string]>): PointColumns {
  const n = points.length;
  return {
    type, count: n, tsBase: BASE, tsOffset: Float64Array.from(points, ([s]) => Math.round(s * SEC)), f64: null,
    i64: type === 'int64' ? BigInt64Array.from(points, ([, v]) => BigInt(v as number)) : null,
    u8: type === 'boolean' ? Uint8Array.from(points, ([, v]) => v as number) : null,
    ord: type === 'enum' ? Int32Array.from(points, ([, v]) => v as number) : null,
    str: type === 'string' ? points.map(([, v]) => String(v)) : null,
    quality: new Uint32Array(n).fill(192),
  };
}

/** A grid at the given seconds after BASE. */
export function gridAt(seconds: number[]) {
  return { tsBase: BASE, tsOffset: Float64Array.from(seconds, (s) => Math.round(s * SEC)), count: seconds.length };
}
