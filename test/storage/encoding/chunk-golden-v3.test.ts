import t from 'tap';
import { encodeChunk, FORMAT_VERSION, readChunkHeader, readInt64Extremes } from '../../../src/storage/encoding/chunk.js';
import { ChunkSummary, readChunkSummary } from '../../../src/storage/encoding/chunk-range.js';
import { HeaderView } from '../../../src/storage/render-scan.js';
import { type PointRun, timeAt, toColumns } from '../../helpers/chunk-arbitraries.js';
import { checkDecodesExactly, checkGroupDirectory, GOLDEN_HEX_V2, GOLDEN_RUNS, T0 } from '../../helpers/chunk-golden-runs.js';

// Golden bytes pin format version 3 (the compact header: tag byte, firstTs, varints, value
// slots in the column's integer domain; FORMAT.md "Header, version 3"): a change to any
// layout shows here as a diff of hex. The runs are those of the version 2 goldens
// (test/helpers/chunk-golden-runs.ts), so the two files show what each version spends on one chunk.
const HEX: Record<string, string> = {
  'decimal': [
      '3000002a36fe9c971709100d0505000016a21fba17a21f9a03010204000100007cbc60ca00c0843de907000400010401',
      '05020101000100049a030102020301060100018003052fd10c0b',
    ].join(''),
  'split': [
      '3000002a36fe9c97170f092b0a030101f00301000000000000000080343333333333d33f343333333333d33f01000000',
      '0000000002000000e81da94f0001020002000101020100030001020101010002fa0f01f90f020002e6cc1901e5cc1902',
      '0003e8cc99b30601e7cc99b3060102010003800301ff01017f010e6d95ab',
    ].join(''),
  'int64': [
      '3100000000000000800f071605030000f00e07000000000000000080ffffffffffffff7fffffffffffffff7f00000000',
      '000000000001000055945e240007010001000301feffffffffffffffff0102ffffffffffffffffff0100018003036857',
      'fdc6',
    ].join(''),
  'boolean': [
      '3200002a36fe9c9717090b080806000209050003000001008094ebdc03000000f72beffe008094ebdc03010001000600',
      '030003020201010002800304ff0202248b4530',
    ].join(''),
  'enum': [
      '3400000000000000000807080e040000020303020604020700010000f96b3473006401000100040003060204010b0100',
      '02feffffff1f01fdfcffff1f0336c7ae64',
    ].join(''),
  'string': [
      '3300002a36fe9c9717070b1505040000f91e000100000000df0949910080c8afa02501000100040303422d3106c3a9f0',
      '9d849e00000300020201020100018003041c56f4d3',
    ].join(''),
  'gapped time': [
      '3100002a36fe9c97170a160c0b05000206c53e00c53ec801000a14808af7ae1601000000c8353eb002c0843de8070002',
      '0003080200040001040101010802000004c80101020208010a010003800302ff02028003010c7d3415',
    ].join(''),
  'group directory': [
      '3000002a36fe9c9717128401f0010cac02000a36aaa712d99c0d8d2f9eb802f2011c830180b4e8ab25010803c0843da6',
      'd60f9eb802f2011cd80600c1010c400118000000760c442e00c0843deb0702000305030003000000df49920466a7d9f7',
      '496a804992a406000060dff77ddf4d92e427000000603625499224350d807dcf000000b0effbbeeffb3e4905b04f9224',
      '354d499224c9efb69da629c9e7fbbe4f902435c06edb194900eb25494d5392cfd2344d499224499224f9494d53f2939a',
      'a6694af2fb3e0000000000000003029eb8020627060006020e75724a092c643219a5011a42f41562850ca50350c03215',
      '8796a09df75cc3d995e3715e904828c8f210d1b841a1980901d3a003d13cd1981922e12401377924445209815040b88c',
      '1c04395b711c5167788f181a89d99c1786424bc494c563885ef48544906c45157dd240799a2425e6a4589f811cdda830',
      '1db689daa0504e68656430890f7000e6f39ce3a661a70255dba67422f10060a66de0c12140182853001426a668907671',
      '584066cf806217247ecd2825483752053a66e3b921c5758ac7b865a6f07ddbf20d61c494878454dfd67047016a528400',
      '1b861cdf7452dd02000000000003800364ff020a8003be01c8e2d5a1',
    ].join(''),
};

