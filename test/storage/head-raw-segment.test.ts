// Head segments (head-segment.ts, head-packed.ts): exact round trip of any slice of a head's
// columns in the packed form the writer stores and in the raw form it stored before, damage
// detected by the CRC, and heads stored as raw or encoded-chunk segments still read.
import t from 'tap';
import fc from 'fast-check';
import { segmentKey } from '../../src/storage/head-record.js';
import { RAW_SEGMENT, decodeSegment, encodeRawSegment, encodeSegment } from '../../src/storage/head-segment.js';
import { PACKED_SEGMENT, encodePackedSegment } from '../../src/storage/head-packed.js';
import { crc32 } from 'node:zlib';
import { encodeChunk } from '../../src/storage/encoding/chunk.js';
import type { PointColumns, ValueType } from '../../src/storage/encoding/chunk-types.js';
import { seriesKey } from '../../src/storage/keys.js';
import { readRaw } from '../../src/storage/series-store.js';
import { pointRunArb, timeAt, toColumns } from '../helpers/chunk-arbitraries.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? 20261121);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);
const TYPES: ValueType[] = ['float64', 'int64', 'boolean', 'enum', 'string'];
const SERIES = seriesKey('6f1c9a52-8d1e-4d0b-9a43-1f7f6f0e2a11');
const bitsOf = (x: number): bigint => new BigUint64Array(new Float64Array([x]).buffer)[0];

/** Throws at the first point of b[0..n) that differs from a[from..from+n). */
function assertSameSlice(a: PointColumns, from: number, n: number, b: PointColumns): void {
  if (b.count !== n) throw new Error(`count ${b.count} != ${n}`);
  for (let i = 0; i < n; i++) {
    const j = from + i;
    if (timeAt(a, j) !== timeAt(b, i)) throw new Error(`time ${i}`);
    if (a.quality[j] !== b.quality[i]) throw new Error(`quality ${i}`);
    let same: boolean;
    switch (a.type) {
      case 'float64': same = bitsOf(a.f64![j]) === bitsOf(b.f64![i]); break;
      case 'int64': same = a.i64![j] === b.i64![i]; break;
      case 'boolean': same = a.u8![j] === b.u8![i]; break;
      case 'enum': same = a.ord![j] === b.ord![i]; break;
      case 'string': same = a.str![j] === b.str![i]; break;
    }
    if (!same) throw new Error(`value ${i} differs`);
  }
}

/** A run's columns with a slice [from, from+n) chosen inside it. */
const sliceArb = (type: ValueType) => pointRunArb(type).chain((run) => {
  const cols = toColumns(run);
  return fc.integer({ min: 0, max: cols.count - 1 }).chain((from) =>
    fc.integer({ min: 1, max: cols.count - from }).map((n) => ({ cols, from, n })));
});

for (const type of TYPES) {
  t.test(`${type}: any slice of a head's columns reads back exactly`, async (t) => {
    fc.assert(fc.property(sliceArb(type), ({ cols, from, n }) => {
      const bytes = encodeSegment(cols, from, n);
      if ((bytes[0] === PACKED_SEGMENT) !== (type !== 'string')) throw new Error(`segment kind ${bytes[0]} for ${type}`);
      assertSameSlice(cols, from, n, decodeSegment(SERIES, bytes));
      if (type !== 'string') assertSameSlice(cols, from, n, decodeSegment(SERIES, Buffer.from(encodeRawSegment(cols, from, n))));
      // the packed form with one width a section (stored 2026-11-28 02:00-04:00 UTC)
      if (type !== 'string') assertSameSlice(cols, from, n, decodeSegment(SERIES, Buffer.from(encodePackedSegment(cols, from, n, false))));
    }), { seed: SEED, numRuns: 150 });
    t.pass('round trip');
  });
}

