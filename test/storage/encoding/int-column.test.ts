import t from 'tap';
import fc from 'fast-check';
import { ChunkReader, ChunkWriter } from '../../../src/storage/encoding/byte-io.js';
import { encodeIntColumn, IntMode } from '../../../src/storage/encoding/int-column.js';
import { decodeGridColumn, decodeIntColumn } from '../../../src/storage/encoding/int-column-decode.js';
import { IntColumnIndex } from '../../../src/storage/encoding/int-column-range.js';

// The integer column under every chunk column: whatever layout the encoder picks (RLE, FOR,
// FOR_DELTA, FRAME, FRAME_DELTA, RICE), the full decoders, the grid-time decoder and render's
// random-access index give back every value exactly, and each consumes exactly the bytes
// written. The shapes below reach every layout; the last test checks that they do.

const SEED = Number(process.env.FC_SEED ?? 20261121);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const LIMIT = 2 ** 51 - 1;
const clamp = (v: number): number => Math.max(-LIMIT, Math.min(LIMIT, v));

/** Columns shaped after what chunks hold: jitter, walks, runs, geometric tails at either end, wide values, outliers. */
const columnArb: fc.Arbitrary<number[]> = fc.integer({ min: 1, max: 1200 }).chain((n) => {
  const exact = (a: fc.Arbitrary<number>) => fc.array(a, { minLength: n, maxLength: n });
  // uniform in [0, 1) (fc.double leans on edge values, which made the tails below mostly zeros)
  const unit = fc.integer({ min: 0, max: 2 ** 20 - 1 }).map((i) => i / 2 ** 20);
  const geometric = fc.tuple(fc.integer({ min: -1e6, max: 1e6 }), fc.boolean(), fc.integer({ min: 0, max: 6 }), fc.array(unit, { minLength: n, maxLength: n }))
    .map(([base, down, k, us]) => us.map((u) => base + (down ? -1 : 1) * Math.floor(-Math.log2(1 - u) * 2 ** k)));
  // differences crowded around a centre, geometrically fewer further away (RICE_DELTA's zigzag form)
  const peaked = fc.tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: -3, max: 3 }), fc.integer({ min: 0, max: 4 }), fc.array(fc.tuple(unit, fc.boolean()), { minLength: n, maxLength: n }))
    .map(([start, centre, k, us]) => { let v = start; return us.map(([u, neg]) => (v = clamp(v + centre + (neg ? -1 : 1) * Math.floor(-Math.log2(1 - u) * 2 ** k)))); });
  const walk = fc.tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 20 }), fc.array(fc.integer({ min: -(2 ** 20), max: 2 ** 20 }), { minLength: n, maxLength: n }))
    .map(([start, shift, steps]) => { let v = start; return steps.map((s) => (v = clamp(v + Math.trunc(s / 2 ** (20 - Math.min(20, shift)))))); });
  return fc.oneof(
    exact(fc.integer({ min: 0, max: 7 })),
    exact(fc.integer({ min: -(2 ** 31), max: 2 ** 31 })),
    exact(fc.oneof(fc.constantFrom(0, 1, -1, LIMIT, -LIMIT, 2 ** 52 - 1, -(2 ** 52) + 1), fc.integer({ min: -1000, max: 1000 }))),
    exact(fc.double({ min: -(2 ** 52) + 1, max: 2 ** 52 - 1, noNaN: true }).map(Math.trunc)),
    geometric,
    peaked,
    walk,
    fc.tuple(fc.array(fc.integer({ min: -50, max: 50 }), { minLength: 1, maxLength: 4 }), fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 6 }))
      .map(([vals, runs]) => { const out: number[] = []; for (let k = 0; out.length < n; k++) for (let j = 0; j < runs[k % runs.length] && out.length < n; j++) out.push(vals[k % vals.length]); return out; }),
  );
});

const writer = new ChunkWriter();

/** Encodes at a byte offset that is not a multiple of 4 (columns follow mode bytes and varints). */
function encode(values: number[]): { bytes: Uint8Array; words: Uint32Array; start: number; end: number } {
  writer.reset();
  writer.u8(0xaa);
  encodeIntColumn(writer, Float64Array.from(values), values.length);
  const end = writer.pos;
  const bytes = writer.bytes.slice(0, (end + 3) & ~3);
  return { bytes, words: new Uint32Array(bytes.buffer), start: 1, end };
}

