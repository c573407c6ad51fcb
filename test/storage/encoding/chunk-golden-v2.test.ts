import t from 'tap';
import { readChunkHeader } from '../../../src/storage/encoding/chunk.js';
import { toColumns } from '../../helpers/chunk-arbitraries.js';
import { checkDecodesExactly, checkGroupDirectory, GOLDEN_RUNS, GOLDEN_HEX_V2 as HEX } from '../../helpers/chunk-golden-runs.js';

// Golden bytes of format version 2 (a summary between the header and the time section,
// covered by the header CRC; the time section's offset in bytes 96..99), written until
// 2026-11-21 and still read: these chunks must keep decoding to their points. The encoder
// writes version 3 now (chunk-golden-v3.test.ts pins its bytes from the same runs); the
// version 1 goldens (chunk-golden.test.ts) pin that older chunks still decode too. The
// bytes live in test/helpers/chunk-golden-runs.ts: the version 3 test cross-checks its
// header readers against them.

for (const { name, run } of GOLDEN_RUNS) {
  t.test(`a version 2 ${name} chunk still decodes to its points`, async (t) => {
    const cols = toColumns(run);
    const bytes = new Uint8Array(Buffer.from(HEX[name], 'hex'));
    t.equal(readChunkHeader(bytes).formatVersion, 2);
    checkDecodesExactly(t, bytes, cols);
  });
}

t.test('the group directory golden describes its two groups exactly', async (t) => {
  checkGroupDirectory(t, new Uint8Array(Buffer.from(HEX['group directory'], 'hex')), 2);
});