t.test('a changed byte or a cut packed or raw segment is refused as corrupt, never read', async (t) => {
  fc.assert(fc.property(fc.constantFrom('float64', 'int64', 'enum') as fc.Arbitrary<ValueType>, fc.constantFrom('blocks', 'one width', 'raw'), fc.nat(), fc.integer({ min: 1, max: 255 }), (type, form, at, flip) => fc.assert(fc.property(sliceArb(type), ({ cols, from, n }) => {
    const good = Buffer.from(form === 'blocks' ? encodeSegment(cols, from, n) : form === 'one width' ? encodePackedSegment(cols, from, n, false) : encodeRawSegment(cols, from, n));
    const bad = Buffer.from(good);
    bad[at % bad.length] ^= flip;
    for (const b of [bad, good.subarray(0, good.length - 1 - (at % 8))]) {
      try { decodeSegment(SERIES, b); } catch (e) {
        if ((e as { code?: string }).code !== 'chunk-corrupt') throw e;
        continue;
      }
      throw new Error(`a damaged segment (byte ${at % bad.length}) was read`);
    }
  }), { seed: SEED + at, numRuns: 2 })), { seed: SEED, numRuns: 150 });
  t.pass('refused');
});

// Forms a writer stored before: the chunk codec (before 2026-11-21) and raw (2026-11-21..28).
const OLDER_FORMS: Array<{ name: string; kind: (v: Buffer) => boolean; rewrite: (key: Buffer, stored: Buffer) => Buffer }> = [
  { name: 'encoded chunks (written before raw segments)', kind: (v) => v[0] !== RAW_SEGMENT && v[0] !== PACKED_SEGMENT, rewrite: (key, stored) => Buffer.from(encodeChunk(decodeSegment(key, stored))) },
  { name: 'raw (written 2026-11-21..28)', kind: (v) => v[0] === RAW_SEGMENT, rewrite: (key, stored) => { const c = decodeSegment(key, stored); return Buffer.from(encodeRawSegment(c, 0, c.count)); } },
  { name: 'packed, one width a section (written 2026-11-28 02:00-04:00 UTC)', kind: (v) => v[0] === PACKED_SEGMENT && (v[2] & 32) === 0 && (v[2] & 24) !== 0, rewrite: (key, stored) => { const c = decodeSegment(key, stored); return Buffer.from(encodePackedSegment(c, 0, c.count, false)); } },
];

for (const form of OLDER_FORMS) {
  t.test(`a head whose segments are ${form.name} reads and keeps growing`, async (t) => {
    // a head cache of one point holds no head: every write reloads its head from the segments
    const { store } = await tempStore(t, { seal: { chunkPoints: 10_000 }, headCachePoints: 1 });
    const id = newId();
    await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
    const secs = (from: number, n: number) => Array.from({ length: n }, (_, i) => T0 + BigInt(from + i) * SEC);
    await store.write([f64Batch(id, secs(0, 100), secs(0, 100).map((_, i) => i / 10))], WHO);
    // rewrite the stored segment in the older form, as the previous writer stored it
    const key = seriesKey(id);
    const [entry] = [...store.env.segments.getRange({ start: segmentKey(key, 0), end: segmentKey(key, 2 ** 53) })];
    t.equal(entry.value[0], PACKED_SEGMENT, 'the writer stores packed segments');
    await store.env.segments.put(entry.key, form.rewrite(key, entry.value));
    t.ok(form.kind(store.env.segments.get(entry.key)!), 'stored in the older form');
    const range = { startNs: T0, endNs: T0 + 10_000n * SEC, limit: 100_000 };
    const values = () => { const p = store.read((v) => readRaw(v, id, range)); return [...p.f64!.subarray(0, p.count)]; };
    const want = (n: number) => Array.from({ length: n }, (_, i) => i / 10);
    t.same(values(), want(100), 'readers decode the older segment');
    await store.write([f64Batch(id, secs(100, 50), secs(100, 50).map((_, i) => (100 + i) / 10))], WHO);
    t.same(values(), want(150), 'a write loads the older segment and appends');
    t.equal(store.headPoints(id), 150);
  });
}

