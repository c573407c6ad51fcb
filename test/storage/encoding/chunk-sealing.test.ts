import t from 'tap';
import {
  CHUNK_BYTE_BUDGET, decodeChunk, encodeChunkPrefix, MAX_CHUNK_POINTS, readChunkHeader,
} from '../../../src/storage/encoding/chunk.js';
import type { PointColumns, ValueType } from '../../../src/storage/encoding/chunk-types.js';
import { createPointColumns, slicePointColumns } from '../../../src/storage/encoding/point-columns.js';
import { timeAt, toColumns } from '../../helpers/chunk-arbitraries.js';

type DatasetValue = number | boolean | string | { ordinal: number };
interface DatasetModule {
  datasetSeries(o: { series: number; points: number; seed: number }): Array<{ kind: string; type: ValueType; points(): Iterable<[bigint, DatasetValue, number]> }>;
}
const { datasetSeries } = (await import('../../../../shared/datasets/industrial.mjs' as string)) as DatasetModule;

function datasetColumns(type: ValueType, pts: Array<[bigint, DatasetValue, number]>): PointColumns {
  const cols = createPointColumns(type, pts.length);
  cols.count = pts.length;
  cols.tsBase = pts[0][0];
  pts.forEach(([ts, v, q], i) => {
    cols.tsOffset[i] = Number(ts - cols.tsBase);
    cols.quality[i] = q;
    if (cols.f64) cols.f64[i] = v as number;
    else if (cols.i64) cols.i64[i] = BigInt(v as number);
    else if (cols.u8) cols.u8[i] = v ? 1 : 0;
    else if (cols.ord) cols.ord[i] = (v as { ordinal: number }).ordinal;
    else if (cols.str) cols.str[i] = v as string;
  });
  return cols;
}

t.test('sealing each kind of dataset series at the byte budget keeps every point exactly once and every chunk within budget', async (t) => {
  // 14 series cover every kind twice (kinds are spread over the index range).
  for (const s of datasetSeries({ series: 14, points: 12_000, seed: 7 })) {
    const cols = datasetColumns(s.type, [...s.points()]);
    const out = createPointColumns(s.type, MAX_CHUNK_POINTS);
    let at = 0;
    let chunks = 0;
    let mismatch = '';
    while (at < cols.count) {
      const { bytes, count } = encodeChunkPrefix(slicePointColumns(cols, at, cols.count - at));
      if (bytes.length > CHUNK_BYTE_BUDGET) mismatch ||= `chunk ${chunks} is ${bytes.length} bytes`;
      if (count < cols.count - at && count < MAX_CHUNK_POINTS && bytes.length < CHUNK_BYTE_BUDGET * 0.9) mismatch ||= `chunk ${chunks} filled only ${bytes.length} bytes`;
      const h = readChunkHeader(bytes);
      if (h.count !== count || h.firstTs !== timeAt(cols, at)) mismatch ||= `chunk ${chunks} header disagrees`;
      decodeChunk(bytes, out);
      for (let i = 0; i < count && !mismatch; i++) {
        if (timeAt(out, i) !== timeAt(cols, at + i) || out.quality[i] !== cols.quality[at + i]) mismatch = `point ${at + i} time/quality`;
        const same = s.type === 'float64' ? Object.is(out.f64![i], cols.f64![at + i])
          : s.type === 'int64' ? out.i64![i] === cols.i64![at + i]
            : s.type === 'boolean' ? out.u8![i] === cols.u8![at + i]
              : s.type === 'enum' ? out.ord![i] === cols.ord![at + i]
                : out.str![i] === cols.str![at + i];
        if (!same) mismatch = `point ${at + i} value`;
      }
      at += count;
      chunks++;
    }
    t.equal(mismatch, '', `${s.kind}: ${cols.count} points in ${chunks} chunks`);
  }
});

t.test('a run that fits is sealed whole, up to MAX_CHUNK_POINTS', async (t) => {
  const n = MAX_CHUNK_POINTS + 100;
  const cols = toColumns({ type: 'boolean', firstTs: 0n, o0: 0, deltas: new Array<number>(n - 1).fill(1e9), values: new Array<number>(n).fill(1), quality: new Array<number>(n).fill(192) });
  const small = encodeChunkPrefix(slicePointColumns(cols, 0, 300));
  t.equal(small.count, 300, 'a short run is one chunk');
  const big = encodeChunkPrefix(cols);
  t.equal(big.count, MAX_CHUNK_POINTS, 'a constant series stops at the point cap');
  t.ok(big.bytes.length < 400, `a constant ${MAX_CHUNK_POINTS}-point chunk costs ${big.bytes.length} bytes`);
});

t.test('a single point larger than the budget is still sealed, alone', async (t) => {
  const cols = toColumns({ type: 'string', firstTs: 0n, o0: 0, deltas: [1], values: ['x'.repeat(CHUNK_BYTE_BUDGET + 1000), 'y'], quality: [192, 192] });
  const r = encodeChunkPrefix(cols);
  t.equal(r.count, 1);
  t.ok(r.bytes.length > CHUNK_BYTE_BUDGET);
});
