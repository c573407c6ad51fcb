// Series' last chunks, packed together. A seal of whole heads (idle heads, shutdown) ends
// every series with a short chunk, and LMDB gives each value over ~2 KB pages of its own:
// on the fleet benchmark 912 of 1,000 such tails left ~500 bytes of their 4 KiB overflow
// page empty (0.046 B/pt), the largest cost on top of the chunk bytes. Here the tails of one
// seal request go into shared values ("packs") of up to 16 pages, and each tail's entry in
// the chunks table holds a 13-byte reference instead of the chunk.
// Readers resolve the reference in chunk-access.ts and render-scan.ts and see the same
// chunk bytes; nothing else knows. Layouts: FORMAT.md, "Tail packs".
//
// A packed tail is as immutable as any chunk. It leaves its pack when its reference goes
// (removeChunk: late points merged into it, the series resumed and absorbed it, retention):
// the pack's tally counts what is still referenced, a pack nobody references is deleted,
// and one that is less than half referenced is rewritten with its live members, so a
// decommissioned tag never holds a whole pack alive.
import { crc32 } from 'node:zlib';
import type { Transaction } from 'lmdb';
import { ChunkReader, ChunkWriter } from './encoding/byte-io.js';
import { PACKED_TAIL_TAG } from './encoding/chunk-header.js';
import { ChunkCorruptError } from './encoding/chunk-types.js';
import { fastGet } from './fast-get.js';
import { overflowCapacity, type SeriesEnv } from './series-env.js';

const REF_BYTES = 13;
const PACK_VERSION = 1;
/**
 * A pack's bytes at most: what 16 overflow pages of the env hold (until 2026-11-27 this was
 * 16 x 4096 - 16, 8 bytes more, so a pack filled to its last bytes took a 17th page). 16
 * pages rather than a fixed 64 KiB: first-fit leaves part of each pack's last page empty,
 * and on 16 KiB pages packs of 64 KiB took 384 pages for the fleet's tails where packs of
 * 256 KiB take 377 (bench:storage-engine).
 */
const packBytes = (env: SeriesEnv): number => overflowCapacity(env.pageSize, 16);
/** Directory entry: uuid 16 + chunk key time 8 + byte length (varint, <= 3 bytes). */
const MEMBER_MAX = 27;
/** Version, member count and directory CRC. */
const PACK_HEAD_MAX = 1 + 3 + 4;
const PART_BYTES = 0, PART_TALLY = 1, PART_COUNTER = 2;

/**
 * Last chunks up to this share of the chunk budget are packed. A full chunk fills ~99% of
 * its overflow page, so a pack saves it nothing; one page's slack of 2% (~80 bytes) is
 * about what a packed tail costs in directory and reference.
 */
export const TAIL_PACK_SHARE = 0.98;

export interface TailToPack {
  /** The chunk's key in the chunks table (uuid + start). */
  key: Buffer;
  bytes: Uint8Array;
}

export interface PackRef {
  pack: number;
  offset: number;
  length: number;
}

/** The reference in a chunks-table value, or null when it is not a well-formed one. */
export function parsePackRef(value: Uint8Array): PackRef | null {
  if (value.length !== REF_BYTES || value[0] !== PACKED_TAIL_TAG) return null;
  const dv = new DataView(value.buffer, value.byteOffset, REF_BYTES);
  return { pack: dv.getUint32(1, true), offset: dv.getUint32(5, true), length: dv.getUint32(9, true) };
}

function refBytes(r: PackRef): Buffer {
  const b = Buffer.allocUnsafe(REF_BYTES);
  b[0] = PACKED_TAIL_TAG;
  b.writeUInt32LE(r.pack, 1);
  b.writeUInt32LE(r.offset, 5);
  b.writeUInt32LE(r.length, 9);
  return b;
}

function packKey(pack: number, part: number): Buffer {
  const k = Buffer.allocUnsafe(5);
  k.writeUInt32BE(pack, 0);
  k[4] = part;
  return k;
}

