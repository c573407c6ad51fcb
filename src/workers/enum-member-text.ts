// The values of an enum series' points with their member names, encoded once per read:
// each ordinal's whole value, `{"enum_set":"<id>","ordinal":1,"member":"running"}` (JSON) or
// the msgpack map of the same three entries, so the point writers copy one run of bytes per
// point and never encode an id, an ordinal or a name per point (bench:json's "enum +
// member" rows). An ordinal the set does not name (a set edited after the points were
// written) gets `"member":null`; an ordinal met for the first time is encoded then.
// The names come from the enum set's registry entry; the HTTP thread reads them and passes
// them with the task (workers have no model database).
import { BodySink } from '../body-sink.js';
import { mpInt64Big, mpMapHeader, mpNil, mpString, mpUint } from './msgpack-bytes.js';

/** Member names by ordinal, as the task carries them ({"0": "stopped", "1": "running"}). */
export type EnumMemberNames = Record<string, string>;

/** Ordinals below this are found in an array, the rest in a Map (sets are small in practice). */
const DENSE = 1024;
/** Longest value text the writers reserve room for before they ask (the name's bytes are added). */
const FRAME = 96;

export class EnumMemberText {
  private readonly dense: Array<Uint8Array | undefined> = [];
  private readonly sparse = new Map<number, Uint8Array>();
  private readonly names: Map<number, string>;
  private readonly scratch = new BodySink(256);
  /** Longest value in bytes (what one point's value may take). */
  readonly maxBytes: number;

  constructor(private readonly enumSetId: string, names: EnumMemberNames, private readonly format: 'json' | 'msgpack') {
    this.names = new Map();
    let longest = 0;
    for (const [k, name] of Object.entries(names)) {
      const o = Number(k);
      if (!Number.isInteger(o)) continue;
      this.names.set(o, name);
      longest = Math.max(longest, Buffer.byteLength(name, 'utf8') * (format === 'json' ? 6 : 1));
    }
    this.maxBytes = FRAME + enumSetId.length + longest;
  }

  /** The whole value of a point with this ordinal (a view kept by this object: copy, do not keep). */
  valueOf(ordinal: number): Uint8Array {
    const hit = ordinal >= 0 && ordinal < DENSE ? this.dense[ordinal] : this.sparse.get(ordinal);
    return hit ?? this.encode(ordinal);
  }

  private encode(ordinal: number): Uint8Array {
    const name = this.names.get(ordinal) ?? null;
    const s = this.scratch;
    s.reset();
    if (this.format === 'json') {
      s.ascii(`{"enum_set":${JSON.stringify(this.enumSetId)},"ordinal":${ordinal},"member":`);
      if (name === null) s.ascii('null'); else s.jsonString(name);
      s.ascii('}');
    } else {
      mpMapHeader(s, 3);
      mpString(s, 'enum_set'); mpString(s, this.enumSetId);
      mpString(s, 'ordinal'); if (ordinal >= 0) mpUint(s, ordinal); else mpInt64Big(s, BigInt(ordinal));
      mpString(s, 'member'); if (name === null) mpNil(s); else mpString(s, name);
    }
    const bytes = s.buf.slice(0, s.pos);
    if (ordinal >= 0 && ordinal < DENSE) this.dense[ordinal] = bytes; else this.sparse.set(ordinal, bytes);
    return bytes;
  }
}
