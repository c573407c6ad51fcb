// Rollup day blocks: one LMDB value per series and UTC day holding the day's hour rows (and
// the day row when it is not derived, or when all 24 hours hold points: version 3, so a
// summary over days reads one row per day), each row in a compact exact form. Byte layout:
// src/storage/encoding/FORMAT.md, "Rollup day blocks". Version 2 (2026-11-21) writes lastTs
// and coveredNs from the bucket's end, lastQuality relative to good quality and the linear
// area as its bit difference from the stepped one; version 1 blocks are still read (a
// block is rewritten as version 2 when its day changes).
import { emptyRow, mergeRow, type RollupRow } from './rollup-row.js';

// A row is written relative to its bucket start B, exactly (every field round-trips bit for
// bit; byte layout in src/storage/encoding/FORMAT.md, "Rollup day blocks"):
//   u8 flags
//     bit 0 stats present (count > 0, or any statistic differs from an empty row's)
//     bit 1 areaLinear omitted: bit-identical to areaStepped
//     bit 2 goodNs omitted: equal to coveredNs
//     bit 3 coveredNs and goodNs as f64 (else varints: they are whole ns, >= 0)
//     bit 4 max omitted: max and maxTs equal min and minTs
//     bit 5 goodNs omitted: 0
//     bit 6 first omitted: first and firstTs equal min and minTs
//     bit 7 last omitted: last and lastTs equal max and maxTs
//   if bit 0: varint count, f64 min, zigzag bigvarint minTs - B, [f64 max, maxTs - B],
//             [f64 first, firstTs - B], [f64 last, lastTs - B], varint lastQuality
//   f64 areaStepped, [f64 areaLinear], coveredNs, [goodNs]
// Version 2 differs in four fields, each small where version 1 spent 2-8 bytes on plant data
// (fleet: 191 -> 167 KB of blocks): lastTs as E - lastTs (E = the bucket's end: the last
// point of a full bucket lies just before it), lastQuality XOR 192 (good quality is 0),
// areaLinear as u8 n + the n low bytes of its bits XOR areaStepped's (the two share sign,
// exponent and leading mantissa bits), and, when the block's flag says so, whole-ns
// coveredNs as (span - coveredNs) (a bucket covered throughout writes 0).
// Hourly rows of a 1 s series cost ~50-70 bytes instead of 112 + an LMDB node each.

const F_STATS = 1, F_LINEAR_SAME = 2, F_GOOD_ALL = 4, F_NS_F64 = 8, F_MAX_SAME = 16, F_GOOD_ZERO = 32, F_FIRST_SAME = 64, F_LAST_SAME = 128;
export const HOURS_PER_DAY = 24;
const BLOCK_V1 = 1, BLOCK_V2 = 2, BLOCK_V3 = 3;
const BLOCK_HAS_DAY = 1;
/** The day row is derived at read time (encodeDayBlock), not stored. */
const BLOCK_DAY_DERIVED = 2;
/** v2: whole-ns coveredNs written as (span - coveredNs) / 10^e (every such row has coveredNs <= span). */
const BLOCK_COVERED_FROM_END = 4;
/**
 * v3: the day row is stored, and it is the fold of the day's 24 hour rows (every hour holds
 * points, so nothing is synthesized): readers that want the day take it without decoding
 * the hours (readFoldedDay); decodeDayBlock still answers day null (derived), as for v2.
 */
const BLOCK_DAY_FOLDED = 8;
const FULL_MASK = (1 << HOURS_PER_DAY) - 1;
/** Good quality: v2 stores lastQuality XOR this, so the usual quality costs one byte. */
const QUALITY_BIAS = 192;

/** How one block's rows are written (fixed per block; version 1 has every option off). */
interface BlockForm { v2: boolean; coveredFromEnd: boolean }

const same = (a: number, b: number): boolean => Object.is(a, b);
const wholeNs = (x: number): boolean => Number.isSafeInteger(x) && x >= 0 && !Object.is(x, -0);

