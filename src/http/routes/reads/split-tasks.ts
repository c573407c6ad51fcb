// A resolved read over many attributes runs as several read-pool tasks: at least one per
// worker (the workers decode in parallel), and no slice larger than SLICE_ATTRIBUTES, so that
// handing a slice to a worker (structured clone of its plan, on this thread) stays a few
// milliseconds: a 10,000-attribute plan posted whole took 30-50 ms here on a loaded 2-core
// machine (2026-11-27, node postMessage of the plan objects), past the 20 ms a request may
// hold the event loop. Each task writes its items only (`fragment`); the bodies become one
// array here, either joined (one copy of the bytes; the slabs go back to their workers at
// once) or, for the raw read, as pieces sent from the slabs as they are: joining the hour of
// 950 attributes (49-212 MB) cost the HTTP thread 30-300 ms of copying into fresh memory
// (first-touch page faults), more than sending it (2026-11-28). A read whose bodies are large
// (the raw rows) asks for more slices than workers (slicesPerWorker): see runSliced.
import type { HandlerContext, Reply } from '../../route.js';
import type { ReadBody } from '../../../workers/read-pool.js';
import type { BodyFormat, TaskArgs } from '../../../workers/task-protocol.js';
import type { PlanAttribute, ResolvedTaskBase } from '../../../workers/resolved-points.js';
import { ServiceError } from '../../../errors.js';

/** Below this many attributes one task answers the whole read. */
export const SPLIT_AT = 32;
/** Most attributes one task's plan carries. */
export const SLICE_ATTRIBUTES = 1_000;
/** Most tasks one read queues. */
const MAX_SLICES = 32;
/**
 * Slices per worker a read with large bodies asks for. A worker keeps its body slabs up to
 * 96 MiB (body-slabs.ts: larger ones are used once) and three of them: the rows of the hour
 * of 950 attributes in two slices were two JSON bodies of 106 MB, so each read allocated two
 * fresh ~130 MB slabs (58,000 page faults a read, and the HTTP thread received 260 MB of new
 * shared memory a read, collected by its GC). In four slices each worker writes two bodies
 * of ~53 MB into slabs it keeps: service CPU 2,700 -> 1,110 ms a JSON rows read (msgpack rows
 * 1,207 -> 470), page faults 58,000 -> 12,800 (bench reads at load 22-28, 2026-11-28). Not more
 * than two: both of a worker's bodies stay lent until the whole answer is sent, and a third
 * slab is left for the worker's next read.
 */
export const LARGE_BODY_SLICES_PER_WORKER = 2;

type SlicedTask = { [K in keyof TaskArgs]: TaskArgs[K] extends ResolvedTaskBase ? K : never }[keyof TaskArgs];

/**
 * Runs `name` over the plan's attributes, sliced (see the file header). `extra` gives the
 * members a slice needs beyond the base (from: the slice's first attribute index).
 * `limitPoints`: refuse with read-too-large when the slices together visited more points
 * than the base allows (each slice is held to the whole limit on its own). `pieces`: answer
 * the tasks' bodies as the pieces of one array, sent from their slabs without being joined
 * (the slabs go back once the last byte is sent); the caller's reply must not need one buffer.
 * `slicesPerWorker`: at least this many slices per worker (LARGE_BODY_SLICES_PER_WORKER for
 * bodies that would pass a kept slab's size in one slice per worker).
 */
