// GET /v1/series/{uuid}/raw in a worker: walks the chunks and the head over [start, end)
// (engine scanRange) and serialises each point straight from the decoded columns into
// the worker's body buffer, JSON or msgpack. No per-point objects and no BigInt on the
// common paths (times print from two exact doubles; see digits.ts (src/json)).
//
// Body: {series, start_ns, end_ns, points: [{ts_ns, value, quality}], next_cursor}
// value: number (float64), int64 integer, boolean, string, or {enum_set, ordinal}.
// With layout 'columns' the points are columns instead: in msgpack typed columns
// (raw-points-columns.ts): {series, start_ns, end_ns, layout, value_type, enum_set, count,
// points: {ts_ns, value, quality}, encoding, next_cursor}; in JSON the same without
// `encoding`, points as three arrays (raw-columns-json.ts).
import { encodeCursor } from '../../cursor.js';
import type { PointColumns, ValueType } from '../../storage/encoding/chunk-types.js';
import { MAX_CHUNK_POINTS } from '../../storage/series-store.js';
import { allocColumns } from '../../storage/series-store.js';
import { checkRange, MAX_RAW_LIMIT, requireMeta } from '../../storage/series-store.js';
import { listRange, scanChunks, scanRange, visitHead, type RunVisitor } from '../../storage/series-store.js';
import { readOpenColumns } from '../../storage/series-store.js';
import { seriesKey } from '../../storage/series-store.js';
import { invalid } from '../../errors.js';
import { mpArray32Reserved, mpInt64Big, mpKey, mpMapHeader, mpNil, mpString, mpUint } from '../msgpack-bytes.js';
import { writeJsonPoints } from '../raw-points-json.js';
import { writeMsgpackPoints } from '../raw-points-msgpack.js';
import { EnumMemberText, type EnumMemberNames } from '../enum-member-text.js';
import { ColumnPage } from '../raw-points-columns.js';
import { JsonColumnPage, putCount, reserveCount } from '../raw-columns-json.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type RawTask, type TaskOutcome } from '../task-protocol.js';
import type { ReadView } from '../../storage/series-store.js';
import type { BodySink } from '../../body-sink.js';

/** Per-worker decode columns, one set per value type, reused by every raw read. */
const scratch = new Map<ValueType, PointColumns>();
function scratchFor(type: ValueType): PointColumns {
  let c = scratch.get(type);
  if (!c) { c = allocColumns(type, MAX_CHUNK_POINTS); scratch.set(type, c); }
  return c;
}

/** Per-worker columns of a `layout=columns` page, reused by every such read. */
const columnPage = new ColumnPage();
const jsonColumnPage = new JsonColumnPage();

/** Cursor listing name: a raw cursor is tied to its series. */
export const rawCursorListing = (series: string) => `series-raw:${series}`;

/**
 * `members`: the enum set's member names by ordinal, read by the HTTP thread from the
 * registry (rows layouts add each point's name; columns layouts keep bare ordinals).
 */
export function rawTask(t: RawTask & { members?: EnumMemberNames | null }): TaskOutcome {
  return runTask(t.format === 'msgpack' ? MSGPACK_TYPE : JSON_TYPE, (view, sink) => {
    const startNs = BigInt(t.startNs), endNs = BigInt(t.endNs);
    checkRange(startNs, endNs);
    if (!Number.isInteger(t.limit) || t.limit < 1 || t.limit > MAX_RAW_LIMIT) throw invalid('limit', `must be an integer 1..${MAX_RAW_LIMIT}`);
    const meta = requireMeta(view, t.series);
    const series = seriesKey(t.series);
    const afterNs = t.afterNs === null ? null : BigInt(t.afterNs);
    const from = afterNs !== null && afterNs >= startNs ? afterNs + 1n : startNs;
    const enumSet = meta.enumSet?.id ?? '';
    const enumJson = JSON.stringify(enumSet);
    if (t.layout === 'columns') {
      return t.format === 'msgpack'
        ? writeColumnsPage(view, sink, t, series, from, endNs, meta.type, enumSet)
        : writeJsonColumnsPage(view, sink, t, series, from, endNs, meta.type, enumJson);
    }
    const json = t.format === 'json';
    const members = meta.type === 'enum' && t.members ? new EnumMemberText(enumSet, t.members, json ? 'json' : 'msgpack') : null;
    // msgpack needs the array length up front: reserve a 5-byte array32 header and patch it.
    let countAt = 0;
    if (json) {
      sink.ascii(`{"series":"${t.series}","start_ns":${startNs},"end_ns":${endNs},"points":[`);
    } else {
      mpMapHeader(sink, 5);
      sink.bytes(mpKey('series')); mpString(sink, t.series);
      sink.bytes(mpKey('start_ns')); mpInt64Big(sink, startNs);
      sink.bytes(mpKey('end_ns')); mpInt64Big(sink, endNs);
      sink.bytes(mpKey('points'));
      countAt = mpArray32Reserved(sink);
    }
    let n = 0;
    let more = false;
    let lastTs = 0n;
    if (from < endNs) {
      scanRange(view, series, from, endNs, (cols, i0, i1) => {
        const room = t.limit - n;
        const take = Math.min(room, i1 - i0);
        if (take > 0) {
          if (json) writeJsonPoints(sink, cols, i0, i0 + take, n === 0, enumJson, members);
          else writeMsgpackPoints(sink, cols, i0, i0 + take, enumSet, members);
          n += take;
          lastTs = cols.tsBase + BigInt(cols.tsOffset[i0 + take - 1]);
        }
        if (take < i1 - i0) { more = true; return false; }
        return true;
      }, scratchFor(meta.type));
    }
    const cursor = nextCursor(t.series, more, lastTs);
    if (json) {
      sink.ascii(`],"next_cursor":${cursor === null ? 'null' : JSON.stringify(cursor)}}`);
    } else {
      sink.view.setUint32(countAt, n);
      sink.bytes(mpKey('next_cursor'));
      if (cursor === null) mpNil(sink); else mpString(sink, cursor);
    }
    return n;
  });
}

