// POST /v1/read/snapshot's handler. A snapshot of the current model without units is
// answered from a kept plan (src/reads/snapshot-plan.ts, per resolve body and per caller
// unless it may read everything): no resolution, per attribute only its slot read and its
// item written, into a body buffer lent to the response and kept for the next read. Any
// other: resolution on this thread (src/reads), then each attribute answered from the
// latest-point table here (src/reads/read-snapshot.ts), and only the attributes it cannot
// answer read from storage: a few here (as the task does), more in the read pool (sliced
// like every point read, each slice's items written alone), whose items are put back in
// their places. A snapshot whose every attribute is in the table makes no worker hop and
// reads no head.
import type { HandlerContext, Reply } from '../../route.js';
import { attachToRead } from './read-attachments.js';
import { SLICE_ATTRIBUTES, SPLIT_AT } from './split-tasks.js';
import { nowNs } from '../../../clock.js';
import { resolveRead, type ReadResolution, type ResolveRequest } from '../../../reads/read-resolution.js';
import { snapshotPlanFor, type SnapshotPlan } from '../../../reads/snapshot-plan.js';
import { memberNamesOf } from '../../../reads/read-members.js';
import { unitPlans, type ReadUnitsRequest, type UnitPlan } from '../../../reads/read-units.js';
import { readTaskBase } from '../../../reads/read-plan.js';
import { ANSWER_SLICE, answerFromLatest, answerFromPlan, latestAnswers, writePlanBody, writeSnapshotBody, type LatestAnswerOptions, type LatestAnswers } from '../../../reads/read-snapshot.js';
import { BodySink } from '../../../body-sink.js';
import { fillSequences, snapshotItems } from '../../../workers/tasks/read-snapshot-task.js';
import { JSON_TYPE, MSGPACK_TYPE, type BodyFormat } from '../../../workers/task-protocol.js';
import type { ReadBody } from '../../../workers/read-pool.js';
import { unpackMultiple } from 'msgpackr';

/**
 * Attributes the table cannot answer that are read on this thread rather than in the pool
 * (a worker hop costs more than a few head reads; ARCHITECTURE.md lets this thread read a
 * snapshot): at ~5-50 µs each, a few milliseconds at most.
 */
const INLINE_PENDING = 64;
/** Most tasks one read queues (the pool's queue is bounded; split-tasks.ts holds the same bound). */
const MAX_SLICES = 32;

interface SnapshotBody { resolve: unknown; units?: ReadUnitsRequest; exclude_quality?: 'bad' | 'bad_and_uncertain' }

export async function snapshotRead(ctx: HandlerContext, body: SnapshotBody, format: BodyFormat): Promise<Reply> {
  const req = body.resolve as ResolveRequest;
  const table = ctx.service.parts.storage.latest;
  const noUnits = body.units === undefined || (body.units.default === undefined && (body.units.attributes === undefined || Object.keys(body.units.attributes).length === 0));
  if (table !== null && noUnits && req.as_of_ns == null) {
    const now = nowNs();
    const plan = await snapshotPlanFor(ctx.service, (c, t) => ctx.can(c, t), ctx.principal?.id ?? null, req, now);
    if (plan !== null) return planRead(ctx, body, format, table, plan, now);
  }
  const at = req.as_of_ns == null ? null : BigInt(req.as_of_ns);
  const w = { atNs: at ?? nowNs() };
  const r = await resolveRead(ctx.service, (c, t) => ctx.can(c, t), req, w);
  const units = await unitPlans(ctx.service, r.attributes, body.units);
  const members = await memberNamesOf(ctx.service, r);
  const now = nowNs();
  const n = r.attributes.length;
  const answers = latestAnswers(n);
  const o = { excludeQuality: body.exclude_quality ?? null, upToNs: at, nowNs: now, format, members };
  if (table === null) for (let k = 0; k < n; k++) answers.pending.push(k);
  else {
    for (let from = 0; from < n; from += ANSWER_SLICE) {
      if (from > 0) await new Promise<void>((done) => setImmediate(done));
      answerFromLatest(table, r, units, o, answers, from, Math.min(n, from + ANSWER_SLICE));
    }
  }
  await readPending(ctx, r, units, { excludeQuality: o.excludeQuality, format, members, upToNs: at, nowNs: now }, answers);
  const sink = new BodySink(64 * 1024 + n * 384);
  writeSnapshotBody(sink, r, units, o, answers);
  return attachToRead(ctx, body as unknown as Record<string, unknown>, r.attributes, w, { kind: 'bytes', contentType: format === 'msgpack' ? MSGPACK_TYPE : JSON_TYPE, bytes: sink.buf.subarray(0, sink.pos) });
}

