// Test-side reader of the columnar raw layout (layout=columns): turns the decoded msgpack
// body back into points, the way a client would, so tests can compare it point by point.
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';

export interface ColumnsBody {
  series: string;
  layout: 'columns';
  value_type: ValueType;
  enum_set: string | null;
  count: number;
  encoding: { ts_ns: string; value: string; quality: string };
  points: { ts_ns: Uint8Array; value: Uint8Array | string[]; quality: Uint8Array };
  next_cursor: string | null;
}

export interface ColumnPoint { ts_ns: bigint; value: number | bigint | boolean | string | { enum_set: string; ordinal: number }; quality: number }

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** Points of a columns body; throws when a column's length disagrees with `count`. */
export function columnPoints(body: ColumnsBody): ColumnPoint[] {
  const n = body.count;
  const { ts_ns: ts, value, quality } = body.points;
  const qWidth = body.encoding.quality === 'uint8' ? 1 : 4;
  const vWidth = { float64le: 8, int64le: 8, int32le: 4, uint8: 1, string: 0 }[body.encoding.value];
  if (vWidth === undefined) throw new Error(`unknown value encoding ${body.encoding.value}`);
  if (ts.byteLength !== 8 * n || quality.byteLength !== qWidth * n) throw new Error('column length disagrees with count');
  if (Array.isArray(value) ? value.length !== n : value.byteLength !== vWidth * n) throw new Error('value column length disagrees with count');
  const tv = view(ts), qv = view(quality), vv = Array.isArray(value) ? null : view(value);
  const out: ColumnPoint[] = [];
  for (let i = 0; i < n; i++) {
    let v: ColumnPoint['value'];
    switch (body.encoding.value) {
      case 'float64le': v = vv!.getFloat64(8 * i, true); break;
      case 'int64le': v = vv!.getBigInt64(8 * i, true); break;
      case 'int32le': v = vv!.getInt32(4 * i, true); break;
      case 'uint8': v = vv!.getUint8(i); break;
      default: v = (value as string[])[i];
    }
    if (body.value_type === 'boolean') v = v === 1;
    else if (body.value_type === 'enum') v = { enum_set: body.enum_set!, ordinal: v as number };
    out.push({ ts_ns: tv.getBigInt64(8 * i, true), value: v, quality: qWidth === 1 ? qv.getUint8(i) : qv.getUint32(4 * i, true) });
  }
  return out;
}

/** A JSON columns body as our lossless parser gives it: int64 beyond 2^53 as bigint. */
export interface JsonColumnsBody {
  series: string;
  layout: 'columns';
  value_type: ValueType;
  enum_set: string | null;
  count: number;
  points: { ts_ns: Array<number | bigint>; value: unknown[]; quality: number[] };
  next_cursor: string | null;
}

/** Points of a JSON columns body; throws when an array's length disagrees with `count`. */
export function jsonColumnPoints(body: JsonColumnsBody): ColumnPoint[] {
  const { ts_ns: ts, value, quality } = body.points;
  if (ts.length !== body.count || value.length !== body.count || quality.length !== body.count) throw new Error('array length disagrees with count');
  return ts.map((t, i) => {
    const v = value[i];
    // an integral float64 past 2^53 prints as an integer, which the lossless parser gives as a bigint
    const typed = body.value_type === 'int64' ? BigInt(v as number | bigint)
      : body.value_type === 'float64' ? Number(v as number | bigint)
        : body.value_type === 'enum' ? { enum_set: body.enum_set!, ordinal: v as number } : v as ColumnPoint['value'];
    return { ts_ns: BigInt(t), value: typed, quality: quality[i] };
  });
}
