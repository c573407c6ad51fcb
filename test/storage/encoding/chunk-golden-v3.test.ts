import t from 'tap';
import { readChunkHeader, readInt64Extremes } from '../../../src/storage/encoding/chunk.js';
import { ChunkSummary, readChunkSummary } from '../../../src/storage/encoding/chunk-range.js';
import { HeaderView } from '../../../src/storage/render-scan.js';
import { type PointRun, timeAt, toColumns } from '../../helpers/chunk-arbitraries.js';
import { checkDecodesExactly, checkGroupDirectory, GOLDEN_HEX_V2, GOLDEN_HEX_V3 as HEX, GOLDEN_RUNS, T0 } from '../../helpers/chunk-golden-runs.js';

// Golden bytes of format version 3 (the compact header: tag byte, firstTs, varints, value
// slots in the column's integer domain; FORMAT.md "Header, version 3"), written until
// 2026-11-21 and still read: these chunks must keep decoding to their points and their
// headers must state them. The encoder writes version 4 now (chunk-golden-v4.test.ts pins
// its bytes from the same runs). The bytes live in test/helpers/chunk-golden-runs.ts.
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
  t.test(`a version 3 ${name} chunk's header states its points and the chunk still decodes to them`, async (t) => {
    const cols = toColumns(run);
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