t.test('packed: a 1 s decimal tag stamped in ms takes ~2 bytes a point; other values stay exact', async (t) => {
  const n = 1000;
  const cols = toColumns({
    type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0,
    deltas: Array.from({ length: n - 1 }, (_, i) => 1_000_000_000 + ((i * 5) % 8 - 3) * 1_000_000),
    values: Array.from({ length: n }, (_, i) => Math.round(100 * (50 + 3 * Math.sin(i / 40))) / 100), quality: new Array<number>(n).fill(192),
  });
  const walk = Buffer.from(encodeSegment(cols, 0, n));
  t.equal(walk[2], 1 | 4 | 8 | 16 | 32, 'flags: one quality, decimal values, times and values bit-packed in blocks');
  t.equal(walk[3], 6 | (2 << 4), 'times in ms, values in hundredths');
  t.ok(walk.length <= 18 + 1.25 * n + 4 + 4, `${walk.length} bytes for ${n} points (raw: ${16 + 10 * n + 8})`);
  // an exact cadence packs its times in no byte at all; numbers of 24 bits are bit-packed,
  // wider ones are varints
  const exact = toColumns({ type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: new Array<number>(n - 1).fill(1_000_000_000), values: Array.from({ length: n }, (_, i) => (i % 2) * (2 ** 23 - 1)), quality: new Array<number>(n).fill(192) });
  const ex = Buffer.from(encodePackedSegment(exact, 0, n, false));
  t.equal(ex[16], 0, 'one width: an exact cadence, 0-bit times');
  t.equal(ex[17], 24, 'one width: zigzag deltas up to 2^24 - 1, 24 bits');
  assertSameSlice(exact, 0, n, decodeSegment(SERIES, ex));
  const exBlocks = Buffer.from(encodeSegment(exact, 0, n));
  t.equal(exBlocks[2] & (8 | 16 | 32), 8 | 16 | 32, 'blocks: times and values bit-packed');
  // header, the step as a varint (1 s in units of 10^9 ns: 01), 16 zero-width blocks of
  // steps, x 0 as a varint, 16 blocks of 24-bit deltas (width byte + 3 bytes each), quality, CRC
  t.equal(exBlocks.length, 16 + 1 + 16 + 1 + 16 + 3 * (n - 1) + 4 + 4, 'an exact cadence: one width byte a block of steps, no bits');
  assertSameSlice(exact, 0, n, decodeSegment(SERIES, exBlocks));
  exact.f64![1] = 2 ** 23;
  for (const blocked of [false, true]) {
    const wider = Buffer.from(encodePackedSegment(exact, 0, n, blocked));
    t.equal(wider[2] & 16, 0, `${blocked ? 'blocks' : 'one width'}: a zigzag of 2^24, values as varints`);
    assertSameSlice(exact, 0, n, decodeSegment(SERIES, wider));
  }
  // a jump in one block widens that block only
  const jump = toColumns({ type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: Array.from({ length: n - 1 }, (_, i) => (i === 500 ? 60_000 : 1_000) * 1_000_000), values: Array.from({ length: n }, (_, i) => i === 700 ? 1000 : (i % 3) / 10), quality: new Array<number>(n).fill(192) });
  const jumpBlocks = Buffer.from(encodeSegment(jump, 0, n)), jumpOne = Buffer.from(encodePackedSegment(jump, 0, n, false));
  t.ok(jumpBlocks.length < 0.5 * jumpOne.length, `a late sample and a spike: ${jumpBlocks.length} bytes in blocks, ${jumpOne.length} with one width`);
  assertSameSlice(jump, 0, n, decodeSegment(SERIES, jumpBlocks));
  assertSameSlice(cols, 0, n, decodeSegment(SERIES, Buffer.from(walk)));
  // values that are no decimal of <= 9 digits, and ones a decimal cannot carry: raw, exact
  for (const odd of [0.1 + 0.2, -0, NaN, Infinity, -Infinity, 2 ** 60, 5e-324, Math.PI]) {
    cols.f64![500] = odd;
    const b = Buffer.from(encodeSegment(cols, 0, n));
    t.equal(b[2] & 4, 0, `${odd}: not decimal`);
    assertSameSlice(cols, 0, n, decodeSegment(SERIES, b));
  }
  cols.f64![500] = 2 ** 50; // the largest decimal magnitude, k = 0 would need every value integral
  assertSameSlice(cols, 0, n, decodeSegment(SERIES, Buffer.from(encodeSegment(cols, 0, n))));
  cols.f64!.fill(-(2 ** 50));
  cols.f64![3] = 2 ** 50; // deltas of 2^51: their zigzag is still exact
  const wide = Buffer.from(encodeSegment(cols, 0, n));
  t.equal(wide[2] & 4, 4, 'integers up to 2^50 are decimals with k = 0');
  assertSameSlice(cols, 0, n, decodeSegment(SERIES, wide));
  // steps of up to 2^50 ns, alternating: delta-of-steps near 2^51
  for (let i = 1; i < n; i++) cols.tsOffset[i] = cols.tsOffset[i - 1] + (i % 2 === 0 ? 2 ** 40 : 1);
  assertSameSlice(cols, 0, n, decodeSegment(SERIES, Buffer.from(encodeSegment(cols, 0, n))));
});