export async function runSliced<K extends SlicedTask>(ctx: HandlerContext, name: K, base: ResolvedTaskBase,
  extra: (slice: PlanAttribute[], from: number) => Omit<TaskArgs[K], keyof ResolvedTaskBase>, opts: { limitPoints?: boolean; pieces?: boolean; slicesPerWorker?: number } = {}): Promise<Reply> {
  const pool = ctx.service.parts.readPool;
  const attrs = base.attributes;
  if (attrs.length < SPLIT_AT) {
    const b = await pool.run(name, { ...base, ...extra(attrs, 0), fragment: false } as TaskArgs[K], ctx.signal);
    return { kind: 'bytes', contentType: b.contentType, bytes: b.bytes, release: b.release };
  }
  // at most MAX_SLICES tasks (the pool's queue is bounded): past 32,000 attributes the slices grow
  const parts = Math.min(MAX_SLICES, Math.max(pool.threads * (opts.slicesPerWorker ?? 1), Math.ceil(attrs.length / SLICE_ATTRIBUTES)));
  const size = Math.ceil(attrs.length / parts);
  const runs: Array<Promise<ReadBody>> = [];
  for (let from = 0; from < attrs.length; from += size) {
    const slice = attrs.slice(from, from + size);
    const run = pool.run(name, { ...base, attributes: slice, ...extra(slice, from), fragment: true } as TaskArgs[K], ctx.signal);
    run.catch(() => undefined); // observed below; a rejection must not go unhandled while later slices are handed out
    runs.push(run);
    // one slice handed over per turn of the event loop
    await new Promise<void>((done) => setImmediate(done));
  }
  const settled = await Promise.allSettled(runs);
  const bodies = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) { for (const b of bodies) b.release(); throw failed.reason; }
  if (opts.limitPoints) {
    let points = 0;
    for (const b of bodies) points += b.points;
    if (points > base.maxPoints) {
      for (const b of bodies) b.release();
      throw new ServiceError('read-too-large', `the read holds more than ${base.maxPoints} points (max_points); narrow the window or the selection, or raise max_points`, { limit: base.maxPoints, field: 'max_points' });
    }
  }
  if (opts.pieces) {
    const release = () => { for (const b of bodies) b.release(); };
    return { kind: 'bytes', contentType: bodies[0].contentType, bytes: itemPieces(bodies, base.format, attrs.length), release };
  }
  return { kind: 'bytes', contentType: bodies[0].contentType, bytes: await joinItems(bodies, base.format, attrs.length), release: () => undefined };
}

/**
 * The tasks' item lists as the pieces of one array body, in order, nothing copied: the
 * array's header, then each non-empty body (JSON: with commas between), then `]` (JSON).
 */
export function itemPieces(bodies: ReadBody[], format: BodyFormat, count: number): Uint8Array[] {
  const out: Uint8Array[] = [format === 'msgpack' ? arrayHeader(count) : Uint8Array.of(0x5b)];
  let first = true;
  for (const b of bodies) {
    if (b.bytes.length === 0) continue;
    if (format === 'json' && !first) out.push(COMMA);
    out.push(b.bytes);
    first = false;
  }
  if (format === 'json') out.push(CLOSE);
  return out;
}
const COMMA = Uint8Array.of(0x2c), CLOSE = Uint8Array.of(0x5d);

/** Bytes copied per turn of the event loop when joining: ~2-4 ms here at 1-2 GB/s. */
const JOIN_STEP = 4 << 20;

/**
 * The tasks' item lists as one array body; the slabs go back to their workers. Copied in
 * JOIN_STEP pieces, one per turn, into memory that is not zeroed first: the hour of 950
 * attributes is 60-160 MB, and one zeroed allocation plus one copy of it held the event
 * loop for tens of milliseconds.
 */
export async function joinItems(bodies: ReadBody[], format: BodyFormat, count: number): Promise<Uint8Array> {
  try {
    const header = format === 'msgpack' ? arrayHeader(count) : Uint8Array.of(0x5b);
    let size = header.length + 1;
    for (const b of bodies) size += b.bytes.length + 1;
    const out = Buffer.allocUnsafe(size);
    out.set(header, 0);
    let at = header.length;
    let first = true;
    let sinceYield = 0;
    for (const b of bodies) {
      if (b.bytes.length === 0) continue;
      if (format === 'json' && !first) out[at++] = 0x2c;
      for (let from = 0; from < b.bytes.length; from += JOIN_STEP) {
        if (sinceYield >= JOIN_STEP) { await new Promise<void>((done) => setImmediate(done)); sinceYield = 0; }
        const piece = b.bytes.subarray(from, Math.min(b.bytes.length, from + JOIN_STEP));
        out.set(piece, at);
        at += piece.length;
        sinceYield += piece.length;
      }
      first = false;
    }
    if (format === 'json') out[at++] = 0x5d;
    return out.subarray(0, at);
  } finally {
    for (const b of bodies) b.release();
  }
}

function arrayHeader(n: number): Uint8Array {
  if (n < 16) return Uint8Array.of(0x90 | n);
  if (n < 65536) return Uint8Array.of(0xdc, n >> 8, n & 0xff);
  return Uint8Array.of(0xdd, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}
