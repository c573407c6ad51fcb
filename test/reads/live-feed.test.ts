// The commit feed's packing (src/ingest/commit-feed.ts): what the worker posts, unpacked
// on the main thread, is every watched batch's points minus the refused ones, of every
// value kind (typed columns, views into an offset source, plain arrays), unwatched
// batches and batches with nothing stored left out, and one buffer moved per group.
import t from 'tap';
import fc from 'fast-check';
import { CommitFeed, unpackCommits } from '../../src/ingest/commit-feed.js';
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
    if (posted.length !== 1 || posted[0].transfer.length !== 2 || !posted[0].transfer.includes(posted[0].p.bytes)) return false;
    const got = unpackCommits(posted[0].p).columns.map((c) => ({ series: c.series, times: [...c.times], values: [...c.values], quality: [...c.quality] }));
    t.same(got, expected);
    return feed.pointsForwarded === expected.reduce((a, e) => a + e.times.length, 0);
  }), { numRuns: 500 });
});

t.test('nothing is posted while nothing is watched', async (t) => {
  let posts = 0;
  const feed = new CommitFeed(() => { posts++; });
  feed.publish([{ series: 'a', times: [1n], values: [1], quality: [192] }], [{ accepted: 1, unchanged: 0, refused: 0, refusals: [] }]);
  t.equal(posts, 0);
});
