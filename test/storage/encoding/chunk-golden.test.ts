import t from 'tap';
import { decodeChunk, FORMAT_VERSION, readChunkHeader } from '../../../src/storage/encoding/chunk.js';
import { createPointColumns } from '../../../src/storage/encoding/point-columns.js';
import { type PointRun, timeAt, toColumns } from '../../helpers/chunk-arbitraries.js';

// Golden bytes of format version 1. Version 2 (chunk-golden-v2.test.ts) is what the
// encoder writes now; these pin that the decoder keeps reading version 1 chunks.
const T0 = 1_700_000_000_000_000_000n;
const GOLDEN_V1: Array<{ name: string; run: PointRun; hex: string }> = [
  {
    name: 'decimal',
    run: { type: 'float64', firstTs: T0, o0: 0, deltas: [1_003_000_000, 998_000_000, 1_001_000_000, 1_000_000_000], values: [20.5, 20.6, 20.6, 20.4, 20.7], quality: [192, 192, 192, 192, 192] },
    hex: [
      '010000000500000000002a36fe9c971780acb324ff9c971780e218e9fe9c971780acb324ff9c97176666666666663440',
      '3333333333b3344000000000008034403333333333b334400500000000000000000000008a0000007400000081000000',
      '3177fff800c0843de90700040001040105020101000100049a030102020301060100018003052fd10c0b',
    ].join(''),
  },
  {
    name: 'split',
    run: { type: 'float64', firstTs: T0, o0: 0, deltas: [1, 2], values: [0.1 + 0.2, -0, 5e-324], quality: [192, 64, 0] },
    hex: [
      '010000000300000000002a36fe9c971703002a36fe9c971701002a36fe9c971700002a36fe9c97170000000000000080',
      '343333333333d33f343333333333d33f0100000000000000010000000100000001000000a60000006d00000098000000',
      '7b4734d90001020002000101020100030001020101010002fa0f01f90f020002e6cc1901e5cc19020003e8cc99b30601',
      'e7cc99b3060102010003800301ff01017f010e6d95ab',
    ].join(''),
  },
  {
    name: 'int64',
    run: { type: 'int64', firstTs: -(2n ** 63n), o0: 0, deltas: [7, 7], values: [2n ** 63n - 1n, -(2n ** 63n), 0n], quality: [192, 192, 192] },
    hex: [
      '010100000300000000000000000000800e00000000000080070000000000008000000000000000800000000000000080',
      'ffffffffffffff7fffffffffffffff7f00000000000000000300000000000000000000008a0000006b00000081000000',
      'a5742cbf0007010001000301feffffffffffffffff0102ffffffffffffffffff0100018003036857fdc6',
    ].join(''),
  },
  {
    name: 'boolean',
    run: { type: 'boolean', firstTs: T0, o0: 0, deltas: [1e9, 1e9, 1e9, 1e9, 1e9], values: [0, 0, 0, 1, 1, 0], quality: [192, 192, 192, 192, 0, 0] },
    hex: [
      '010200000600000000002a36fe9c971700f22f60ff9c971700002a36fe9c9717005efae8fe9c97170000000000000000',
      '000000000000f03f00000000000000000000000000000000040000000000000002000000830000006f00000077000000',
      'd14dee04008094ebdc03010001000600030003020201010002800304ff0202248b4530',
    ].join(''),
  },
  {
    name: 'enum',
    run: { type: 'enum', firstTs: 0n, o0: 0, deltas: [100, 100, 100], values: [3, 3, 5, -1], quality: [4294967295, 192, 192, 192] },
    hex: [
      '010400000400000000000000000000002c010000000000002c01000000000000c800000000000000000000000000f0bf',
      '00000000000014400000000000000840000000000000f0bf040000000000000000000000850000006b00000073000000',
      'db6bcbd7006401000100040003060204010b010002feffffff1f01fdfcffff1f0336c7ae64',
    ].join(''),
  },
  {
    name: 'string',
    run: { type: 'string', firstTs: T0, o0: 0, deltas: [10e9, 10e9, 10e9], values: ['B-1', 'B-1', 'é𝄞', ''], quality: [192, 192, 192, 192] },
    hex: [
      '010300000400000000002a36fe9c971700ac4d32059d971700002a36fe9c971700002a36fe9c9717000000000000f87f',
      '000000000000f87f000000000000f87f000000000000f87f0400000000000000000000008d0000006f00000084000000',
      'f6efeeaa0080c8afa02501000100040303422d3106c3a9f09d849e00000300020201020100018003041c56f4d3',
    ].join(''),
  },
  {
    name: 'gapped time',
    run: { type: 'int64', firstTs: T0, o0: 0, deltas: [1_002_000_000, 999_000_000, 5_004_000_000, 1_000_000_000], values: [100n, 101n, 101n, 105n, 110n], quality: [192, 192, 0, 0, 192] },
    hex: [
      '010100000500000000002a36fe9c9717409b4c13009d971700002a36fe9c9717409b4c13009d97176400000000000000',
      '6e0000000000000064000000000000006e00000000000000030000000000000002000000950000007a00000086000000',
      'd4897b8b02c0843de80700020003080200040001040101010802000004c80101020208010a010003800302ff02028003',
      '010c7d3415',
    ].join(''),
  },

];

t.equal(FORMAT_VERSION, 5, 'the encoder writes version 5; these goldens are version 1');

for (const g of GOLDEN_V1) {
  t.test(`a version 1 ${g.name} chunk still decodes to its points`, async (t) => {
    const cols = toColumns(g.run);
    const bytes = new Uint8Array(Buffer.from(g.hex, 'hex'));
    t.equal(readChunkHeader(bytes).formatVersion, 1);
    const out = createPointColumns(cols.type, 8);
    t.equal(decodeChunk(bytes, out), cols.count);
    for (let i = 0; i < cols.count; i++) {
      t.equal(timeAt(out, i), timeAt(cols, i), `time ${i}`);
      t.equal(out.quality[i], cols.quality[i], `quality ${i}`);
    }
    const col = { float64: 'f64', int64: 'i64', boolean: 'u8', enum: 'ord', string: 'str' }[cols.type] as 'f64' | 'i64' | 'u8' | 'ord' | 'str';
    const want = Array.from(cols[col] as ArrayLike<unknown>).slice(0, cols.count);
    const got = Array.from(out[col] as ArrayLike<unknown>).slice(0, cols.count);
    t.ok(want.every((v, i) => Object.is(v, got[i])), `values ${JSON.stringify(got.map(String))}`);
  });
}