class RowWriter {
  buf = Buffer.allocUnsafe(4096);
  pos = 0;
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const b = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(b, 0, 0, this.pos);
    this.buf = b;
  }
  u8(x: number): void { this.room(1); this.buf[this.pos++] = x; }
  f64(x: number): void { this.room(8); this.buf.writeDoubleLE(x, this.pos); this.pos += 8; }
  varint(x: number): void {
    this.room(8);
    while (x >= 128) { this.buf[this.pos++] = (x % 128) | 128; x = Math.floor(x / 128); }
    this.buf[this.pos++] = x;
  }
  bigZigzag(x: bigint): void {
    let z = x >= 0n ? x << 1n : ((-x) << 1n) - 1n;
    this.room(11);
    while (z >= 128n) { this.buf[this.pos++] = Number(z & 127n) | 128; z >>= 7n; }
    this.buf[this.pos++] = Number(z);
  }
}

class RowReader {
  pos: number;
  constructor(private readonly b: Buffer, at: number) { this.pos = at; }
  private need(n: number): void { if (this.pos + n > this.b.length) throw new Error('rollup block truncated'); }
  u8(): number { this.need(1); return this.b[this.pos++]; }
  f64(): number { this.need(8); const x = this.b.readDoubleLE(this.pos); this.pos += 8; return x; }
  varint(): number {
    let x = 0, mul = 1;
    for (;;) {
      const c = this.u8();
      x += (c & 127) * mul;
      if (c < 128) return x;
      mul *= 128;
    }
  }
  bigZigzag(): bigint {
    let z = 0n, shift = 0n;
    for (;;) {
      const c = this.u8();
      z |= BigInt(c & 127) << shift;
      if (c < 128) break;
      shift += 7n;
    }
    return (z & 1n) === 0n ? z >> 1n : -((z + 1n) >> 1n);
  }
}

function isEmptyStats(r: RollupRow): boolean {
  return r.count === 0 && Number.isNaN(r.min) && Number.isNaN(r.max) && Number.isNaN(r.first) && Number.isNaN(r.last)
    && r.minTs === 0n && r.maxTs === 0n && r.firstTs === 0n && r.lastTs === 0n && same(r.lastQuality, 0);
}

/**
 * How a block writes its numbers: times (offsets from the row's bucket start) and whole-ns
 * durations in units of 10^e ns (e = NO_SCALE: times as zigzag bigvarints of ns,
 * durations as varints of ns), statistics as m / 10^k (k = NO_SCALE: f64). Chosen per block
 * as the largest e and the smallest k that are exact for every field.
 */
interface BlockScale { e: number; k: number }
const NO_SCALE = 255;
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
const MAX_MANTISSA = 2 ** 51;

/** Largest e <= 9 with x divisible by 10^e (x a safe integer). */
function tens(x: number): number {
  if (x === 0) return 9;
  let e = 0;
  while (e < 9 && x % POW10[e + 1] === 0) e++;
  return e;
}

/** Smallest k <= 9 with v = round(v x 10^k) / 10^k exactly, or NO_SCALE. */
function decimals(v: number): number {
  if (!Number.isFinite(v) || Object.is(v, -0)) return NO_SCALE;
  for (let k = 0; k <= 9; k++) {
    const m = Math.round(v * POW10[k]);
    if (Math.abs(m) < MAX_MANTISSA && m / POW10[k] === v) return k;
  }
  return NO_SCALE;
}

/** e lowered to what the time difference d allows (NO_SCALE past 2^51: zigzag stays a safe integer). */
function timeScale(e: number, d: bigint): number {
  if (e === NO_SCALE) return e;
  return d > -2251799813685248n && d < 2251799813685248n ? Math.min(e, tens(Number(d))) : NO_SCALE;
}

/** k raised to what value v needs. */
function valueScale(k: number, v: number): number {
  return k === NO_SCALE ? k : Math.max(k, decimals(v));
}

/** Whether v is exact as m / 10^k at the block's common k. */
function exactAt(v: number, p: number): boolean {
  const m = Math.round(v * p);
  return Math.abs(m) < MAX_MANTISSA && m / p === v;
}

/** The scale so far of rows [0, i) (scaleOf's loop state), with rows[i] folded in. */
function scaleRow(acc: BlockScale, r: RollupRow, base: bigint, end: bigint, form: BlockForm): void {
  let e = acc.e, k = acc.k;
  if (!isEmptyStats(r)) {
    e = timeScale(e, r.minTs - base); e = timeScale(e, r.maxTs - base); e = timeScale(e, r.firstTs - base);
    e = timeScale(e, form.v2 ? end - r.lastTs : r.lastTs - base);
    k = valueScale(valueScale(valueScale(valueScale(k, r.min), r.max), r.first), r.last);
  }
  if (e !== NO_SCALE && wholeNs(r.coveredNs) && wholeNs(r.goodNs)) {
    e = Math.min(e, tens(r.coveredNs), tens(r.goodNs));
    if (form.coveredFromEnd) e = Math.min(e, tens(Number(end - base)));
  }
  acc.e = e; acc.k = k;
}