const nextCursor = (series: string, more: boolean, lastTs: bigint): string | null =>
  (more ? encodeCursor(rawCursorListing(series), [lastTs.toString()]) : null);

/** A page's points so far, gathered run by run (ColumnPage, JsonColumnPage). */
interface PageGather {
  count: number;
  append(cols: PointColumns, i0: number, i1: number): void;
}

interface Gathered { more: boolean; lastTs: bigint }

/** The visitor that takes runs into `page` up to t.limit points, noting whether points remain and the last time taken. */
function gatherInto(page: PageGather, limit: number, got: Gathered): RunVisitor {
  return (cols, i0, i1) => {
    const take = Math.min(limit - page.count, i1 - i0);
    if (take > 0) {
      page.append(cols, i0, i0 + take);
      got.lastTs = cols.tsBase + BigInt(cols.tsOffset[i0 + take - 1]);
    }
    if (take < i1 - i0) { got.more = true; return false; }
    return true;
  };
}

/** Scans [from, endNs) into `page`, at most t.limit points. */
function gatherPage(view: ReadView, t: RawTask, series: Buffer, from: bigint, endNs: bigint, type: ValueType, page: PageGather): Gathered {
  const got: Gathered = { more: false, lastTs: 0n };
  if (from < endNs) scanRange(view, series, from, endNs, gatherInto(page, t.limit, got), scratchFor(type));
  return got;
}

/**
 * A page in the columnar layout, msgpack: the columns are gathered into the body itself
 * (raw-points-columns.ts), sized by the bound the chunk headers give on the page's points
 * (the chunks are listed first, then scanned from the listing). `count` goes before the
 * columns as a uint32 patched after the scan; `encoding` follows them (the narrow widths
 * are known only then).
 */
function writeColumnsPage(view: ReadView, sink: BodySink, t: RawTask, series: Buffer, from: bigint, endNs: bigint, type: ValueType, enumSet: string): number {
  const page = columnPage;
  const head = from < endNs ? readOpenColumns(view, series) : null;
  const listing = listRange(view, series, from, endNs, head, t.limit);
  mpMapHeader(sink, 10);
  sink.bytes(mpKey('series')); mpString(sink, t.series);
  sink.bytes(mpKey('start_ns')); mpInt64Big(sink, BigInt(t.startNs));
  sink.bytes(mpKey('end_ns')); mpInt64Big(sink, endNs);
  sink.bytes(mpKey('layout')); mpString(sink, 'columns');
  sink.bytes(mpKey('value_type')); mpString(sink, type);
  sink.bytes(mpKey('enum_set')); if (type === 'enum') mpString(sink, enumSet); else mpNil(sink);
  sink.bytes(mpKey('count'));
  sink.reserve(5);
  sink.buf[sink.pos] = 0xce;
  const countAt = sink.pos + 1;
  sink.pos += 5;
  sink.bytes(mpKey('points'));
  page.begin(sink, type, Math.min(listing.bound, t.limit));
  const got: Gathered = { more: false, lastTs: 0n };
  try {
    const visit = gatherInto(page, t.limit, got);
    if (scanChunks(series, listing.chunks, from, endNs, visit, scratchFor(type)) && listing.whole) visitHead(head, from, endNs, visit);
  } catch (e) {
    page.release();
    throw e;
  }
  page.finish();
  sink.view.setUint32(countAt, page.count);
  page.writeEncodings(sink);
  sink.bytes(mpKey('next_cursor'));
  const cursor = nextCursor(t.series, got.more, got.lastTs);
  if (cursor === null) mpNil(sink); else mpString(sink, cursor);
  return page.count;
}

/** A page in the columnar layout, JSON: three arrays (raw-columns-json.ts) after the page's facts. */
function writeJsonColumnsPage(view: ReadView, sink: BodySink, t: RawTask, series: Buffer, from: bigint, endNs: bigint, type: ValueType, enumJson: string): number {
  const page = jsonColumnPage;
  sink.ascii(`{"series":"${t.series}","start_ns":${t.startNs},"end_ns":${endNs},"layout":"columns","value_type":"${type}",`
    + `"enum_set":${type === 'enum' ? enumJson : 'null'},"count":`);
  const countAt = reserveCount(sink);
  sink.ascii(',"points":{"ts_ns":[');
  page.begin(sink);
  try {
    const { more, lastTs } = gatherPage(view, t, series, from, endNs, type, page);
    page.finish();
    putCount(sink, countAt, page.count);
    const cursor = nextCursor(t.series, more, lastTs);
    sink.ascii(`,"next_cursor":${cursor === null ? 'null' : JSON.stringify(cursor)}}`);
    return page.count;
  } finally {
    page.end();
  }
}