t.test('packed: the decimal digits k are the fewest every value needs, checked again for values met before k grew', async (t) => {
  const at = (values: number[]) => toColumns({ type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0, deltas: values.slice(1).map(() => 1_000_000_000), values, quality: values.map(() => 192) });
  const kOf = (b: Buffer) => ((b[2] & 4) === 0 ? -1 : b[3] >> 4);
  // k grows twice inside the run: the first values are written at the final k
  const grows = at([1, 2, 0.5, 3, 0.25, 4, 0.125, 7]);
  const g = Buffer.from(encodeSegment(grows, 0, grows.count));
  t.equal(kOf(g), 3, 'k = 3 for 0.125');
  assertSameSlice(grows, 0, grows.count, decodeSegment(SERIES, g));
  t.same(decodeSegment(SERIES, Buffer.from(encodePackedSegment(grows, 0, grows.count, false))).f64, grows.f64!.subarray(0, grows.count), 'one width a section: same values');
  // 2^50 is a decimal at k = 0, but not at the k = 1 a later 0.5 needs: the run is not decimal
  const big = at([2 ** 50, 1, 0.5, 2]);
  const b = Buffer.from(encodeSegment(big, 0, big.count));
  t.equal(kOf(b), -1, 'a value past 2^50 at the final k makes the run raw');
  assertSameSlice(big, 0, big.count, decodeSegment(SERIES, b));
  // a slice decides on its own points only
  const tail = Buffer.from(encodeSegment(big, 1, 3));
  t.equal(kOf(tail), 1, 'the slice without 2^50 is decimal at k = 1');
  assertSameSlice(big, 1, 3, decodeSegment(SERIES, tail));
});

t.test('golden bytes of a packed segment in blocks', async (t) => {
  const cols = toColumns({
    type: 'float64', firstTs: 1_000_000_000n, o0: 0,
    deltas: [2_000_000, 1_000_000], values: [1.5, 1.25, 1.75], quality: [192, 192, 192],
  });
  const hex = Buffer.from(encodeSegment(cols, 0, 3)).toString('hex');
  // 81 type 00 flags 3d (one quality, decimal, times and values bit-packed, in blocks) form
  // 26 (e 6, k 2); n 3; tsBase 1e9 ns; times: the smallest step in ms (1) as a varint 01,
  // then one block of steps above it (1, 0): width 1, bits 01; values x 150, 125, 175:
  // zigzag(150) = 300 as a varint ac02, then one block of zigzag deltas 49, 100: width 7,
  // low bits first 31 32; quality c0000000; CRC32
  t.equal(hex.slice(0, -8), '81003d26' + '03000000' + '00ca9a3b00000000' + '01' + '0101' + 'ac02' + '073132' + 'c0000000');
  t.equal(hex.slice(-8), Buffer.from(new Uint32Array([crc32(Buffer.from(hex.slice(0, -8), 'hex'))]).buffer).toString('hex'));
  assertSameSlice(cols, 0, 3, decodeSegment(SERIES, Buffer.from(hex, 'hex')));
});

