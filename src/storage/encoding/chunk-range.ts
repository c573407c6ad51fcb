// Partial reads of a sealed chunk for render: its summary (versions 2 and 3), and the points of
// a few directory groups decoded without the rest of the chunk. Group decodes check the
// chunk's trailing CRC first, like every decoder; the summary has its own CRC.

import { ChunkReader } from './byte-io.js';
import { openVerified, finishSection } from './chunk.js';
import { sectionOffsets, type ChunkSections } from './chunk-header.js';
import { ChunkCorruptError, type ValueType } from './chunk-types.js';
import { ChunkSummary } from './chunk-summary.js';
import { bug } from '../../errors.js';
import { IntColumnIndex } from './int-column-range.js';
import { TimeColumnIndex } from './time-column.js';

export { ChunkSummary, GROUP_SHIFT } from './chunk-summary.js';

const EMPTY_WORDS = new Uint32Array(0);

/**
 * Parses the summary of a chunk whose header the caller has already checked
 * (readChunkHeader or an equivalent: the header CRC covers the summary). Returns false
 * for a version 1 chunk (no summary). `known`: the sections that header check found in
 * these bytes (render's HeaderView), so a version 3 header is not parsed again.
 */
export function readChunkSummary(bytes: Uint8Array, count: number, out: ChunkSummary, known?: ChunkSections): boolean {
  if (bytes[0] === 1) return false;
  const s = known ?? sectionOffsets(bytes);
  // The summary parser reads bytes only, never words: no aligned copy needed.
  out.read(new ChunkReader(bytes, EMPTY_WORDS, s.summaryAt, s.summaryEnd), count);
  // Kept for ChunkGroups.open on the same bytes: a version 3 header is not parsed twice.
  out.timesAt = s.timesAt; out.valuesAt = s.valuesAt; out.qualityAt = s.qualityAt;
  return true;
}

/**
 * Reads parts of one chunk with a group directory: open() checks the whole-chunk CRC once
 * and reads the layout of its time and value columns, then groups decode and single times
 * resolve without decoding the rest. Reused across chunks; valid until the next open()
 * (the bytes may be a reused LMDB buffer).
 */
export class ChunkGroups {
  private readonly timeColumn = new TimeColumnIndex();
  private divisor = 1;
  private readonly valueColumn = new IntColumnIndex();
  private count = 0;
  private summary: ChunkSummary = new ChunkSummary();

  /**
   * `summary` must have been read from these bytes by readChunkSummary (which also keeps their
   * section offsets) and have a group directory; the header
   * (count, type) must have been checked (readChunkHeader or an equivalent).
   */
  open(bytes: Uint8Array, summary: ChunkSummary, count: number, type: ValueType): void {
    if (summary.groups === 0) throw bug('summary', 'the chunk has no group directory');
    const c = openVerified(bytes);
    summary.loadDirectory();
    const n = count;
    this.count = n;
    this.summary = summary;
    const { timesAt, valuesAt, qualityAt } = summary;
    if (!(timesAt <= valuesAt && valuesAt <= qualityAt && qualityAt <= c.bytes.length - 4)) throw new ChunkCorruptError('chunk corrupt: section offsets out of order', bytes.length);
    let r = new ChunkReader(c.bytes, c.words, timesAt, valuesAt);
    this.timeColumn.parse(r, n);
    finishSection(r, 'time');
    r = new ChunkReader(c.bytes, c.words, valuesAt, qualityAt);
    if (type === 'float64') {
      if (r.u8('float column mode') !== 0) r.fail('a group directory over a non-decimal float column');
      if (10 ** r.u8('decimal scale') !== summary.divisor) r.fail('decimal scale disagrees with the summary');
    } else if (type === 'int64') {
      if (r.u8('int64 column mode') !== 0) r.fail('a group directory over a wide int64 column');
    } else if (type === 'string') r.fail('a group directory over a string column');
    this.valueColumn.parse(r, n);
    finishSection(r, 'value');
  }