function check(values: number[]): number {
  const n = values.length;
  const { bytes, words, start, end } = encode(values);
  const out = new Float64Array(n);
  let r = new ChunkReader(bytes, words, start, end);
  decodeIntColumn(r, n, out);
  if (r.pos !== end) throw new Error(`decoder stopped at ${r.pos} of ${end}`);
  for (let i = 0; i < n; i++) if (out[i] !== values[i]) throw new Error(`value ${i}: ${out[i]} != ${values[i]} (layout ${bytes[start]})`);
  if (values.every((v) => Math.abs(v) < 2 ** 40)) {
    r = new ChunkReader(bytes, words, start, end);
    decodeGridColumn(r, n, out, 3, 7);
    for (let i = 0; i < n; i++) if (out[i] !== (values[i] + i * 3) * 7) throw new Error(`grid value ${i} (layout ${bytes[start]})`);
  }
  const ix = new IntColumnIndex();
  r = new ChunkReader(bytes, words, start, end);
  ix.parse(r, n);
  if (r.pos !== end) throw new Error(`index parse stopped at ${r.pos} of ${end}`);
  for (const from of [0, n >> 1, n - 1]) {
    const to = Math.min(n, from + 300);
    // anchored layouts: from the start, from a directory group's first point, from the point itself
    const anchors = ix.anchorFree ? [from] : [0, (from >> 8) << 8, from];
    for (const anchor of anchors) {
      ix.range(from, to, out, anchor, values[anchor]);
      for (let j = from; j < to; j++) if (out[j - from] !== values[j]) throw new Error(`range value ${j} from ${anchor} (layout ${bytes[start]})`);
      if (ix.at(to - 1, anchor, values[anchor]) !== values[to - 1]) throw new Error(`at(${to - 1}) from ${anchor} (layout ${bytes[start]})`);
    }
  }
  return bytes[start];
}

const reached = new Set<number>();

t.test('any integer column decodes exactly through every decoder, whatever layout the encoder picks', async (t) => {
  fc.assert(fc.property(columnArb, (values) => { reached.add(check(values)); }), { seed: SEED, numRuns: 1000 });
  t.pass('1000 columns');
});

t.test('the shaped columns reach every layout of the integer column', async (t) => {
  t.same([...reached].sort(), Object.values(IntMode).sort(), `layouts reached: ${[...reached].sort().join(', ')}`);
});

t.test('a RICE column whose words run out, or leave some unread, is refused', async (t) => {
  const values = Array.from({ length: 200 }, (_, i) => 1000 - (i % 7 === 0 ? 3 : i % 3 === 0 ? 1 : 0));
  const { bytes, words, start, end } = encode(values);
  t.equal(bytes[start], IntMode.Rice, 'the column is RICE');
  const out = new Float64Array(values.length);
  t.throws(() => decodeIntColumn(new ChunkReader(bytes, words, start, end), values.length + 40, out), { name: 'ChunkCorruptError' }, 'more values than its words hold');
  t.throws(() => decodeIntColumn(new ChunkReader(bytes, words, start, end), values.length - 100, out), { name: 'ChunkCorruptError' }, 'fewer values than its words hold');
});

/** The form byte of a RICE_DELTA column: after the mode byte and the first value's svarint. */
function riceDeltaForm(values: number[]): number {
  const { bytes, start } = encode(values);
  if (bytes[start] !== IntMode.RiceDelta) return -1;
  let p = start + 1;
  while (bytes[p] & 0x80) p++;
  return bytes[p + 1];
}

/** A 0.01-resolution plant value (differences mostly -2..2) and a totaliser (increments 0, a third of the time, or 1..5). */
function plantColumns(): { walk: number[]; counter: number[] } {
  let s = 99;
  const u = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  let level = 51_200;
  const walk = Array.from({ length: 3000 }, () => Math.round((level += 0.02 * (50_000 - level) + 200 * (u() - 0.5)) / 100));
  let total = 1_000_000;
  const counter = Array.from({ length: 3000 }, () => (total += u() < 0.3 ? 0 : 1 + Math.floor(u() * 5)));
  return { walk, counter };
}

t.test('RICE_DELTA takes differences crowded around a centre zigzagged, and skewed ones from their minimum or maximum', async (t) => {
  const { walk, counter } = plantColumns();
  const falling = counter.map((v) => -v);
  t.equal(riceDeltaForm(walk) & 0xa0, 0x20, 'the walk: zigzag form');
  t.equal(riceDeltaForm(counter) & 0xa0, 0, 'the counter: distances up from the smallest increment');
  t.equal(riceDeltaForm(falling) & 0xa0, 0x80, 'the falling counter: distances down from the largest');
  for (const [name, col] of [['walk', walk], ['counter', counter], ['falling', falling]] as const) {
    t.equal(check(col), IntMode.RiceDelta, `${name}: every decoder gives it back exactly`);
  }
});

t.test('a RICE_DELTA column whose words run out, or leave some unread, is refused', async (t) => {
  const values = plantColumns().counter.slice(0, 400);
  const { bytes, words, start, end } = encode(values);
  t.equal(bytes[start], IntMode.RiceDelta, 'the column is RICE_DELTA');
  const out = new Float64Array(values.length + 100);
  t.throws(() => decodeIntColumn(new ChunkReader(bytes, words, start, end), values.length + 40, out), { name: 'ChunkCorruptError' }, 'more values than its words hold');
  t.throws(() => decodeIntColumn(new ChunkReader(bytes, words, start, end), values.length - 100, out), { name: 'ChunkCorruptError' }, 'fewer values than its words hold');
  const ix = new IntColumnIndex();
  const n = values.length;
  t.throws(() => {
    ix.parse(new ChunkReader(bytes, words, start, end), n + 300);
    ix.range(n + 200, n + 300, out, 0, values[0]);
  }, { name: 'ChunkCorruptError' }, 'the random-access index refuses points past its codes');
});
