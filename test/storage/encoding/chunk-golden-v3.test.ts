import t from 'tap';
import { readChunkHeader } from '../../../src/storage/encoding/chunk.js';
import { ChunkSummary, readChunkSummary } from '../../../src/storage/encoding/chunk-range.js';
import { HeaderView } from '../../../src/storage/render-scan.js';
import { checkGoldenChunk, checkGroupDirectory, GOLDEN_HEX_V2, GOLDEN_HEX_V3 as HEX, GOLDEN_RUNS, T0 } from '../../helpers/chunk-golden-runs.js';

// Golden bytes of format version 3 (the compact header: tag byte, firstTs, varints, value
// slots in the column's integer domain; FORMAT.md "Header, version 3"), written until
// 2026-11-21 and still read: these chunks must keep decoding to their points and their
// headers must state them. The encoder writes version 4 now (chunk-golden-v4.test.ts pins
// its bytes from the same runs). The bytes live in test/helpers/chunk-golden-runs.ts.

for (const { name, run } of GOLDEN_RUNS) {
  t.test(`a version 3 ${name} chunk's header states its points and the chunk still decodes to them`, async (t) => {
    checkGoldenChunk(t, new Uint8Array(Buffer.from(HEX[name], 'hex')), run, 3);
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