/**
 * The packed chunk's bytes as a view of lmdb-js's shared read buffer, valid until the next
 * read of this thread; null when the pack is missing or the reference points past it (the
 * caller reports the chunk as damaged). `txn`: the read transaction, undefined inside the
 * write transaction.
 */
export function packedBytesShared(env: SeriesEnv, ref: PackRef, txn: Transaction | undefined): Uint8Array | null {
  const pack = fastGet(env.tailPacks, packKey(ref.pack, PART_BYTES), txn);
  return pack === undefined ? null : memberOf(pack, ref);
}

/**
 * Copies of packed tails made in this thread's read snapshots, by pack and offset. A pack's
 * bytes never change under its id (written once, only ever deleted, ids never reused), so a
 * copy made in one snapshot is the member in every snapshot whose chunk entry references it.
 * Without it each read of a packed tail copies its whole pack (lmdb-js copies any value under
 * 16 MB into its read buffer: 256 KiB on 16 KiB pages, ~10 us) and then the member out of it;
 * a recent-window read of a fleet reads exactly these tails. Only committed snapshots fill it:
 * inside a write transaction a pack id may be one that an abort hands out again.
 */
export class KeptMembers {
  private readonly members = new Map<number, Buffer>();
  private bytes = 0;

  constructor(private readonly limit: number) {}

  get(key: number, length: number): Buffer | undefined {
    const b = this.members.get(key);
    if (b === undefined || b.length !== length) return undefined;
    // most recently used last: eviction takes the Map's first entries
    this.members.delete(key);
    this.members.set(key, b);
    return b;
  }

  put(key: number, b: Buffer): void {
    if (b.length > this.limit) return;
    const old = this.members.get(key);
    if (old !== undefined) { this.members.delete(key); this.bytes -= old.length; }
    for (const [k, v] of this.members) {
      if (this.bytes + b.length <= this.limit) break;
      this.members.delete(k);
      this.bytes -= v.length;
    }
    this.members.set(key, b);
    this.bytes += b.length;
  }

  get size(): number { return this.bytes; }
}

/** Bytes of packed-tail copies a thread keeps per env: a fleet of ~3,000 tails of 10 KB. */
export const KEPT_MEMBER_BYTES = 32 << 20;
const kept = new WeakMap<SeriesEnv, KeptMembers>();

/**
 * The packed chunk's bytes as a Buffer the caller may keep (never written to: it may be
 * shared with other reads of this thread), null as packedBytesShared. `txn` undefined
 * (inside the write transaction) reads the pack and copies the member every time.
 */
export function packedBytesKept(env: SeriesEnv, ref: PackRef, txn: Transaction | undefined): Buffer | null {
  if (txn === undefined) {
    const b = packedBytesShared(env, ref, txn);
    return b === null ? null : Buffer.from(b);
  }
  let cache = kept.get(env);
  if (cache === undefined) kept.set(env, (cache = new KeptMembers(KEPT_MEMBER_BYTES)));
  // offsets stay under a pack's bytes (16 pages of at most 64 KiB < 2^21): the key is exact
  const key = ref.pack * 2 ** 21 + ref.offset;
  const hit = cache.get(key, ref.length);
  if (hit !== undefined) return hit;
  const b = packedBytesShared(env, ref, txn);
  if (b === null) return null;
  const copy = Buffer.from(b);
  cache.put(key, copy);
  return copy;
}

/** Bytes of packed-tail copies this thread keeps for `env` (tests). */
export function keptMemberBytes(env: SeriesEnv): number {
  return kept.get(env)?.size ?? 0;
}

/** The referenced member's bytes in a pack value, or null when the reference points past it. */
function memberOf(pack: Uint8Array, ref: PackRef): Uint8Array | null {
  return ref.offset + ref.length > pack.length ? null : pack.subarray(ref.offset, ref.offset + ref.length);
}

interface Tally { live: number; liveBytes: number; totalBytes: number }

function readTally(env: SeriesEnv, pack: number): Tally | null {
  const v = env.tailPacks.getBinaryFast(packKey(pack, PART_TALLY));
  if (v === undefined || v.length !== 12) return null;
  const dv = new DataView(v.buffer, v.byteOffset, 12);
  return { live: dv.getUint32(0, true), liveBytes: dv.getUint32(4, true), totalBytes: dv.getUint32(8, true) };
}