t.test('golden bytes of a packed segment with one width a section (stored 2026-11-28 02:00-04:00 UTC)', async (t) => {
  const cols = toColumns({
    type: 'float64', firstTs: 1_000_000_000n, o0: 0,
    deltas: [2_000_000, 1_000_000], values: [1.5, 1.25, 1.75], quality: [192, 192, 192],
  });
  const hex = Buffer.from(encodePackedSegment(cols, 0, 3, false)).toString('hex');
  // 81 type 00 flags 1d (one quality, decimal, times and values bit-packed) form 26 (e 6,
  // k 2); n 3; tsBase 1e9 ns; widths 1 and 7 bits; times: dod of steps in ms zigzag(2) = 4
  // as a varint, zigzag(1 - 2) = 1 in 1 bit: 04 01; values x 150, 125, 175: zigzag(150) =
  // 300 as a varint ac02, then 49 and 100 in 7 bits each, low bits first: 31 32; quality
  // c0000000; CRC32
  t.equal(hex.slice(0, -8), '81001d26' + '03000000' + '00ca9a3b00000000' + '0107' + '0401' + 'ac023132' + 'c0000000');
  t.equal(hex.slice(-8), Buffer.from(new Uint32Array([crc32(Buffer.from(hex.slice(0, -8), 'hex'))]).buffer).toString('hex'));
  assertSameSlice(cols, 0, 3, decodeSegment(SERIES, Buffer.from(hex, 'hex')));
});

t.test('raw form: a 1 s tag stamped in ms stores 16-bit steps; a steady value is stored once', async (t) => {
  const n = 1000;
  const cols = toColumns({
    type: 'float64', firstTs: 1_700_000_000_000_000_000n, o0: 0,
    deltas: Array.from({ length: n - 1 }, (_, i) => 1_000_000_000 + ((i * 5) % 8 - 3) * 1_000_000),
    values: new Array<number>(n).fill(42.5), quality: new Array<number>(n).fill(192),
  });
  const steady = encodeRawSegment(cols, 0, n);
  t.equal(steady[2], 4 | 2 | 8, 'flags: 16-bit steps, one quality, one value');
  t.equal(steady[3], 6, 'steps in ms (10^6 ns)');
  t.equal(steady.length, 16 + 2 * n + 8 + 4 + 4, 'header, steps, one value, one quality, CRC');
  assertSameSlice(cols, 0, n, decodeSegment(SERIES, steady));
  cols.f64![700] = -0; // -0 has other bits than 42.5: every value is stored
  const varied = encodeRawSegment(cols, 0, n);
  t.equal(varied[2], 4 | 2, 'flags: 16-bit steps, one quality');
  t.equal(varied.length, 16 + 2 * n + 8 * n + 4 + 4);
  assertSameSlice(cols, 0, n, decodeSegment(SERIES, varied));
  // one step of 1 ns more: ns steps of ~1 s fit 32 bits, not 16
  cols.tsOffset[n - 1] += 1;
  const nsSteps = encodeRawSegment(cols, 0, n);
  t.equal(nsSteps[2], 1 | 2, 'flags: 32-bit steps, one quality');
  t.equal(nsSteps[3], 0);
  assertSameSlice(cols, 0, n, decodeSegment(SERIES, nsSteps));
  // a step of 65,536 ms fits neither (2^16 ms, and above 2^32 ns)
  cols.tsOffset[n - 1] = cols.tsOffset[n - 2] + 65_536_000_000;
  const offsets = encodeRawSegment(cols, 0, n);
  t.equal(offsets[2], 2, 'flags: float64 offsets, one quality');
  assertSameSlice(cols, 0, n, decodeSegment(SERIES, offsets));
});

t.test('golden bytes of a compact raw segment', async (t) => {
  const cols = toColumns({
    type: 'boolean', firstTs: 1_000_000_000n, o0: 0,
    deltas: [2_000_000, 1_000_000], values: [1, 1, 1], quality: [192, 192, 192],
  });
  const hex = Buffer.from(encodeRawSegment(cols, 0, 3)).toString('hex');
  // 80 type 02 flags 0e (16-bit steps, one quality, one value) e 06; n 3; tsBase 1e9 ns;
  // steps 0, 2, 1 (ms); value 01; quality c0000000; CRC32
  t.equal(hex, '80020e06' + '03000000' + '00ca9a3b00000000' + '000002000100' + '01' + 'c0000000' + 'b389f3e1');
  assertSameSlice(cols, 0, 3, decodeSegment(SERIES, Buffer.from(hex, 'hex')));
});
