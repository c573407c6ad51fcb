// The closed vocabularies of the model: how an attribute's values continue between points
// (continuity) and who writes its series (writer class). One writer-class vocabulary serves
// both the attribute's `writer_class` and the series' `writable_class` (PUT
// /v1/series/{uuid}/writable-class), so an attribute and the series bound to it speak the
// same words. The HTTP schemas publish both lists as enums (docs/decisions.md, 2026-11-27).
import { ServiceError } from '../errors.js';

/**
 * continuous: values between points are interpolated (flows, temperatures);
 * stepped: a value holds until the next point (set points, states, counters);
 * event: each point stands alone, nothing holds between them (alarms, lab samples).
 * The same words as a trend trace's `continuity` in displays.
 */
export const CONTINUITY_CLASSES = ['continuous', 'stepped', 'event'] as const;
export type ContinuityClass = (typeof CONTINUITY_CLASSES)[number];

/**
 * collector: streamed by a collector over gRPC (the default of a new series);
 * calculation: written by the calculation engine;
 * manual: entered by a person (manual data entry, lab results);
 * import: loaded in bulk from files or another historian (backfills).
 */
export const WRITER_CLASSES = ['collector', 'calculation', 'manual', 'import'] as const;
export type WriterClass = (typeof WRITER_CLASSES)[number];

function checkOneOf(field: string, value: unknown, allowed: readonly string[]): void {
  if (typeof value === 'string' && allowed.includes(value)) return;
  const got = typeof value === 'string' ? `"${value}"` : `a ${value === null ? 'null' : typeof value}`;
  throw new ServiceError('invalid-request', `${field}: must be one of ${allowed.join(', ')}; received ${got}`,
    { errors: [{ field, problem: `must be one of ${allowed.join(', ')}`, allowed: [...allowed] }] });
}

export function checkContinuityClass(field: string, value: unknown): asserts value is ContinuityClass {
  checkOneOf(field, value, CONTINUITY_CLASSES);
}

export function checkWriterClass(field: string, value: unknown): asserts value is WriterClass {
  checkOneOf(field, value, WRITER_CLASSES);
}
