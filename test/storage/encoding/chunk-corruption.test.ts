import t from 'tap';
import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import {
  chunkTimeRange, decodeChunk, decodeNumericInto, decodeTimesOnly, encodeChunk, readChunkHeader,
} from '../../../src/storage/encoding/chunk.js';
import { ChunkCorruptError, type ValueType } from '../../../src/storage/encoding/chunk-types.js';
import { ChunkGroups, ChunkSummary, readChunkSummary } from '../../../src/storage/encoding/chunk-range.js';
import { sectionOffsets } from '../../../src/storage/encoding/chunk-header.js';
import { HeaderView } from '../../../src/storage/render-scan.js';
import { InvariantError, ServiceError } from '../../../src/errors.js';
import { createPointColumns } from '../../../src/storage/encoding/point-columns.js';
import { pointRunArb, toColumns } from '../../helpers/chunk-arbitraries.js';

const SEED = Number(process.env.FC_SEED ?? 20261121);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);
const TYPES: ValueType[] = ['float64', 'int64', 'boolean', 'enum', 'string'];
/** End of what the header CRC covers, its 4 bytes included: the time section's offset. */
const headerEnd = (b: Uint8Array): number => sectionOffsets(b).timesAt;

/** The ChunkCorruptError fn throws; anything else (a value, another error) fails. */
function corruptError(fn: () => unknown, what: string): ChunkCorruptError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ChunkCorruptError) return e;
    throw new Error(`${what}: expected ChunkCorruptError, got ${String(e)}`);
  }
  throw new Error(`${what}: damaged chunk was accepted`);
}

function decodeAll(bytes: Uint8Array, type: ValueType): void {
  const out = createPointColumns(type, 1200);
  decodeChunk(bytes, out);
}

for (const type of TYPES) {
  t.test(`a flipped byte anywhere in a ${type} chunk gives ChunkCorruptError from every decoder`, async (t) => {
    let checked = 0;
    fc.assert(
      fc.property(pointRunArb(type), fc.nat(), fc.integer({ min: 1, max: 255 }), (run, where, xor) => {
        const good = encodeChunk(toColumns(run));
        const bad = good.slice();
        const at = where % bad.length;
        bad[at] ^= xor;
        const e = corruptError(() => decodeAll(bad, type), `byte ${at} of ${bad.length}`);
        if (e.byteLength !== bad.length) throw new Error('error names the wrong byte length');
        corruptError(() => decodeTimesOnly(bad, new Float64Array(1200)), 'decodeTimesOnly');
        if (type !== 'string') corruptError(() => decodeNumericInto(bad, new Float64Array(1200), new Float64Array(1200)), 'decodeNumericInto');
        // The header carries its own checksum, which also covers the summary after it (up
        // to the time section): header readers refuse a damaged header or summary and
        // accept a damaged body (checked by every decoder above).
        if (at < headerEnd(good)) {
          corruptError(() => readChunkHeader(bad), 'readChunkHeader');
          corruptError(() => chunkTimeRange(bad), 'chunkTimeRange');
        } else readChunkHeader(bad);
        checked++;
      }),
      { seed: SEED, numRuns: 300 },
    );
    t.equal(checked, 300);
  });

  t.test(`a truncated or extended ${type} chunk gives ChunkCorruptError`, async (t) => {
    let checked = 0;
    fc.assert(
      fc.property(pointRunArb(type), fc.nat(), (run, cut) => {
        const good = encodeChunk(toColumns(run));
        const len = cut % good.length;
        corruptError(() => decodeAll(good.subarray(0, len), type), `first ${len} of ${good.length} bytes`);
        corruptError(() => readChunkHeader(good.subarray(0, len)), `header of the first ${len} bytes`);
        const longer = new Uint8Array(good.length + 1 + (cut % 7));
        longer.set(good);
        corruptError(() => decodeAll(longer, type), 'chunk with trailing bytes');
        checked++;
      }),
      { seed: SEED, numRuns: 200 },
    );
    t.equal(checked, 200);
  });
}

