// A raw read's range over stored chunks: the listing through one reverse cursor
// (listWholeRange) lists what listRange lists, and a scan that decodes only the part of a
// chunk its range cuts (scanChunks with a ChunkWindow) visits exactly the points of the
// whole-chunk scan. Over sealed chunks of several layouts (decimal floats with a group
// directory, int64, states in runs, raw floats, strings), ranges anywhere around them, and
// the open head.
import t from 'tap';
import fc from 'fast-check';
import { allocColumns, MAX_CHUNK_POINTS, readOpenColumns } from '../../src/storage/series-store.js';
import { listRange, listWholeRange, scanChunks, type HeadedChunk } from '../../src/storage/range-scan.js';
import { ChunkWindow } from '../../src/storage/encoding/chunk-window.js';
import { seriesKey } from '../../src/storage/keys.js';
import type { PointColumns, ValueType } from '../../src/storage/encoding/chunk-types.js';
import type { PointBatch } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const N = 30_000;

/** Every visited point as text: time, value, quality. */
function points(series: Buffer, chunks: HeadedChunk[], from: bigint, to: bigint, type: ValueType, window?: ChunkWindow): string[] {
  const out: string[] = [];
  const scratch = allocColumns(type, MAX_CHUNK_POINTS);
  scanChunks(series, chunks, from, to, (c: PointColumns, i0, i1) => {
    for (let i = i0; i < i1; i++) {
      const v = c.f64 ? Object.is(c.f64[i], -0) ? '-0' : String(c.f64[i]) : c.i64 ? String(c.i64[i]) : c.u8 ? String(c.u8[i]) : c.ord ? String(c.ord[i]) : c.str![i];
      out.push(`${c.tsBase + BigInt(c.tsOffset[i])} ${v} ${c.quality[i]}`);
    }
    return true;
  }, scratch, undefined, window);
  return out;
}

t.test('the reverse listing and the window scan agree with the forward listing and the whole scan', async (t) => {
  const { store } = await tempStore(t);
  const kinds: Array<{ id: string; type: ValueType; what: string }> = [];
  const add = async (type: ValueType, what: string, value: (i: number) => number | string, quality: (i: number) => number, sealedUpTo: number) => {
    const id = newId();
    await store.createSeries({ id, type, writableClass: 'collector', ...(type === 'enum' ? { enumSet: { id: '00000000-0000-4000-8000-00000000e001', ordinals: [0, 1, 2, 3, 4] } } : {}) });
    const times = BigInt64Array.from({ length: N }, (_, i) => T0 + BigInt(i) * SEC + BigInt(Math.imul(i + 1, 2654435761) >>> 29) * 1_000_000n);
    const q = Uint32Array.from({ length: N }, (_, i) => quality(i));
    const values: PointBatch['values'] = type === 'int64' ? BigInt64Array.from({ length: N }, (_, i) => BigInt(value(i) as number))
      : type === 'boolean' ? Uint8Array.from({ length: N }, (_, i) => value(i) as number)
      : type === 'enum' ? Int32Array.from({ length: N }, (_, i) => value(i) as number)
      : type === 'string' ? Array.from({ length: N }, (_, i) => value(i) as string)
      : Float64Array.from({ length: N }, (_, i) => value(i) as number);
    const cut = (a: number, b: number): PointBatch => ({ series: id, times: times.subarray(a, b), quality: q.subarray(a, b), values: Array.isArray(values) ? values.slice(a, b) : (values as Float64Array).subarray(a, b) });
    await store.write([cut(0, sealedUpTo)], WHO);
    await store.sealHeads(0);
    if (sealedUpTo < N) await store.write([cut(sealedUpTo, N)], WHO);
    kinds.push({ id, type, what });
  };
  await add('float64', 'decimal, all good', (i) => Math.round(Math.sin(i / 50) * 10_000) / 100, () => 192, N);
  await add('float64', 'decimal, mixed quality, head', (i) => Math.round(Math.cos(i / 70) * 1000) / 10, (i) => (i % 400 < 10 ? 0 : i % 400 < 20 ? 100 : 192), 25_000);
  await add('int64', 'int64', (i) => Math.round(Math.sin(i / 30) * 1e6), () => 192, N);
  await add('boolean', 'states', (i) => (i >> 9) & 1, () => 192, N);
  await add('enum', 'enum states', (i) => (i >> 10) % 5, (i) => (i % 3000 === 0 ? 64 : 192), N);
  await add('float64', 'raw floats', (i) => Math.sin(i / 50) * Math.PI, () => 192, N);
  await add('string', 'text', (i) => `s${i >> 8}`, () => 192, N);
  const window = new ChunkWindow();
  // counts the chunks read in part, so the test shows the window path ran
  let inPart = 0;
  const decode = window.decode.bind(window);
  window.decode = (...args: Parameters<ChunkWindow['decode']>) => { const m = decode(...args); if (m >= 0) inPart++; return m; };
  const span = BigInt(N) * SEC;
  await fc.assert(fc.asyncProperty(fc.nat({ max: kinds.length - 1 }), fc.bigInt(-200n * SEC, span + 200n * SEC), fc.bigInt(1n, span / 2n), fc.nat({ max: 2 * N }), async (k, a, len, enough) => {
    const { id, type, what } = kinds[k];
    const key = seriesKey(id);
    const from = T0 + a, to = from + len;
    store.read((v) => {
      const head = readOpenColumns(v, key);
      const forward = listRange(v, key, from, to, head, enough);
      const reverse = listWholeRange(v, key, from, to, head, enough);
      if (forward.whole !== reverse.whole) throw new Error(`${what}: whole ${reverse.whole} != ${forward.whole}`);
      if (!forward.whole) return;
      if (reverse.bound !== forward.bound) throw new Error(`${what}: bound ${reverse.bound} != ${forward.bound}`);
      // the head read by the listing itself, only when the range reaches it, bounds the same
      const lazy = listWholeRange(v, key, from, to, undefined, enough);
      if (lazy.bound !== forward.bound) throw new Error(`${what}: bound with the head read lazily ${lazy.bound} != ${forward.bound}`);
      if (lazy.head !== null && head !== null && lazy.head.count !== head.count) throw new Error(`${what}: a different head`);
      const starts = (l: { chunks: HeadedChunk[] }) => l.chunks.map((c) => String(c.start)).join(',');
      if (starts(reverse) !== starts(forward)) throw new Error(`${what}: chunks ${starts(reverse)} != ${starts(forward)}`);
      const whole = points(key, forward.chunks, from, to, type), cut = points(key, reverse.chunks, from, to, type, window);
      if (whole.join('\n') !== cut.join('\n')) throw new Error(`${what}: the window scan gave ${cut.length} points, the whole scan ${whole.length}`);
    });
  }), { seed: SEED, numRuns: 300 });
  t.pass('300 random ranges');
  t.ok(inPart > 20, `${inPart} chunks read in part`);
});