/** Whether every value of rows [from, to) is exact at k (not NO_SCALE). */
function rowsExactAt(rows: readonly (RollupRow | null)[], from: number, to: number, k: number): boolean {
  const p = POW10[k];
  for (let i = from; i < to; i++) {
    const r = rows[i];
    if (r === null || isEmptyStats(r)) continue;
    if (!(exactAt(r.min, p) && exactAt(r.max, p) && exactAt(r.first, p) && exactAt(r.last, p))) return false;
  }
  return true;
}

function scaleOf(rows: readonly (RollupRow | null)[], bases: readonly bigint[], ends: readonly bigint[], form: BlockForm, before?: BlockScale): BlockScale {
  const acc: BlockScale = { e: 9, k: 0 };
  for (let i = 0; i < rows.length; i++) {
    // the state before the last row, for encodeLastHour
    if (before !== undefined && i === rows.length - 1) { before.e = acc.e; before.k = acc.k; }
    const r = rows[i];
    if (r === null) continue;
    scaleRow(acc, r, bases[i], ends[i], form);
  }
  const { e, k } = acc;
  // every value again at the common k (a value exact at k' < k is exact at k only if it checks)
  if (k !== NO_SCALE && !rowsExactAt(rows, 0, rows.length, k)) return { e, k: NO_SCALE };
  return { e, k };
}

function writeValue(w: RowWriter, v: number, s: BlockScale): void {
  if (s.k === NO_SCALE) { w.f64(v); return; }
  const m = Math.round(v * POW10[s.k]);
  w.varint(m >= 0 ? 2 * m : -2 * m - 1);
}

function readValue(rd: RowReader, s: BlockScale): number {
  if (s.k === NO_SCALE) return rd.f64();
  const z = rd.varint();
  const m = z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  return m / POW10[s.k];
}

function writeTime(w: RowWriter, t: bigint, base: bigint, s: BlockScale): void {
  if (s.e === NO_SCALE) { w.bigZigzag(t - base); return; }
  const u = Number(t - base) / POW10[s.e];
  w.varint(u >= 0 ? 2 * u : -2 * u - 1);
}

function readTime(rd: RowReader, base: bigint, s: BlockScale): bigint {
  if (s.e === NO_SCALE) return base + rd.bigZigzag();
  const z = rd.varint();
  return base + BigInt(z % 2 === 0 ? z / 2 : -(z + 1) / 2) * BigInt(POW10[s.e]);
}

/** The two words of one f64 and of another, for the XOR of their bits without BigInt. */
const areaBits = new Float64Array(2);
const areaWords = new Uint32Array(areaBits.buffer);
const bytesOfWord = (x: number): number => (x > 0xffffff ? 4 : x > 0xffff ? 3 : x > 0xff ? 2 : x > 0 ? 1 : 0);

/** v2 areaLinear: u8 n, then the n low bytes (little-endian) of its bits XOR areaStepped's. */
function writeAreaXor(w: RowWriter, stepped: number, linear: number): void {
  areaBits[0] = stepped; areaBits[1] = linear;
  const lo = (areaWords[0] ^ areaWords[2]) >>> 0, hi = (areaWords[1] ^ areaWords[3]) >>> 0;
  const n = hi !== 0 ? 4 + bytesOfWord(hi) : bytesOfWord(lo);
  w.u8(n);
  for (let i = 0; i < n; i++) w.u8(((i < 4 ? lo : hi) >>> (8 * (i & 3))) & 255);
}

function readAreaXor(rd: RowReader, stepped: number): number {
  const n = rd.u8();
  if (n > 8) throw new Error(`rollup row area difference of ${n} bytes`);
  let lo = 0, hi = 0;
  for (let i = 0; i < n; i++) {
    const byte = rd.u8() * 2 ** (8 * (i & 3));
    if (i < 4) lo += byte; else hi += byte;
  }
  areaBits[0] = stepped;
  areaWords[2] = (areaWords[0] ^ lo) >>> 0; areaWords[3] = (areaWords[1] ^ hi) >>> 0;
  return areaBits[1];
}