for (const type of TYPES) {
  t.test(`a damaged ${type} body with forged checksums still never crashes or hangs the decoder`, async (t) => {
    // Defence in depth behind the CRC: the structural reader bounds every read itself.
    let refused = 0;
    let decoded = 0;
    fc.assert(
      fc.property(pointRunArb(type), fc.nat(), fc.integer({ min: 1, max: 255 }), (run, where, xor) => {
        const bad = encodeChunk(toColumns(run)).slice();
        const bodyAt = headerEnd(bad);
        const bodyLength = bad.length - bodyAt - 4;
        bad[bodyAt + (where % bodyLength)] ^= xor;
        new DataView(bad.buffer).setUint32(bad.length - 4, crc32(bad.subarray(0, bad.length - 4)), true);
        try {
          decodeAll(bad, type);
          decoded++;
        } catch (e) {
          if (!(e instanceof ChunkCorruptError)) throw new Error(`decoder threw ${String(e)}`);
          refused++;
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
    t.equal(refused + decoded, 300, `${refused} refused by structure checks, ${decoded} decoded to some points`);
  });
}

t.test('a damaged summary with forged checksums never crashes or hangs the summary and group readers', async (t) => {
  let refused = 0;
  let read = 0;
  fc.assert(
    fc.property(fc.integer({ min: 300, max: 1200 }), fc.nat(), fc.integer({ min: 1, max: 255 }), fc.nat(), (n, where, xor, seed) => {
      // A wandering decimal series: the summary has a group directory.
      const cols = createPointColumns('float64', n);
      let m = 5000 + (seed % 1000);
      for (let i = 0; i < n; i++) { cols.tsOffset[i] = i * 1000 + ((seed >> (i % 16)) & 7); m += ((seed * (i + 1)) % 11) - 5; cols.f64![i] = m / 100; cols.quality[i] = 192; }
      cols.count = n;
      const bad = encodeChunk(cols).slice();
      const end = headerEnd(bad) - 4;
      const summaryAt = sectionOffsets(bad).summaryAt;
      bad[summaryAt + (where % (end - summaryAt))] ^= xor;
      const v = new DataView(bad.buffer);
      v.setUint32(end, crc32(bad.subarray(0, end)), true);
      v.setUint32(bad.length - 4, crc32(bad.subarray(0, bad.length - 4)), true);
      try {
        const s = new ChunkSummary();
        readChunkSummary(bad, readChunkHeader(bad).count, s);
        if (s.groups > 0) {
          const g = new ChunkGroups();
          g.open(bad, s, n, 'float64');
          const ts = new Float64Array(256), vs = new Float64Array(256);
          g.decode(0, Math.min(256, n), ts, vs);
          g.timeAt(n - 1);
        }
        read++;
      } catch (e) {
        if (!(e instanceof ChunkCorruptError) && !(e instanceof ServiceError) && !(e instanceof InvariantError)) throw new Error(`reader threw ${String(e)}`);
        refused++;
      }
    }),
    { seed: SEED, numRuns: 300 },
  );
  t.equal(refused + read, 300, `${refused} refused, ${read} read to some values`);
});

t.test('every single-byte change of a small chunk is detected, at every position', async (t) => {
  const cols = toColumns({ type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: [1e9, 1e9 + 3e6, 1e9], values: [1.5, 1.6, 1.6, 99.25], quality: [192, 192, 0, 192] });
  const good = encodeChunk(cols);
  let detected = 0;
  for (let at = 0; at < good.length; at++) {
    for (const xor of [0x01, 0x80, 0xff]) {
      const bad = good.slice();
      bad[at] ^= xor;
      corruptError(() => decodeAll(bad, 'float64'), `byte ${at} ^ ${xor}`);
      detected++;
    }
  }
  t.equal(detected, good.length * 3, `all ${good.length * 3} damaged copies refused`);
});

t.test('an unknown format version is refused with a message naming it', async (t) => {
  const good = encodeChunk(toColumns({ type: 'boolean', firstTs: 0n, o0: 0, deltas: [1], values: [0, 1], quality: [192, 192] }));
  const v6 = good.slice();
  v6[0] = 0x60;
  const e = corruptError(() => readChunkHeader(v6), 'version 6');
  t.match(e.message, /format version 96/);
  t.equal(e.name, 'ChunkCorruptError');
});

for (const type of TYPES) {
  t.test(`a damaged version 3 ${type} header with forged checksums never crashes or hangs a header reader or decoder`, async (t) => {
    // Behind the header CRC every field is still checked or bounded: a damaged header whose
    // checksums were recomputed is refused or read to some header, never a crash or a hang.
    let refused = 0;
    let read = 0;
    const view = new HeaderView(Buffer.alloc(16), 0n);
    fc.assert(
      fc.property(pointRunArb(type), fc.nat(), fc.integer({ min: 1, max: 255 }), (run, where, xor) => {
        const bad = encodeChunk(toColumns(run)).slice();
        const crcAt = headerEnd(bad) - 4;
        bad[where % crcAt] ^= xor;
        const v = new DataView(bad.buffer);
        v.setUint32(crcAt, crc32(bad.subarray(0, crcAt)), true);
        v.setUint32(bad.length - 4, crc32(bad.subarray(0, bad.length - 4)), true);
        try {
          const h = readChunkHeader(bad);
          view.read(bad);
          readChunkSummary(bad, h.count, new ChunkSummary());
          sectionOffsets(bad);
          // A forged count can exceed any buffer: the decoder then refuses the capacity
          // (an InvariantError, before reading a column); decode only into one that fits.
          if (h.count <= 1 << 16) decodeChunk(bad, createPointColumns(h.type, h.count));
          read++;
        } catch (e) {
          if (!(e instanceof ChunkCorruptError) && !(e instanceof ServiceError && e.code === 'chunk-corrupt')) throw new Error(`reader threw ${String(e)}`);
          refused++;
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
    t.equal(refused + read, 300, `${refused} refused, ${read} read to some header`);
  });
}

t.test('an empty buffer and a buffer of zeros are refused', async (t) => {
  corruptError(() => readChunkHeader(new Uint8Array(0)), 'empty');
  corruptError(() => decodeAll(new Uint8Array(0), 'float64'), 'empty decode');
  corruptError(() => decodeAll(new Uint8Array(4000), 'float64'), 'zeros');
  t.pass('both refused');
});
