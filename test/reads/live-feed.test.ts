// The commit feed's packing (src/ingest/commit-feed.ts): what the worker posts, unpacked
// on the main thread, is every watched batch's points minus the refused ones, of every
// value kind (typed columns, views into an offset source, plain arrays), unwatched
// batches and batches with nothing stored left out, and one buffer moved per group.
import t from 'tap';
import fc from 'fast-check';
import { CommitFeed, PIECE_BYTES, unpackCommits } from '../../src/ingest/commit-feed.js';
import type { PackedCommits } from '../../src/ingest/thread-messages.js';
import type { PointBatch } from '../../src/storage/series-store.js';
import type { StoredBatchResult } from '../../src/ingest/ingest-store.js';

const KINDS = ['f64', 'i64', 'u8', 'i32', 'strings', 'plain'] as const;
type Kind = typeof KINDS[number];

function valuesOf(kind: Kind, n: number, seed: number, offset: number): PointBatch['values'] {
  const at = (i: number) => (seed * 31 + i * 7) % 1000;
  switch (kind) {
    // typed columns as views into a larger buffer at an offset, as gRPC messages give them
    case 'f64': return new Float64Array(n + offset).map((_, i) => at(i) / 8).subarray(offset);
    case 'i64': return new BigInt64Array(n + offset).map((_, i) => BigInt(at(i)) - 500n).subarray(offset);
    case 'u8': return new Uint8Array(n + offset).map((_, i) => at(i) & 1).subarray(offset);
    case 'i32': return new Int32Array(n + offset).map((_, i) => at(i)).subarray(offset);
    case 'strings': return Array.from({ length: n }, (_, i) => `v${at(i)}`);
    case 'plain': return Array.from({ length: n }, (_, i) => at(i) * 1.5);
  }
}

t.test('a packed group unpacks to the watched batches minus their refusals', async (t) => {
  const arbBatch = fc.record({
    series: fc.integer({ min: 0, max: 5 }),
    kind: fc.constantFrom(...KINDS),
    n: fc.integer({ min: 0, max: 40 }),
    seed: fc.integer({ min: 0, max: 1000 }),
    offset: fc.integer({ min: 0, max: 3 }),
    typedTimes: fc.boolean(),
    refused: fc.array(fc.integer({ min: 0, max: 39 }), { maxLength: 10 }),
  });
  fc.assert(fc.property(fc.array(arbBatch, { maxLength: 12 }), fc.subarray([0, 1, 2, 3, 4, 5]), (specs, watchedIdx) => {
    const posted: Array<{ p: PackedCommits; transfer: ArrayBuffer[] }> = [];
    const feed = new CommitFeed((p, transfer) => posted.push({ p, transfer }));
    const name = (i: number) => `0000000${i}-AAAA-4000-8000-000000000000`;
    feed.setWatched(watchedIdx.map((i) => name(i).toLowerCase()));
    const batches: PointBatch[] = [], results: StoredBatchResult[] = [];
    const expected: Array<{ series: string; times: bigint[]; values: unknown[]; quality: number[] }> = [];
    for (const s of specs) {
      const times = Array.from({ length: s.n }, (_, i) => 1_700_000_000_000_000_000n + BigInt(s.seed * 1000 + i));
      const quality = Array.from({ length: s.n }, (_, i) => (i % 3) * 96);
      const values = valuesOf(s.kind, s.n, s.seed, s.offset);
      batches.push({ series: name(s.series), times: s.typedTimes ? BigInt64Array.from(times) : times, values, quality: s.typedTimes ? Uint32Array.from(quality) : quality });
      const refused = new Set(s.refused.filter((i) => i < s.n));
      results.push({ accepted: s.n - refused.size, unchanged: 0, refused: refused.size, refusals: [...refused].map((index) => ({ index, reason: 'non-finite' as const })) });
      if (!watchedIdx.includes(s.series) || s.n - refused.size === 0) continue;
      const keep = (_: unknown, i: number) => !refused.has(i);
      expected.push({ series: name(s.series).toLowerCase(), times: times.filter(keep), values: [...values].filter(keep), quality: quality.filter(keep) });
    }
    feed.publish(batches, results);
    if (expected.length === 0) return posted.length === 0;
    const { p, transfer } = posted[0] ?? { p: null, transfer: [] };
    if (posted.length !== 1 || p === null || transfer.length !== p.bytes.length + 1 || !p.bytes.every((b) => transfer.includes(b)) || !transfer.includes(p.shape.buffer as ArrayBuffer)) return false;
    const got = unpackCommits(posted[0].p).columns.map((c) => ({ series: c.series, times: [...c.times], values: [...c.values], quality: [...c.quality] }));
    t.same(got, expected);
    return feed.pointsForwarded === expected.reduce((a, e) => a + e.times.length, 0);
  }), { numRuns: 500 });
});

t.test('a group larger than a piece is packed in pieces of whole columns, a column larger than a piece alone', async (t) => {
  const posted: PackedCommits[] = [];
  const feed = new CommitFeed((p) => posted.push(p));
  const name = (i: number) => `0000000${i % 10}-aaaa-4000-8000-00000000000${Math.floor(i / 10)}`;
  feed.setWatched(Array.from({ length: 20 }, (_, i) => name(i)));
  // 1,000-point float64 columns take 20 KB: three to a 60 KB piece, the fourth starts the next;
  // one of 5,000 points (100 KB) goes alone; a piece is filled in column order only
  const sizes = [1000, 1000, 1000, 1000, 5000, 1000, 10, 1000];
  const batches: PointBatch[] = sizes.map((n, k) => ({
    series: name(k), times: BigInt64Array.from({ length: n }, (_, i) => 1_700_000_000_000_000_000n + BigInt(k * 1_000_000 + i)),
    values: Float64Array.from({ length: n }, (_, i) => k + i / 4), quality: new Uint32Array(n).fill(192),
  }));
  feed.publish(batches, sizes.map((n) => ({ accepted: n, unchanged: 0, refused: 0, refusals: [] })));
  t.equal(posted.length, 1);
  const p = posted[0];
  t.same(p.bytes.map((b) => b.byteLength), [60_000, 20_000, 100_000, 20_000 + 200 + 20_000], 'pieces of whole columns in column order');
  t.ok(p.bytes.every((b) => b.byteLength <= PIECE_BYTES || b.byteLength === 100_000), 'only the 5,000-point column past a piece');
  const got = unpackCommits(p).columns;
  t.same(got.map((c) => c.times.length), sizes);
  t.same(got.map((c) => [c.times[c.times.length - 1], c.values[c.values.length - 1], c.quality[0]]), batches.map((b, k) => [b.times[b.times.length - 1], k + (sizes[k] - 1) / 4, 192]));
});

t.test('nothing is posted while nothing is watched', async (t) => {
  let posts = 0;
  const feed = new CommitFeed(() => { posts++; });
  feed.publish([{ series: 'a', times: [1n], values: [1], quality: [192] }], [{ accepted: 1, unchanged: 0, refused: 0, refusals: [] }]);
  t.equal(posts, 0);
});