/** A row relative to its bucket [base, end). */
function writeRow(w: RowWriter, r: RollupRow, base: bigint, end: bigint, s: BlockScale, form: BlockForm): void {
  const stats = !isEmptyStats(r);
  const nsAsF64 = !(wholeNs(r.coveredNs) && wholeNs(r.goodNs));
  let flags = (stats ? F_STATS : 0) | (same(r.areaLinear, r.areaStepped) ? F_LINEAR_SAME : 0) | (nsAsF64 ? F_NS_F64 : 0);
  if (same(r.goodNs, r.coveredNs)) flags |= F_GOOD_ALL;
  else if (same(r.goodNs, 0)) flags |= F_GOOD_ZERO;
  if (stats) {
    if (same(r.max, r.min) && r.maxTs === r.minTs) flags |= F_MAX_SAME;
    if (same(r.first, r.min) && r.firstTs === r.minTs) flags |= F_FIRST_SAME;
    if (same(r.last, r.max) && r.lastTs === r.maxTs) flags |= F_LAST_SAME;
  }
  w.u8(flags);
  if (stats) {
    if (!(Number.isSafeInteger(r.count) && r.count >= 0) || !(Number.isInteger(r.lastQuality) && r.lastQuality >= 0 && r.lastQuality < 2 ** 32)) {
      throw new Error(`BUG: rollup row count ${r.count} or quality ${r.lastQuality} is not a whole number`);
    }
    w.varint(r.count);
    writeValue(w, r.min, s); writeTime(w, r.minTs, base, s);
    if (!(flags & F_MAX_SAME)) { writeValue(w, r.max, s); writeTime(w, r.maxTs, base, s); }
    if (!(flags & F_FIRST_SAME)) { writeValue(w, r.first, s); writeTime(w, r.firstTs, base, s); }
    if (!(flags & F_LAST_SAME)) {
      writeValue(w, r.last, s);
      // v2: end - lastTs, the same zigzag form with the sign turned (exact: 10^e divides both)
      if (form.v2) writeTime(w, end, r.lastTs, s); else writeTime(w, r.lastTs, base, s);
    }
    w.varint(form.v2 ? (r.lastQuality ^ QUALITY_BIAS) >>> 0 : r.lastQuality);
  }
  w.f64(r.areaStepped);
  if (!(flags & F_LINEAR_SAME)) { if (form.v2) writeAreaXor(w, r.areaStepped, r.areaLinear); else w.f64(r.areaLinear); }
  const unit = s.e === NO_SCALE ? 1 : POW10[s.e];
  if (nsAsF64) w.f64(r.coveredNs);
  else w.varint((form.coveredFromEnd ? Number(end - base) - r.coveredNs : r.coveredNs) / unit);
  if (!(flags & (F_GOOD_ALL | F_GOOD_ZERO))) { if (nsAsF64) w.f64(r.goodNs); else w.varint(r.goodNs / unit); }
}

function readRow(rd: RowReader, base: bigint, end: bigint, s: BlockScale, form: BlockForm): RollupRow {
  const flags = rd.u8();
  const r = emptyRow();
  if (flags & F_STATS) {
    r.count = rd.varint();
    r.min = readValue(rd, s); r.minTs = readTime(rd, base, s);
    if (flags & F_MAX_SAME) { r.max = r.min; r.maxTs = r.minTs; } else { r.max = readValue(rd, s); r.maxTs = readTime(rd, base, s); }
    if (flags & F_FIRST_SAME) { r.first = r.min; r.firstTs = r.minTs; } else { r.first = readValue(rd, s); r.firstTs = readTime(rd, base, s); }
    if (flags & F_LAST_SAME) { r.last = r.max; r.lastTs = r.maxTs; } else {
      r.last = readValue(rd, s);
      r.lastTs = form.v2 ? 2n * end - readTime(rd, end, s) : readTime(rd, base, s);
    }
    r.lastQuality = form.v2 ? (rd.varint() ^ QUALITY_BIAS) >>> 0 : rd.varint();
  }
  r.areaStepped = rd.f64();
  r.areaLinear = flags & F_LINEAR_SAME ? r.areaStepped : form.v2 ? readAreaXor(rd, r.areaStepped) : rd.f64();
  const unit = s.e === NO_SCALE ? 1 : POW10[s.e];
  if (flags & F_NS_F64) r.coveredNs = rd.f64();
  else r.coveredNs = form.coveredFromEnd ? Number(end - base) - rd.varint() * unit : rd.varint() * unit;
  r.goodNs = flags & F_GOOD_ALL ? r.coveredNs : flags & F_GOOD_ZERO ? 0 : flags & F_NS_F64 ? rd.f64() : rd.varint() * unit;
  return r;
}

