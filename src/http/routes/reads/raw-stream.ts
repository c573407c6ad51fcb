// The raw read over many attributes, streamed: its slices' bodies go out in order as the
// read workers finish them (src/http/stream-reply.ts), not after the last one. The hour of
// 950 attributes (3.7 M points, 49 MB msgpack columns, 212 MB JSON rows) sent nothing
// until both workers had encoded everything; streamed, the HTTP thread and the client take
// the first slices while the workers encode the rest.
//
// The read-too-large refusal must be decided before the first byte (after it, no error
// envelope can be sent). So the read starts with a bound pass (tasks/read-raw-bound-task.ts,
// one task per worker, queued before the slices): the points of the chunks covering each
// segment, from their headers, plus the open head's. When that bound is within max_points
// no slice can pass it (a slice writes at most its attributes' bound) and the answer
// streams. When it is not, the read runs as before: every slice finished, the points they
// wrote added up exactly, and either refused or answered from the slabs (split-tasks.ts).
// Points committed between the bound pass and a slice's own snapshot (late data inside the
// window) are not counted against the limit; a slice holds itself to max_points alone, and
// would cut the stream if it passed it (stream-reply.ts: the body ends without its last chunk).
//
// Slices are smaller than the joined read's (STREAM_SLICE_ATTRIBUTES): the first byte waits
// for the first slice, and each slab goes back to its worker once sent. The tasks get no
// abort signal: a client that leaves has its slices' slabs handed back as they finish
// (aborting a running Piscina task ends its worker thread, and 17 tasks each listening on the
// request's signal passed Node's listener warning).
import type { HandlerContext, Reply } from '../../route.js';
import type { ReadBody } from '../../../workers/read-pool.js';
import type { BodyFormat, ReadRawTask } from '../../../workers/task-protocol.js';
import type { ResolvedTaskBase } from '../../../workers/resolved-points.js';
import type { BodyPiece, BodyPieces } from '../../stream-reply.js';
import { ServiceError } from '../../../errors.js';
import { arrayHeader, itemPieces } from './split-tasks.js';

/** Attributes per streamed slice: ~3 MB of msgpack columns or ~13 MB of JSON rows for the fleet hour. */
export const STREAM_SLICE_ATTRIBUTES = 64;
/** Most tasks one read queues (the pool's queue is bounded: 64 per worker). */
const MAX_SLICES = 32;

type RawExtra = Pick<ReadRawTask, 'includePrior' | 'layout'>;

/**
 * The raw read of `base`'s attributes (at least split-tasks.ts's SPLIT_AT of them), streamed
 * when its bound is within max_points; else answered whole after an exact count.
 */
export async function streamRaw(ctx: HandlerContext, base: ResolvedTaskBase, extra: RawExtra): Promise<Reply> {
  const pool = ctx.service.parts.readPool;
  const attrs = base.attributes;
  const task = (from: number, to: number): ReadRawTask => ({ ...base, ...extra, attributes: attrs.slice(from, to), fragment: true });
  const swallow = (run: Promise<ReadBody>) => { run.catch(() => undefined); return run; };

  const boundSize = Math.ceil(attrs.length / pool.threads);
  const bounds: Array<Promise<ReadBody>> = [];
  for (let from = 0; from < attrs.length; from += boundSize) bounds.push(swallow(pool.run('readRawBound', task(from, from + boundSize))));
  const parts = Math.min(MAX_SLICES, Math.max(pool.threads * 2, Math.ceil(attrs.length / STREAM_SLICE_ATTRIBUTES)));
  const size = Math.ceil(attrs.length / parts);
  const runs: Array<Promise<ReadBody>> = [];
  let handed = 0;
  for (let from = 0; from < attrs.length; from += size) {
    runs.push(swallow(pool.run('readRaw', task(from, from + size))));
    // the plans are cloned to the workers on this thread: ~1,000 attributes a turn at most (split-tasks.ts)
    handed += size;
    if (handed >= 1000) { handed = 0; await new Promise<void>((done) => setImmediate(done)); }
  }
  const releaseAll = (from = 0) => { for (let k = from; k < runs.length; k++) runs[k].then((b) => b.release(), () => undefined); };

  let bound = 0;
  try {
    for (const b of await Promise.all(bounds)) { bound += b.points; b.release(); }
  } catch (e) {
    releaseAll();
    throw e;
  }
  if (bound > base.maxPoints) return whole(runs, base);

  let first: ReadBody;
  try {
    first = await runs[0];
  } catch (e) {
    releaseAll(1);
    throw e;
  }
  return { kind: 'stream', contentType: first.contentType, pieces: new SlicePieces(runs, first, base.format, attrs.length) };
}

/** Every slice finished, the exact count checked (the bound passed max_points), the bodies as pieces of one reply. */
async function whole(runs: Array<Promise<ReadBody>>, base: ResolvedTaskBase): Promise<Reply> {
  const settled = await Promise.allSettled(runs);
  const bodies = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const release = () => { for (const b of bodies) b.release(); };
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) { release(); throw failed.reason; }
  let points = 0;
  for (const b of bodies) points += b.points;
  if (points > base.maxPoints) {
    release();
    throw new ServiceError('read-too-large', `the read holds more than ${base.maxPoints} points (max_points); narrow the window or the selection, or raise max_points`, { limit: base.maxPoints, field: 'max_points' });
  }
  return { kind: 'bytes', contentType: bodies[0].contentType, bytes: itemPieces(bodies, base.format, base.attributes.length), release };
}

const COMMA = Uint8Array.of(0x2c), CLOSE = Uint8Array.of(0x5d), NOTHING = () => undefined;

/** The slices' bodies in order as one array: its header with the first, commas between (JSON), `]` last (JSON). */
class SlicePieces implements BodyPieces {
  private next_ = 0;
  private written = false;
  private closed = false;

  constructor(private readonly runs: Array<Promise<ReadBody>>, private first: ReadBody | null, private readonly format: BodyFormat, private readonly count: number) {}

  async next(): Promise<BodyPiece | null> {
    if (this.closed) return null;
    const k = this.next_;
    if (k === this.runs.length) {
      this.closed = true;
      return this.format === 'json' ? { bytes: [CLOSE], release: NOTHING } : null;
    }
    this.next_++;
    const b = k === 0 ? (this.first as ReadBody) : await this.runs[k];
    this.first = null;
    const bytes: Uint8Array[] = [];
    if (k === 0) bytes.push(this.format === 'msgpack' ? arrayHeader(this.count) : Uint8Array.of(0x5b));
    if (b.bytes.length > 0) {
      if (this.format === 'json' && this.written) bytes.push(COMMA);
      bytes.push(b.bytes);
      this.written = true;
    }
    return { bytes, release: b.release };
  }

  cancel(): void {
    if (this.closed) return;
    this.closed = true;
    this.first?.release();
    for (let k = Math.max(1, this.next_); k < this.runs.length; k++) this.runs[k].then((b) => b.release(), () => undefined);
  }
}