function writeTally(env: SeriesEnv, pack: number, t: Tally): void {
  const b = Buffer.allocUnsafe(12);
  b.writeUInt32LE(t.live, 0);
  b.writeUInt32LE(t.liveBytes, 4);
  b.writeUInt32LE(t.totalBytes, 8);
  env.tailPacks.putSync(packKey(pack, PART_TALLY), b);
}

/**
 * Pack ids are never reused (the counter lives under pack 0): a reference left behind by a
 * damaged tally must not find another pack's bytes under its old id.
 */
function nextPackId(env: SeriesEnv): number {
  const key = packKey(0, PART_COUNTER);
  const v = env.tailPacks.getBinaryFast(key);
  const id = v !== undefined && v.length === 4 ? v.readUInt32LE(0) + 1 : 1;
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(id, 0);
  env.tailPacks.putSync(key, b);
  return id;
}

/** Open packs first-fit looks into: bounds the grouping at O(tails) for a seal of 100k heads. */
const FIT_WINDOW = 64;

/**
 * Groups of tails whose pack fits `capacity` bytes: first-fit over tails by decreasing size, so
 * the small tails fill what the large ones leave, and each pack but the last ends within a
 * few bytes of its last page. Greedy in seal order left ~2 KB of the last page of every pack
 * empty (the fleet's tails average 3.4 KB).
 */
function groups(tails: readonly TailToPack[], capacity: number): TailToPack[][] {
  const bySize = [...tails].sort((a, b) => b.bytes.byteLength - a.bytes.byteLength);
  const out: { members: TailToPack[]; room: number }[] = [];
  const smallest = bySize.length === 0 ? 0 : bySize[bySize.length - 1].bytes.byteLength + MEMBER_MAX;
  let from = 0;
  for (const t of bySize) {
    const need = t.bytes.byteLength + MEMBER_MAX;
    let bin = null;
    for (let i = Math.max(from, out.length - FIT_WINDOW); i < out.length; i++) if (out[i].room >= need) { bin = out[i]; break; }
    if (bin === null) { bin = { members: [], room: capacity - PACK_HEAD_MAX }; out.push(bin); }
    bin.members.push(t);
    bin.room -= need;
    // a pack with less room than the smallest tail is full
    while (from < out.length && out[from].room < smallest) from++;
  }
  return out.map((b) => b.members);
}

/**
 * Stores tails a whole-head seal kept back (inside the write txn): two or more go into packs
 * of up to packBytes(env) and their chunk entries hold references; a group of one is stored as
 * a plain chunk, since a pack of one tail saves nothing.
 */
export function storeTails(env: SeriesEnv, tails: readonly TailToPack[]): void {
  for (const g of groups(tails, packBytes(env))) {
    if (g.length >= 2) writePack(env, g);
    else env.chunks.putSync(g[0].key, Buffer.from(g[0].bytes.buffer, g[0].bytes.byteOffset, g[0].bytes.byteLength));
  }
}

/**
 * Pack value: u8 version, varint member count, per member {uuid 16, chunk key time 8,
 * varint byte length}, u32 CRC32 of the bytes before it, then the members' chunk bytes
 * back to back. The directory is only for rewriting the pack (compact): readers go by the
 * reference's offset and length, and each chunk carries its own checksums.
 */
function writePack(env: SeriesEnv, members: readonly TailToPack[]): void {
  const w = new ChunkWriter(packBytes(env));
  w.u8(PACK_VERSION);
  w.varint(members.length);
  for (const m of members) {
    w.raw(m.key.subarray(0, 24));
    w.varint(m.bytes.byteLength);
  }
  w.u32(crc32(w.bytes.subarray(0, w.pos)));
  const pack = nextPackId(env);
  for (const m of members) {
    env.chunks.putSync(m.key, refBytes({ pack, offset: w.pos, length: m.bytes.byteLength }));
    w.raw(m.bytes);
  }
  const body = w.pos;
  env.tailPacks.putSync(packKey(pack, PART_BYTES), Buffer.from(w.bytes.buffer, 0, body));
  let bytes = 0;
  for (const m of members) bytes += m.bytes.byteLength;
  writeTally(env, pack, { live: members.length, liveBytes: bytes, totalBytes: bytes });
}