/** The day row as the hour rows fold into it (mergeRow from an empty row, in hour order). */
export function foldHours(hours: (RollupRow | null)[]): RollupRow | null {
  let day: RollupRow | null = null;
  for (const h of hours) {
    if (h === null) continue;
    day ??= emptyRow();
    mergeRow(day, h);
  }
  return day;
}

/**
 * One series' rollups of one UTC day: the rows of its 24 hours that hold points (null: none)
 * and an explicit day row (null: derived from the hours by the reader, see encodeDayBlock).
 */
export interface DayBlock {
  day: RollupRow | null;
  hours: (RollupRow | null)[];
}

export function emptyDayBlock(): DayBlock {
  return { day: null, hours: new Array<RollupRow | null>(HOURS_PER_DAY).fill(null) };
}

export function isEmptyDayBlock(b: DayBlock): boolean {
  return b.day === null && b.hours.every((h) => h === null);
}

const blockWriter = new RowWriter();

/**
 * u8 version (2, or 3 when bit 3 is set; 1 still read) | u8 flags (bit 0: day row stored;
 * bit 1: day row derived; bit 2, v2: coveredNs from the bucket's end; bit 3, v3 only: the
 * derived day row is stored, every hour holding points) | 3 bytes hour mask (bit h: hour h present,
 * little-endian) | u8 e | u8 k (BlockScale) | day row (bucket = the day) | present hour rows
 * in hour order (each relative to its hour). A fresh Buffer.
 * A block without an explicit day row (b.day null) that has hours sets bit 1: its day row is
 * derived by the reader, the fold of the day's 24 hours, those holding no point synthesized
 * from the neighbouring rows (rollup-read.ts). Blocks written before buckets without points
 * stopped being stored set the same bit with every such hour stored: the same fold.
 * withFold false: the version-2 form written before 2026-11-28 (the migration's tests store it).
 */
export function encodeDayBlock(b: DayBlock, dayStart: bigint, hourNs: bigint, withFold = true, layout?: BlockLayout): Buffer {
  const w = blockWriter;
  w.pos = 0;
  let mask = 0;
  for (let h = 0; h < HOURS_PER_DAY; h++) if (b.hours[h] !== null) mask |= 1 << h;
  // a day whose 24 hours all hold points stores their fold (version 3): the day row a
  // reader would derive, bit for bit, without decoding the hours
  const fold = withFold && b.day === null && mask === FULL_MASK ? foldHours(b.hours) : null;
  // (a count past 2^53 cannot be stored exactly: such a block stays version 2, derived)
  const folded = fold !== null && Number.isSafeInteger(fold.count);
  const day = folded ? fold : b.day;
  // the rows written, in order, with their buckets: the day row, then the present hours
  // (a commit rewrites a block of a few hours: no bucket bounds for the absent ones)
  const rows: RollupRow[] = [], bases: bigint[] = [], ends: bigint[] = [];
  if (day !== null) { rows.push(day); bases.push(dayStart); ends.push(dayStart + BigInt(HOURS_PER_DAY) * hourNs); }
  for (let h = 0; h < HOURS_PER_DAY; h++) {
    const r = b.hours[h];
    if (r === null) continue;
    const base = dayStart + BigInt(h) * hourNs;
    rows.push(r); bases.push(base); ends.push(base + hourNs);
  }
  // from the end only when every whole-ns coveredNs fits its bucket (the difference is then >= 0 and exact)
  let coveredFromEnd = true;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (wholeNs(r.coveredNs) && wholeNs(r.goodNs) && r.coveredNs > Number(ends[i] - bases[i])) coveredFromEnd = false;
  }
  const form: BlockForm = { v2: true, coveredFromEnd };
  const before: BlockScale = { e: 9, k: 0 };
  const s = scaleOf(rows, bases, ends, form, layout === undefined ? undefined : before);
  const flags = folded ? BLOCK_DAY_FOLDED | BLOCK_DAY_DERIVED : day !== null ? BLOCK_HAS_DAY : mask !== 0 ? BLOCK_DAY_DERIVED : 0;
  w.u8(folded ? BLOCK_V3 : BLOCK_V2); w.u8(flags | (coveredFromEnd ? BLOCK_COVERED_FROM_END : 0));
  w.u8(mask & 255); w.u8((mask >>> 8) & 255); w.u8((mask >>> 16) & 255);
  w.u8(s.e); w.u8(s.k);
  for (let i = 0; i < rows.length; i++) {
    if (layout !== undefined && i === rows.length - 1) layout.lastRowAt = w.pos;
    writeRow(w, rows[i], bases[i], ends[i], s, form);
  }
  if (layout !== undefined) {
    const n = rows.length;
    // only a version-2 block of hours whose last row is an hour's can take encodeLastHour
    layout.lastHour = folded || day !== null || n === 0 || mask === FULL_MASK ? -1 : 31 - Math.clz32(mask);
    layout.beforeE = before.e; layout.beforeK = before.k;
    layout.beforeExact = before.k === NO_SCALE || rowsExactAt(rows, 0, n - 1, before.k);
    let fromEnd = true;
    for (let i = 0; i < n - 1; i++) if (!coversFromEnd(rows[i], bases[i], ends[i])) fromEnd = false;
    layout.beforeFromEnd = fromEnd;
  }
  return Buffer.from(w.buf.subarray(0, w.pos));
}