/** A snapshot of a kept plan (snapshot-plan.ts) at `now`: its slots, the rest from storage, the body into a lent buffer. */
async function planRead(ctx: HandlerContext, body: SnapshotBody, format: BodyFormat, table: NonNullable<HandlerContext['service']['parts']['storage']['latest']>, plan: SnapshotPlan, now: bigint): Promise<Reply> {
  const n = plan.n;
  const answers = plan.takeAnswers();
  const excludeQuality = body.exclude_quality ?? null;
  for (let from = 0; from < n; from += ANSWER_SLICE) {
    if (from > 0) await new Promise<void>((done) => setImmediate(done));
    answerFromPlan(table, plan, excludeQuality, answers, from, Math.min(n, from + ANSWER_SLICE));
  }
  const r = plan.at(now);
  await readPending(ctx, r, NO_UNITS, { excludeQuality, format, members: plan.members, upToNs: null, nowNs: now }, answers);
  const sink = takeSink();
  let lent = true;
  const release = () => { if (lent) { lent = false; giveSink(sink); } };
  try {
    writePlanBody(sink, plan, now, format, answers);
    plan.giveAnswers(answers);
    return await attachToRead(ctx, body as unknown as Record<string, unknown>, r.attributes, { atNs: now }, { kind: 'bytes', contentType: format === 'msgpack' ? MSGPACK_TYPE : JSON_TYPE, bytes: sink.buf.subarray(0, sink.pos), release });
  } catch (e) {
    release();
    throw e;
  }
}

const NO_UNITS = new Map<string, UnitPlan>();

/**
 * Body buffers of plan snapshots, lent to the response until sent (or the client left) and
 * then kept for the next: a fresh buffer of a wide snapshot's few MB is zeroed and
 * faulted in page by page on every read.
 */
const freeSinks: BodySink[] = [];
const SINKS_KEPT = 4;
/** A buffer grown past this is not kept. */
const LARGEST_KEPT = 32 << 20;
function takeSink(): BodySink {
  const s = freeSinks.pop() ?? new BodySink(256 * 1024);
  s.reset();
  return s;
}
function giveSink(s: BodySink): void {
  if (freeSinks.length < SINKS_KEPT && s.buf.byteLength <= LARGEST_KEPT) freeSinks.push(s);
}

interface PendingOptions { excludeQuality: 'bad' | 'bad_and_uncertain' | null; format: BodyFormat; members: LatestAnswerOptions['members']; upToNs: bigint | null; nowNs: bigint }

/** The attributes the table could not answer (answers.pending), read from storage into answers.items. */
async function readPending(ctx: HandlerContext, r: ReadResolution, units: Map<string, UnitPlan>, o: PendingOptions, answers: Pick<LatestAnswers, 'pending' | 'items'>): Promise<void> {
  const table = ctx.service.parts.storage.latest;
  const { format, members } = o;
  const upToNs = o.upToNs === null ? null : String(o.upToNs);
  if (answers.pending.length > 0 && answers.pending.length <= INLINE_PENDING) {
    // a few left (string series, a latest the filter drops): read here, as the task would
    const base = readTaskBase({ ...r, attributes: answers.pending.map((k) => r.attributes[k]) }, units, { excludeQuality: o.excludeQuality, format, members });
    const seqs = table === null ? null : fillSequences(table, base.attributes);
    ctx.service.parts.storage.read((view) => snapshotItems(view, { ...base, nowNs: String(o.nowNs), upToNs, table, seqs }, format === 'json', (k, it) => { answers.items[answers.pending[k]] = it; }));
  } else if (answers.pending.length > 0) {
    const rest = { ...r, attributes: answers.pending.map((k) => r.attributes[k]) };
    const base = readTaskBase(rest, units, { excludeQuality: o.excludeQuality, format, members });
    base.nowNs = String(o.nowNs);
    const latest = table?.buffer ?? null;
    const pool = ctx.service.parts.readPool;
    const runs: Array<Promise<ReadBody>> = [];
    // as runSliced: a task per worker from SPLIT_AT attributes, at most SLICE_ATTRIBUTES a task, at most MAX_SLICES tasks
    const count = rest.attributes.length;
    const parts = Math.min(MAX_SLICES, Math.max(count < SPLIT_AT ? 1 : pool.threads, Math.ceil(count / SLICE_ATTRIBUTES)));
    const size = Math.ceil(count / parts);
    for (let from = 0; from < count; from += size) {
      const run = pool.run('readSnapshot', { ...base, attributes: base.attributes.slice(from, from + size), fragment: true, upToNs, latest }, ctx.signal);
      run.catch(() => undefined); // observed below
      runs.push(run);
      if (from + size < count) await new Promise<void>((done) => setImmediate(done));
    }
    const settled = await Promise.allSettled(runs);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    try {
      if (failed) throw failed.reason;
      let k = 0;
      for (const s of settled) {
        const b = (s as PromiseFulfilledResult<ReadBody>).value;
        k = placeItems(b.bytes, format, answers, k);
      }
      if (k !== answers.pending.length) throw new Error(`BUG: the snapshot task answered ${k} of ${answers.pending.length} attributes`);
    } finally {
      for (const s of settled) if (s.status === 'fulfilled') s.value.release();
    }
  }
}

/** The task's items (a fragment: JSON items comma-separated, msgpack items one after another) into their places; returns the next pending index. */
function placeItems(bytes: Uint8Array, format: BodyFormat, answers: Pick<LatestAnswers, 'pending' | 'items'>, k: number): number {
  if (bytes.length === 0) return k;
  if (format === 'msgpack') {
    unpackMultiple(bytes, (_value: unknown, start?: number, end?: number) => { answers.items[answers.pending[k++]] = bytes.slice(start, end); });
    return k;
  }
  // JSON: split at the commas between items (depth 0, outside strings)
  let depth = 0, inString = false, start = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c && depth === 0) { answers.items[answers.pending[k++]] = bytes.slice(start, i); start = i + 1; }
  }
  answers.items[answers.pending[k++]] = bytes.slice(start);
  return k;
}
