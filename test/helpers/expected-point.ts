// What the raw writers must emit as a point's value for decoded columns (JSON/msgpack shape).
import type { PointColumns } from '../../src/storage/encoding/chunk-types.js';

export function expectedPointValue(c: PointColumns, i: number, enumSet: string): unknown {
  switch (c.type) {
    case 'float64': return c.f64![i];
    case 'int64': return c.i64![i];
    case 'boolean': return c.u8![i] === 1;
    case 'enum': return { enum_set: enumSet, ordinal: c.ord![i] };
    case 'string': return c.str![i];
  }
}