/** A whole-ns coveredNs past its bucket's span rules out the block's covered-from-end form. */
function coversFromEnd(r: RollupRow, base: bigint, end: bigint): boolean {
  return !(wholeNs(r.coveredNs) && wholeNs(r.goodNs) && r.coveredNs > Number(end - base));
}

/**
 * What encodeDayBlock chose for a block besides its bytes: where its last hour row starts
 * and what the rows before it allow. With it, a change of that row alone (a point appended
 * in the last hour) re-encodes only that row (encodeLastHour): a day's block was re-encoded
 * whole at every append, ~24 rows an append late in the day.
 */
export interface BlockLayout {
  /** The last row's hour (-1: the block cannot be changed this way: version 3, a day row, no hours). */
  lastHour: number;
  /** Byte offset of that row. */
  lastRowAt: number;
  /** scaleOf's e and k over the rows before it, whether their values are exact at that k, and whether they allow covered-from-end. */
  beforeE: number;
  beforeK: number;
  beforeExact: boolean;
  beforeFromEnd: boolean;
}

export function emptyLayout(): BlockLayout {
  return { lastHour: -1, lastRowAt: 0, beforeE: 9, beforeK: 0, beforeExact: true, beforeFromEnd: true };
}

/**
 * The bytes encodeDayBlock would give `prev`'s block (laid out as `layout` says) with its last
 * hour row replaced by `row`, written as that row alone after prev's unchanged bytes; null
 * when the block's header would change (the row moves its scale or covered-from-end form,
 * or the block cannot be changed this way): encode it whole then. `layout` stays valid.
 */
export function encodeLastHour(prev: Buffer, layout: BlockLayout, row: RollupRow, dayStart: bigint, hourNs: bigint): Buffer | null {
  if (layout.lastHour < 0 || prev[0] !== BLOCK_V2) return null;
  const base = dayStart + BigInt(layout.lastHour) * hourNs, end = base + hourNs;
  const coveredFromEnd = layout.beforeFromEnd && coversFromEnd(row, base, end);
  if (coveredFromEnd !== ((prev[1] & BLOCK_COVERED_FROM_END) !== 0)) return null;
  const form: BlockForm = { v2: true, coveredFromEnd };
  const acc: BlockScale = { e: layout.beforeE, k: layout.beforeK };
  scaleRow(acc, row, base, end, form);
  // a higher k would have the rows before checked again at it
  if (acc.k !== layout.beforeK && acc.k !== NO_SCALE) return null;
  const k = acc.k === NO_SCALE || !layout.beforeExact || !rowsExactAt([row], 0, 1, acc.k) ? NO_SCALE : acc.k;
  if (acc.e !== prev[5] || k !== prev[6]) return null;
  const w = blockWriter;
  w.pos = 0;
  writeRow(w, row, base, end, { e: acc.e, k }, form);
  const out = Buffer.allocUnsafe(layout.lastRowAt + w.pos);
  prev.copy(out, 0, 0, layout.lastRowAt);
  w.buf.copy(out, layout.lastRowAt, 0, w.pos);
  return out;
}

