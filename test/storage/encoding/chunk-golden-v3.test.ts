import t from 'tap';
import { checkGoldenChunk, checkGroupDirectory, checkSameHeaderFacts, GOLDEN_HEX_V2, GOLDEN_HEX_V3 as HEX, GOLDEN_RUNS, T0 } from '../../helpers/chunk-golden-runs.js';

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
    checkSameHeaderFacts(t, new Uint8Array(Buffer.from(GOLDEN_HEX_V2[name], 'hex')), new Uint8Array(Buffer.from(HEX[name], 'hex')), 2, name, base);
  }
});