  /** Times (ns offsets from the chunk's first time) and numeric values of points [from, to) into tsOut/vOut[0..to-from); `from` is a group start. */
  decode(from: number, to: number, tsOut: Float64Array, vOut: Float64Array): void {
    const sm = this.summary, n = this.count;
    const g = from >> sm.groupShift;
    if (g << sm.groupShift !== from || to > n || to <= from) throw bug('range', `points [${from}, ${to}) are not a group range of this ${n}-point chunk`);
    if (tsOut.length < to - from || vOut.length < to - from) throw bug('out', `capacity below ${to - from} points`);
    this.timeColumn.range(from, to, tsOut, from, sm.firstRel[g]);
    this.valueColumn.range(from, to, vOut, from, sm.firstX[g]);
    const div = sm.divisor;
    if (div !== 1) for (let j = 0; j < to - from; j++) vOut[j] = vOut[j] / div;
  }

  /** Numeric values of points [from, to) into vOut[0..to-from); `from` is a group start. */
  values(from: number, to: number, vOut: Float64Array): void {
    const sm = this.summary, n = this.count;
    const g = from >> sm.groupShift;
    if (g << sm.groupShift !== from || to > n || to <= from) throw bug('range', `points [${from}, ${to}) are not a group range of this ${n}-point chunk`);
    if (vOut.length < to - from) throw bug('out', `capacity below ${to - from} points`);
    this.valueColumn.range(from, to, vOut, from, sm.firstX[g]);
    const div = sm.divisor;
    if (div !== 1) for (let j = 0; j < to - from; j++) vOut[j] = vOut[j] / div;
  }

  /**
   * Opens a chunk whose values are run-length coded and whose times allow random access
   * without an anchor (any chunk version, no directory needed): setpoints, states and
   * enums on a sampling grid. Returns false, reading nothing more, for other layouts.
   */
  openRuns(bytes: Uint8Array, count: number, type: ValueType, known?: ChunkSections): boolean {
    if (type === 'string') return false;
    const c = openVerified(bytes);
    // `known`: the sections the caller's header check found in these bytes (no second parse).
    const { timesAt, valuesAt, qualityAt } = known ?? sectionOffsets(c.bytes);
    if (!(timesAt <= valuesAt && valuesAt <= qualityAt && qualityAt <= c.bytes.length - 4)) throw new ChunkCorruptError('chunk corrupt: section offsets out of order', bytes.length);
    const r = new ChunkReader(c.bytes, c.words, valuesAt, qualityAt);
    let div = 1;
    if (type === 'float64') {
      if (r.u8('float column mode') !== 0) return false;
      const k = r.u8('decimal scale');
      if (k > 9) r.fail(`decimal scale ${k} > 9`);
      div = 10 ** k;
    } else if (type === 'int64' && r.u8('int64 column mode') !== 0) return false;
    this.valueColumn.parse(r, count);
    if (!this.valueColumn.isRle) return false;
    finishSection(r, 'value');
    const t = new ChunkReader(c.bytes, c.words, timesAt, valuesAt);
    this.timeColumn.parse(t, count);
    finishSection(t, 'time');
    if (!this.timeColumn.anchorFree) return false;
    this.count = count;
    this.divisor = div;
    return true;
  }

  /** After openRuns: the numeric value of point i. */
  runValueAt(i: number): number {
    return this.valueColumn.at(i, 0, 0) / this.divisor;
  }

  /** After openRuns: first min and first max index of [from, to) into out[0], out[1]. */
  runExtremes(from: number, to: number, out: Int32Array): void {
    this.valueColumn.runExtremes(from, to, out);
  }

  /** After openRuns: the time offset of point i. */
  runTimeAt(i: number): number {
    return this.timeColumn.at(i, 0, 0);
  }

  /** The time offset of point i from the chunk's first time. */
  timeAt(i: number): number {
    if (!(i >= 0 && i < this.count)) throw bug('index', `point ${i} outside the chunk's ${this.count}`);
    const shift = this.summary.groupShift, g = i >> shift;
    return this.timeColumn.at(i, g << shift, this.summary.firstRel[g]);
  }
}