interface BlockHead { flags: number; mask: number; form: BlockForm; s: BlockScale }

function readHead(rd: RowReader): BlockHead {
  const version = rd.u8();
  if (version !== BLOCK_V1 && version !== BLOCK_V2 && version !== BLOCK_V3) throw new Error(`rollup day block version ${version} is not known`);
  const flags = rd.u8();
  const v2 = version !== BLOCK_V1;
  const form: BlockForm = { v2, coveredFromEnd: v2 && (flags & BLOCK_COVERED_FROM_END) !== 0 };
  const mask = rd.u8() | (rd.u8() << 8) | (rd.u8() << 16);
  const s: BlockScale = { e: rd.u8(), k: rd.u8() };
  if ((s.e > 9 && s.e !== NO_SCALE) || (s.k > 9 && s.k !== NO_SCALE)) throw new Error(`rollup day block scale ${s.e}/${s.k} is not valid`);
  if ((version === BLOCK_V3) !== ((flags & BLOCK_DAY_FOLDED) !== 0) || ((flags & BLOCK_DAY_FOLDED) && mask !== FULL_MASK)) {
    throw new Error(`rollup day block version ${version} with flags ${flags} and hour mask ${mask.toString(16)} is not valid`);
  }
  return { flags, mask, form, s };
}

/**
 * The day row of a version-3 block (the fold of its 24 hours, stored), reading nothing past
 * it; null for a block without one (the day is then derived from the hours, rollup-read.ts).
 */
export function readFoldedDay(bytes: Buffer, dayStart: bigint, hourNs: bigint): RollupRow | null {
  if (bytes.length === 0 || bytes[0] !== BLOCK_V3) return null;
  const rd = new RowReader(bytes, 0);
  const { form, s } = readHead(rd);
  return readRow(rd, dayStart, dayStart + BigInt(HOURS_PER_DAY) * hourNs, s, form);
}

export function decodeDayBlock(bytes: Buffer, dayStart: bigint, hourNs: bigint): DayBlock {
  const rd = new RowReader(bytes, 0);
  const { flags, mask, form, s } = readHead(rd);
  const b = emptyDayBlock();
  if (flags & BLOCK_HAS_DAY) b.day = readRow(rd, dayStart, dayStart + BigInt(HOURS_PER_DAY) * hourNs, s, form);
  // version 3: the stored fold is what the reader derives; skipped (day stays null: derived)
  else if (flags & BLOCK_DAY_FOLDED) readRow(rd, dayStart, dayStart + BigInt(HOURS_PER_DAY) * hourNs, s, form);
  for (let h = 0; h < HOURS_PER_DAY; h++) {
    if (!(mask & (1 << h))) continue;
    const base = dayStart + BigInt(h) * hourNs;
    b.hours[h] = readRow(rd, base, base + hourNs, s, form);
  }
  if ((flags & BLOCK_DAY_DERIVED) && mask === 0) throw new Error('rollup day block derives a day row from no hours');
  if (rd.pos !== bytes.length) throw new Error(`rollup day block has ${bytes.length - rd.pos} unread bytes`);
  return b;
}

/**
 * A stored block in the current form: a version-1 or -2 block whose 24 hours all hold
 * points is written again as version 3 (its day row stored); any other block is returned
 * as it is. The migration of stores written before 2026-11-28 (npm run storage:repack):
 * their days are read correctly either way, a summary over them just decodes 24 hour rows
 * per day until the day changes or the store is repacked.
 */
export function upgradeDayBlock(bytes: Buffer, dayStart: bigint, hourNs: bigint): Buffer {
  if (bytes.length < 5 || bytes[0] === BLOCK_V3) return bytes;
  const mask = bytes[2] | (bytes[3] << 8) | (bytes[4] << 16);
  if (mask !== FULL_MASK || (bytes[1] & BLOCK_HAS_DAY) !== 0) return bytes;
  return encodeDayBlock(decodeDayBlock(bytes, dayStart, hourNs), dayStart, hourNs);
}
