// What a resolved read attaches to each attribute's result besides its points: annotations,
// episodes, lineage (spec "Resolved reads": "requested lineage, annotations and episodes
// attach additively per attribute"). Each area adds one attacher to ATTACHERS; the read
// routes call attachToRead after the read pool has written the finished body.
//
// The points are written by read-pool workers into a finished JSON or msgpack body. A read
// that asks for no attachment keeps that body untouched (the fast path costs one loop over
// ATTACHERS). A read that asks for one is post-processed here on the HTTP thread:
//   - JSON: parsed losslessly (src/json: int64 beyond 2^53 stays exact), members added,
//     written again by the service's JSON writer;
//   - msgpack: spliced, not re-encoded: each item's map header is rewritten with the new
//     member count and the added pairs appended after the worker's bytes (which are copied
//     as they are, so float64 stays float64 and bins stay bins).
// Rejected: attaching inside the workers (they would need the model database and each
// area's code in every worker) and re-encoding msgpack through msgpackr (a float64 3.0
// would come back as an integer).
import { Packr } from 'msgpackr';
import type { HandlerContext, Reply } from '../../route.js';
import type { ReadAttribute } from '../../../reads/read-resolution.js';
import { parseJson, jsonBytes } from '../../../json/json.js';
import { ServiceError } from '../../../errors.js';
import { annotationsAttacher } from '../annotations/on-reads.js';
import { episodesAttacher } from '../episodes/on-reads.js';
import { lineageAttacher } from '../calc/lineage-attacher.js';

/** The attributes a read answers, as an attacher sees them. */
export type AttachedAttribute = Pick<ReadAttribute, 'attributeId' | 'assetId' | 'path'>;
/** The read's window: [startNs, endNs) for window reads, the instant for snapshot. */
export type AttachWindow = { startNs: bigint; endNs: bigint } | { atNs: bigint };
/** The validated read body (its include_* members and, for render, `width`). */
export type ReadRequestBody = Record<string, unknown>;

export interface ReadAttacher {
  /** The member added to each result item, e.g. `annotations`. */
  member: string;
  /** Also write the value as `provenance.<member>` (lineage is both). */
  alsoInProvenance?: boolean;
  /** Whether this read asked for it (e.g. body.include_annotations === true). */
  wanted(body: ReadRequestBody): boolean;
  /** The value per attribute id; an attribute missing from the map gets no member. */
  collect(ctx: HandlerContext, attributes: AttachedAttribute[], window: AttachWindow, body: ReadRequestBody): Promise<Map<string, unknown>>;
}

/** Every attacher the resolved reads know, in the order their members are written. */
export const ATTACHERS: ReadAttacher[] = [
  annotationsAttacher,
  episodesAttacher,
  lineageAttacher,
];

const packr = new Packr({ useRecords: false, int64AsType: 'bigint' });

/**
 * The read's reply with every wanted attacher's member added to each item. The reply is
 * returned as it is when nothing is wanted.
 */
export async function attachToRead(ctx: HandlerContext, body: ReadRequestBody, attributes: AttachedAttribute[], window: AttachWindow, reply: Reply): Promise<Reply> {
  const wanted = ATTACHERS.filter((a) => a.wanted(body));
  if (wanted.length === 0 || reply.kind !== 'bytes') return reply;
  let values: Array<Map<string, unknown>>;
  try {
    values = await Promise.all(wanted.map((a) => a.collect(ctx, attributes, window, body)));
  } catch (e) {
    reply.release?.();
    throw e;
  }
  const bytes = typeof reply.bytes === 'string' ? Buffer.from(reply.bytes, 'utf8') : Array.isArray(reply.bytes) ? Buffer.concat(reply.bytes) : (reply.bytes as Uint8Array);
  try {
    const out = spliceAttachments(bytes, reply.contentType.startsWith('application/json') ? 'json' : 'msgpack', wanted, values);
    return { kind: 'bytes', status: reply.status, contentType: reply.contentType, bytes: out, headers: reply.headers };
  } finally {
    reply.release?.();
  }
}

type Placement = Pick<ReadAttacher, 'member' | 'alsoInProvenance'>;

/**
 * A read body (an array of items with `attribute_id` and `provenance`) with each member's
 * value added to the items whose attribute id its map holds.
 */
export function spliceAttachments(bytes: Uint8Array, format: 'json' | 'msgpack', wanted: Placement[], values: Array<Map<string, unknown>>): Uint8Array {
  return format === 'json' ? attachJson(bytes, wanted, values) : attachMsgpack(bytes, wanted, values);
}

function attachJson(bytes: Uint8Array, wanted: Placement[], values: Array<Map<string, unknown>>): Uint8Array {
  const items = parseJson(bytes, { maxDepth: 4096 });
  if (!Array.isArray(items)) throw new ServiceError('internal', 'read attachments: the read body is not an array');
  for (const item of items as Array<Record<string, unknown>>) {
    const id = item.attribute_id as string;
    wanted.forEach((a, i) => {
      if (!values[i].has(id)) return;
      const v = values[i].get(id);
      item[a.member] = v;
      if (a.alsoInProvenance) (item.provenance as Record<string, unknown>)[a.member] = v;
    });
  }
  return jsonBytes(items);
}

// ---- msgpack splice ----

