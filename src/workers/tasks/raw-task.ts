// GET /v1/series/{uuid}/raw in a worker: walks the chunks and the head over [start, end)
// (engine scanRange) and serialises each point straight from the decoded columns into
// the worker's body buffer, JSON or msgpack. No per-point objects and no BigInt on the
// common paths (times print from two exact doubles; see json-digits.ts).
//
// Body: {series, start_ns, end_ns, points: [{ts_ns, value, quality}], next_cursor}
// value: number (float64), int64 integer, boolean, string, or {enum_set, ordinal}.
import { encodeCursor } from '../../http/cursor.js';
import type { PointColumns } from '../../storage/encoding/chunk-types.js';
import { checkRange, MAX_RAW_LIMIT, requireMeta } from '../../storage/read-raw.js';
import { scanRange } from '../../storage/range-scan.js';
import { seriesKey } from '../../storage/keys.js';
import { invalid } from '../../http/errors.js';
import { fragment, type BodySink } from '../body-sink.js';
import { splitBase, writeDouble, writeInt64At, writeSafeInt, writeTime } from '../json-digits.js';
import { mpBool, mpFloat64, mpInt64Big, mpKey, mpMapHeader, mpNil, mpString, mpTime, mpUint, splitWords } from '../msgpack-bytes.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, MSGPACK_TYPE, type RawTask, type TaskOutcome } from '../task-protocol.js';

/** Cursor listing name: a raw cursor is tied to its series. */
export const rawCursorListing = (series: string) => `series-raw:${series}`;

const J_TS = fragment('{"ts_ns":');
const J_VALUE = fragment(',"value":');
const J_QUALITY = fragment(',"quality":');
const J_ENUM = fragment('{"enum_set":');
const J_ORDINAL = fragment(',"ordinal":');
const J_TRUE = fragment('true');
const J_FALSE = fragment('false');
const M_TS = mpKey('ts_ns'), M_VALUE = mpKey('value'), M_QUALITY = mpKey('quality');
const M_ENUM = mpKey('enum_set'), M_ORDINAL = mpKey('ordinal');

/** Upper bound of one JSON point's bytes besides string values (times 20, values 26, enum id 38). */
const JSON_POINT_MAX = 160;

function jsonRun(sink: BodySink, cols: PointColumns, i0: number, i1: number, first: boolean, enumJson: string): void {
  const split = splitBase(cols.tsBase);
  const words = cols.i64 ? new Int32Array(cols.i64.buffer, cols.i64.byteOffset, cols.i64.length * 2) : null;
  for (let i = i0; i < i1; i++) {
    sink.reserve(JSON_POINT_MAX);
    if (!first || i > i0) sink.buf[sink.pos++] = 44; // ,
    sink.bytes(J_TS);
    writeTime(sink, split, cols.tsBase, cols.tsOffset[i]);
    sink.bytes(J_VALUE);
    switch (cols.type) {
      case 'float64': writeDouble(sink, cols.f64![i]); break;
      case 'int64': writeInt64At(sink, words!, i, cols.i64!); break;
      case 'boolean': sink.bytes(cols.u8![i] === 1 ? J_TRUE : J_FALSE); break;
      case 'enum': sink.bytes(J_ENUM); sink.ascii(enumJson); sink.bytes(J_ORDINAL); writeSafeInt(sink, cols.ord![i]); sink.buf[sink.pos++] = 125; break;
      case 'string': sink.utf8(JSON.stringify(cols.str![i])); break;
    }
    sink.bytes(J_QUALITY);
    sink.reserve(12);
    writeSafeInt(sink, cols.quality[i]);
    sink.buf[sink.pos++] = 125; // }
  }
}

function msgpackRun(sink: BodySink, cols: PointColumns, i0: number, i1: number, enumSet: string): void {
  const words = splitWords(cols.tsBase);
  const iw = cols.i64 ? new Int32Array(cols.i64.buffer, cols.i64.byteOffset, cols.i64.length * 2) : null;
  for (let i = i0; i < i1; i++) {
    sink.reserve(48);
    sink.buf[sink.pos++] = 0x83; // fixmap of 3
    sink.bytes(M_TS);
    mpTime(sink, words, cols.tsOffset[i]);
    sink.bytes(M_VALUE);
    switch (cols.type) {
      case 'float64': mpFloat64(sink, cols.f64![i]); break;
      case 'int64':
        sink.reserve(9);
        sink.buf[sink.pos++] = 0xd3;
        sink.view.setInt32(sink.pos, iw![2 * i + 1]); // little-endian host: word 2i+1 is the high half
        sink.view.setInt32(sink.pos + 4, iw![2 * i]);
        sink.pos += 8;
        break;
      case 'boolean': mpBool(sink, cols.u8![i] === 1); break;
      case 'enum': mpMapHeader(sink, 2); sink.bytes(M_ENUM); mpString(sink, enumSet); sink.bytes(M_ORDINAL); mpUint(sink, cols.ord![i]); break;
      case 'string': mpString(sink, cols.str![i]); break;
    }
    sink.bytes(M_QUALITY);
    mpUint(sink, cols.quality[i]);
  }
}

export function rawTask(t: RawTask): TaskOutcome {
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
    const json = t.format === 'json';
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
      sink.reserve(5);
      sink.buf[sink.pos] = 0xdd;
      countAt = sink.pos + 1;
      sink.pos += 5;
    }
    let n = 0;
    let more = false;
    let lastTs = 0n;
    if (from < endNs) {
      scanRange(view, series, from, endNs, (cols, i0, i1) => {
        const room = t.limit - n;
        const take = Math.min(room, i1 - i0);
        if (take > 0) {
          if (json) jsonRun(sink, cols, i0, i0 + take, n === 0, enumJson);
          else msgpackRun(sink, cols, i0, i0 + take, enumSet);
          n += take;
          lastTs = cols.tsBase + BigInt(cols.tsOffset[i0 + take - 1]);
        }
        if (take < i1 - i0) { more = true; return false; }
        return true;
      });
    }
    const cursor = more ? encodeCursor(rawCursorListing(t.series), [lastTs.toString()]) : null;
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