t.equal(FORMAT_VERSION, 3, 'these goldens are for format version 3');

/** The numeric view of point i and the header an encoder must state for cols. */
function expectedHeader(run: PointRun): Record<string, unknown> {
  const cols = toColumns(run);
  const n = cols.count;
  const num = (i: number): number => run.type === 'string' ? NaN : Number(run.values[i]);
  let lo = 0, hi = 0;
  for (let i = 1; i < n; i++) {
    if (run.type === 'string') break;
    if ((run.values[i] as number) < (run.values[lo] as number)) lo = i;
    if ((run.values[i] as number) > (run.values[hi] as number)) hi = i;
  }
  const good = cols.quality.subarray(0, n).filter((q) => q >= 192).length;
  const uncertain = cols.quality.subarray(0, n).filter((q) => q >= 64 && q < 192).length;
  return {
    formatVersion: 3, type: run.type, count: n, firstTs: timeAt(cols, 0), lastTs: timeAt(cols, n - 1),
    min: num(lo), max: num(hi), minTs: timeAt(cols, lo), maxTs: timeAt(cols, hi), first: num(0), last: num(n - 1),
    goodCount: good, uncertainCount: uncertain, badCount: n - good - uncertain,
  };
}

for (const { name, run } of GOLDEN_RUNS) {
  t.test(`a ${name} chunk encodes to its version 3 golden bytes, whose header states its points and which decode to them`, async (t) => {
    const cols = toColumns(run);
    t.equal(Buffer.from(encodeChunk(cols)).toString('hex'), HEX[name], 'encoding is byte for byte the golden');
    const bytes = new Uint8Array(Buffer.from(HEX[name], 'hex'));
    const h = readChunkHeader(bytes);
    for (const [k, v] of Object.entries(expectedHeader(run))) t.ok(Object.is(h[k as keyof typeof h], v), `header ${k}: ${String(h[k as keyof typeof h])}`);
    t.equal(h.byteLength, bytes.length);
    if (run.type === 'int64') {
      const x = readInt64Extremes(bytes);
      const vals = run.values as bigint[];
      const sorted = [...vals].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      t.same([x.min, x.max, x.first, x.last], [sorted[0], sorted[sorted.length - 1], vals[0], vals[vals.length - 1]], 'exact int64 extremes');
    }
    checkDecodesExactly(t, bytes, cols);
  });
}

t.test('the group directory golden describes its two groups exactly', async (t) => {
  checkGroupDirectory(t, new Uint8Array(Buffer.from(HEX['group directory'], 'hex')), 3);
});


t.test('render\'s header view and readChunkHeader read the same facts from the version 2 and version 3 bytes of a chunk', async (t) => {
  const base = T0 - 5_000_000_000n;
  for (const name of ['decimal', 'split', 'int64', 'string', 'group directory']) {
    const v2 = new Uint8Array(Buffer.from(GOLDEN_HEX_V2[name], 'hex'));
    const v3 = new Uint8Array(Buffer.from(HEX[name], 'hex'));
    const a = readChunkHeader(v2), b = readChunkHeader(v3);
    t.same({ ...b, formatVersion: 2, byteLength: a.byteLength }, a, `${name}: readChunkHeader`);
    const fields = (b: Uint8Array) => {
      const h = new HeaderView(Buffer.alloc(16), base);
      h.read(b);
      return [h.type, h.count, h.goodCount, h.firstRel, h.lastRel, h.minRel, h.maxRel, h.min, h.max, h.first, h.last];
    };
    t.same(fields(v3), fields(v2), `${name}: HeaderView`);
    const s2 = new ChunkSummary(), s3 = new ChunkSummary();
    readChunkSummary(v2, a.count, s2); readChunkSummary(v3, b.count, s3);
    s2.loadDirectory(); s3.loadDirectory();
    t.same([s3.nonGoodNs, s3.lastGood, s3.groups, [...s3.minV.subarray(0, s3.groups)]], [s2.nonGoodNs, s2.lastGood, s2.groups, [...s2.minV.subarray(0, s2.groups)]], `${name}: summary`);
  }
});