function attachMsgpack(bytes: Uint8Array, wanted: Placement[], values: Array<Map<string, unknown>>): Uint8Array {
  const r = new MsgReader(bytes);
  const count = r.arrayHeader();
  const parts: Uint8Array[] = [bytes.subarray(0, r.at)];
  for (let n = 0; n < count; n++) {
    const itemStart = r.at;
    const pairs = r.mapHeader();
    const bodyStart = r.at;
    // find attribute_id and where provenance's value lies, copying nothing yet
    let id: string | null = null;
    let prov: [number, number] | null = null;
    for (let p = 0; p < pairs; p++) {
      const key = r.readKey();
      const valueStart = r.at;
      if (key === 'attribute_id') id = r.readString();
      else r.skip();
      if (key === 'provenance') prov = [valueStart, r.at];
    }
    const itemEnd = r.at;
    const added: Array<[string, unknown]> = [];
    const provAdded: Array<[string, unknown]> = [];
    wanted.forEach((a, i) => {
      if (id === null || !values[i].has(id)) return;
      const v = values[i].get(id);
      added.push([a.member, v]);
      if (a.alsoInProvenance) provAdded.push([a.member, v]);
    });
    if (added.length === 0) { parts.push(bytes.subarray(itemStart, itemEnd)); continue; }
    parts.push(mapHeader(pairs + added.length));
    if (prov && provAdded.length > 0) {
      parts.push(bytes.subarray(bodyStart, prov[0]));
      const pr = new MsgReader(bytes.subarray(prov[0], prov[1]));
      const provPairs = pr.mapHeader();
      parts.push(mapHeader(provPairs + provAdded.length), bytes.subarray(prov[0] + pr.at, prov[1]));
      for (const [k, v] of provAdded) parts.push(packr.pack(k), packr.pack(v));
      parts.push(bytes.subarray(prov[1], itemEnd));
    } else {
      parts.push(bytes.subarray(bodyStart, itemEnd));
    }
    for (const [k, v] of added) parts.push(packr.pack(k), packr.pack(v));
  }
  parts.push(bytes.subarray(r.at));
  return Buffer.concat(parts);
}

function mapHeader(n: number): Uint8Array {
  if (n < 16) return Uint8Array.of(0x80 | n);
  if (n < 65536) return Uint8Array.of(0xde, n >> 8, n & 0xff);
  return Uint8Array.of(0xdf, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

/** Walks msgpack bytes without decoding values it only skips. */
class MsgReader {
  at = 0;
  private readonly view: DataView;
  constructor(private readonly b: Uint8Array) { this.view = new DataView(b.buffer, b.byteOffset, b.byteLength); }

  private u8(): number { return this.b[this.at++]; }
  private u16(): number { const v = this.view.getUint16(this.at); this.at += 2; return v; }
  private u32(): number { const v = this.view.getUint32(this.at); this.at += 4; return v; }

  arrayHeader(): number {
    const t = this.u8();
    if ((t & 0xf0) === 0x90) return t & 0x0f;
    if (t === 0xdc) return this.u16();
    if (t === 0xdd) return this.u32();
    throw new ServiceError('internal', `read attachments: expected a msgpack array, found 0x${t.toString(16)}`);
  }

  mapHeader(): number {
    const t = this.u8();
    if ((t & 0xf0) === 0x80) return t & 0x0f;
    if (t === 0xde) return this.u16();
    if (t === 0xdf) return this.u32();
    throw new ServiceError('internal', `read attachments: expected a msgpack map, found 0x${t.toString(16)}`);
  }

  /** A map key: a string (the workers write no other keys). */
  readKey(): string { return this.readString(); }

  readString(): string {
    const t = this.u8();
    let len: number;
    if ((t & 0xe0) === 0xa0) len = t & 0x1f;
    else if (t === 0xd9) len = this.u8();
    else if (t === 0xda) len = this.u16();
    else if (t === 0xdb) len = this.u32();
    else throw new ServiceError('internal', `read attachments: expected a msgpack string, found 0x${t.toString(16)}`);
    const s = Buffer.from(this.b.buffer, this.b.byteOffset + this.at, len).toString('utf8');
    this.at += len;
    return s;
  }

  /** Skips one value of any type. */
  skip(): void {
    let pending = 1;
    while (pending > 0) {
      pending--;
      const t = this.u8();
      if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) continue;
      if ((t & 0xf0) === 0x80) { pending += 2 * (t & 0x0f); continue; }
      if ((t & 0xf0) === 0x90) { pending += t & 0x0f; continue; }
      if ((t & 0xe0) === 0xa0) { this.at += t & 0x1f; continue; }
      switch (t) {
        // the length is read before `at` moves past it: `this.at += this.u8()` would add to the old `at`
        case 0xc4: case 0xd9: { const n = this.u8(); this.at += n; break; }
        case 0xc5: case 0xda: { const n = this.u16(); this.at += n; break; }
        case 0xc6: case 0xdb: { const n = this.u32(); this.at += n; break; }
        case 0xc7: { const n = this.u8(); this.at += 1 + n; break; }
        case 0xc8: { const n = this.u16(); this.at += 1 + n; break; }
        case 0xc9: { const n = this.u32(); this.at += 1 + n; break; }
        case 0xca: case 0xce: case 0xd2: this.at += 4; break;
        case 0xcb: case 0xcf: case 0xd3: this.at += 8; break;
        case 0xcc: case 0xd0: this.at += 1; break;
        case 0xcd: case 0xd1: this.at += 2; break;
        case 0xd4: this.at += 2; break;
        case 0xd5: this.at += 3; break;
        case 0xd6: this.at += 5; break;
        case 0xd7: this.at += 9; break;
        case 0xd8: this.at += 17; break;
        case 0xdc: pending += this.u16(); break;
        case 0xdd: pending += this.u32(); break;
        case 0xde: pending += 2 * this.u16(); break;
        case 0xdf: pending += 2 * this.u32(); break;
        default: throw new ServiceError('internal', `read attachments: unknown msgpack type 0x${t.toString(16)}`);
      }
    }
  }
}
