import t from 'tap';
import { sectionOffsets } from '../../../src/storage/encoding/chunk-header.js';
import { GOLDEN_HEX_V4 as HEX } from '../../helpers/chunk-golden-hex-v4.js';
import { checkGoldenChunk, checkGroupDirectory, checkSameHeaderFacts, GOLDEN_HEX_V3, GOLDEN_RUNS, T0, V4_RUNS } from '../../helpers/chunk-golden-runs.js';

// Golden bytes of format version 4: the version 3 header with tag 0x40, and the integer
// column's FRAME, FRAME_DELTA and RICE layouts (FORMAT.md "Integer column"), written from
// 2026-11-21 to 2026-11-26 and still read: these chunks must keep decoding to their points
// and their headers must state them. The encoder writes version 5 now
// (chunk-golden-v5.test.ts pins its bytes from the same runs). The runs are those of the
// version 2 and 3 goldens, plus two that reach version 4's layouts: 'noise split' (time
// residuals, float signs and mantissas in one FRAME each, exponents in RICE) and 'counter
// walk' (FRAME_DELTA). The bytes live in test/helpers/chunk-golden-hex-v4.ts.

for (const { name, run } of [...GOLDEN_RUNS, ...V4_RUNS]) {
  t.test(`a version 4 ${name} chunk's header states its points and the chunk still decodes to them`, async (t) => {
    checkGoldenChunk(t, new Uint8Array(Buffer.from(HEX[name], 'hex')), run, 4);
  });
}

t.test('the group directory golden (its columns in FRAME_DELTA) describes its two groups exactly', async (t) => {
  checkGroupDirectory(t, new Uint8Array(Buffer.from(HEX['group directory'], 'hex')), 4);
});

t.test('a version 4 chunk and the version 3 chunk of the same points differ only in the tag byte when no new layout is used', async (t) => {
  for (const name of ['decimal', 'split', 'int64', 'boolean', 'enum', 'string', 'gapped time']) {
    const v3 = Buffer.from(GOLDEN_HEX_V3[name], 'hex'), v4 = Buffer.from(HEX[name], 'hex');
    t.equal(v4[0], (v3[0] & 15) | 0x40, `${name}: tag`);
    // Everything but the tag and the two CRCs (the header's at timesAt - 4, the trailer) is the same.
    const crcAt = sectionOffsets(v4).timesAt - 4;
    for (const b of [v3, v4]) { b[0] = 0; b.fill(0, crcAt, crcAt + 4); b.fill(0, b.length - 4); }
    t.same(v4, v3, `${name}: the same bytes`);
  }
});

t.test('render\'s header view and readChunkHeader read the same facts from the version 3 and version 4 bytes of a chunk', async (t) => {
  const base = T0 - 5_000_000_000n;
  for (const name of ['decimal', 'split', 'int64', 'string', 'group directory']) {
    checkSameHeaderFacts(t, new Uint8Array(Buffer.from(GOLDEN_HEX_V3[name], 'hex')), new Uint8Array(Buffer.from(HEX[name], 'hex')), 3, name, base);
  }
});