/** The directory's member keys, or null when it is damaged (checksum, bounds, version). */
function readDirectory(pack: Uint8Array): Buffer[] | null {
  try {
    const r = new ChunkReader(pack, new Uint32Array(0), 0, pack.length);
    if (r.u8('pack version') !== PACK_VERSION) return null;
    const count = r.varint('member count');
    const keys: Buffer[] = [];
    for (let i = 0; i < count; i++) {
      keys.push(Buffer.from(r.take(24, 'member key')));
      r.varint('member length');
    }
    const end = r.pos;
    const c = r.take(4, 'directory checksum');
    return crc32(pack.subarray(0, end)) === new DataView(c.buffer, c.byteOffset, 4).getUint32(0, true) ? keys : null;
  } catch (e) {
    if (e instanceof ChunkCorruptError) return null;
    throw e;
  }
}

/**
 * Packs that fell under half referenced in this env's current write transaction, rewritten
 * by compactPacks at its end: a seal that takes many tails of one pack back (a pass of idle
 * seals over report-by-exception tags) then deletes the pack once instead of rewriting it
 * at every halving. An entry left by an aborted transaction is harmless: compactPacks
 * checks the tally again.
 */
const underHalf = new WeakMap<SeriesEnv, Set<number>>();

/**
 * Removes a chunk entry (inside the write txn). A packed tail also leaves its pack's tally;
 * a pack left unreferenced is deleted, one left less than half referenced is rewritten
 * with what is still referenced when the transaction ends (compactPacks). A missing or
 * damaged tally or directory leaves the pack as it is (space, never data, is what that can
 * cost).
 */
export function removeChunk(env: SeriesEnv, key: Buffer): void {
  const stored = env.chunks.getBinaryFast(key);
  const ref = stored === undefined ? null : parsePackRef(stored);
  if (ref !== null) leavePack(env, ref);
  env.chunks.removeSync(key);
}

function leavePack(env: SeriesEnv, ref: PackRef): void {
  const t = readTally(env, ref.pack);
  if (t === null || t.live === 0) return;
  t.live--;
  t.liveBytes = Math.max(0, t.liveBytes - ref.length);
  if (t.live === 0) { dropPack(env, ref.pack); return; }
  writeTally(env, ref.pack, t);
  if (t.liveBytes * 2 < t.totalBytes) {
    let set = underHalf.get(env);
    if (set === undefined) underHalf.set(env, (set = new Set()));
    set.add(ref.pack);
  }
}

/** Rewrites the packs removeChunk left under half referenced (inside the write txn, at its end). */
export function compactPacks(env: SeriesEnv): void {
  const set = underHalf.get(env);
  if (set === undefined || set.size === 0) return;
  for (const pack of set) compactPack(env, pack);
  set.clear();
}

function compactPack(env: SeriesEnv, id: number): void {
  const t = readTally(env, id);
  if (t === null || t.live === 0 || t.liveBytes * 2 >= t.totalBytes) return;
  // a copy, read once: the members' lookups below reuse getBinaryFast's buffer
  const pack = env.tailPacks.getBinary(packKey(id, PART_BYTES));
  const keys = pack === undefined ? null : readDirectory(pack);
  if (pack === undefined || keys === null) return;
  const live: TailToPack[] = [];
  for (const k of keys) {
    const v = env.chunks.getBinaryFast(k);
    const r = v === undefined ? null : parsePackRef(v);
    const bytes = r === null || r.pack !== id ? null : memberOf(pack, r);
    if (bytes !== null) live.push({ key: k, bytes });
  }
  dropPack(env, id);
  if (live.length > 0) storeTails(env, live);
}

function dropPack(env: SeriesEnv, pack: number): void {
  env.tailPacks.removeSync(packKey(pack, PART_BYTES));
  env.tailPacks.removeSync(packKey(pack, PART_TALLY));
}
