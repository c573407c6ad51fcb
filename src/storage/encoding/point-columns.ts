// Allocation of PointColumns for one value type: the engine and the workers allocate
// one set per series type at MAX_CHUNK_POINTS capacity and reuse it for every chunk.

import type { PointColumns, ValueType } from './chunk-types.js';

/** Bytes one value takes in its PointColumns typed column (strings: 0, they are JS strings). */
export function valueBytes(type: ValueType): number {
  switch (type) {
    case 'float64': case 'int64': return 8;
    case 'enum': return 4;
    case 'boolean': return 1;
    case 'string': return 0;
  }
}

export function createPointColumns(type: ValueType, capacity: number): PointColumns {
  return {
    type,
    count: 0,
    tsBase: 0n,
    tsOffset: new Float64Array(capacity),
    f64: type === 'float64' ? new Float64Array(capacity) : null,
    i64: type === 'int64' ? new BigInt64Array(capacity) : null,
    u8: type === 'boolean' ? new Uint8Array(capacity) : null,
    ord: type === 'enum' ? new Int32Array(capacity) : null,
    str: type === 'string' ? new Array<string>(capacity).fill('') : null,
    quality: new Uint32Array(capacity),
  };
}

/** A view of points [start, start+count) of cols that shares its buffers (no copy). */
export function slicePointColumns(cols: PointColumns, start: number, count: number): PointColumns {
  const end = start + count;
  return {
    type: cols.type,
    count,
    tsBase: cols.tsBase,
    tsOffset: cols.tsOffset.subarray(start, end),
    f64: cols.f64 === null ? null : cols.f64.subarray(start, end),
    i64: cols.i64 === null ? null : cols.i64.subarray(start, end),
    u8: cols.u8 === null ? null : cols.u8.subarray(start, end),
    ord: cols.ord === null ? null : cols.ord.subarray(start, end),
    str: cols.str === null ? null : cols.str.slice(start, end),
    quality: cols.quality.subarray(start, end),
  };
}
