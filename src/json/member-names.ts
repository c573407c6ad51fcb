// Member-name checks for the scanner: forbidden names (__proto__, constructor, prototype)
// and duplicates within one object. Names live on a stack of (offset, hash) shared by
// all open objects; a small object compares hashes linearly, and an object that grows
// past LINEAR_LIMIT members switches to a Set of decoded names so a body with 100k
// members in one object stays linear. Names are decoded only on a hash match, when a
// name has escapes, or once an object uses a Set.
import { fail } from './fail.js';
import { hashName, stringText } from './lexeme.js';

/** Above this many members an object switches from linear hash comparison to a Set of decoded names (a round number, not tuned: typical API objects have fewer). */
const LINEAR_LIMIT = 16;

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const PROTO = [0x5f, 0x5f, 0x70, 0x72, 0x6f, 0x74, 0x6f, 0x5f, 0x5f];
const PROTOTYPE = [0x70, 0x72, 0x6f, 0x74, 0x6f, 0x74, 0x79, 0x70, 0x65];
const CONSTRUCTOR = [0x63, 0x6f, 0x6e, 0x73, 0x74, 0x72, 0x75, 0x63, 0x74, 0x6f, 0x72];

export class MemberNames {
  private starts: Int32Array = new Int32Array(256);
  private ends: Int32Array = new Int32Array(256);
  private hashes: Int32Array = new Int32Array(256);
  private escaped = new Uint8Array(256);
  private top = 0;
  private bases: Int32Array = new Int32Array(64);
  private sets: (Set<string> | undefined)[] = [];
  private depth = 0;

  reset(): void {
    this.top = 0;
    this.depth = 0;
    this.sets.length = 0;
  }

  open(): void {
    if (this.depth === this.bases.length) this.bases = grow32(this.bases);
    this.bases[this.depth] = this.top;
    this.sets[this.depth] = undefined;
    this.depth++;
  }

  close(): void {
    this.depth--;
    this.top = this.bases[this.depth];
    this.sets[this.depth] = undefined;
  }

  /** Records the name token buf[start, end) (quotes included) in the innermost object, refusing forbidden names and duplicates. */
  add(buf: Buffer, start: number, end: number, hash: number, escaped: boolean): void {
    if (escaped) {
      const name = stringText(buf, start, end, true);
      if (FORBIDDEN.has(name)) fail(start, `member name ${quote(name)} is not allowed`);
      hash = hashName(name);
    } else if (isForbidden(buf, start + 1, end - 1)) {
      fail(start, `member name ${quote(stringText(buf, start, end, false))} is not allowed`);
    }
    const d = this.depth - 1;
    const set = this.sets[d];
    if (set !== undefined) {
      const name = stringText(buf, start, end, escaped);
      if (set.has(name)) fail(start, `duplicate member name ${quote(name)}`);
      set.add(name);
      return;
    }
    const base = this.bases[d];
    const hashes = this.hashes;
    for (let k = base; k < this.top; k++) {
      if (hashes[k] === hash && this.sameName(buf, k, start, end, escaped)) {
        fail(start, `duplicate member name ${quote(stringText(buf, start, end, escaped))}`);
      }
    }
    if (this.top - base >= LINEAR_LIMIT) {
      const names = new Set<string>();
      for (let k = base; k < this.top; k++) names.add(stringText(buf, this.starts[k], this.ends[k], this.escaped[k] === 1));
      names.add(stringText(buf, start, end, escaped));
      this.sets[d] = names;
      this.top = base;
      return;
    }
    if (this.top === this.starts.length) this.growNames();
    const t = this.top++;
    this.starts[t] = start;
    this.ends[t] = end;
    this.hashes[t] = hash;
    this.escaped[t] = escaped ? 1 : 0;
  }

  private sameName(buf: Buffer, k: number, start: number, end: number, escaped: boolean): boolean {
    const s = this.starts[k];
    const e = this.ends[k];
    if (!escaped && this.escaped[k] === 0) {
      // Unescaped valid UTF-8 is canonical: equal names have equal bytes.
      if (e - s !== end - start) return false;
      for (let j = 1; j < end - start - 1; j++) if (buf[s + j] !== buf[start + j]) return false;
      return true;
    }
    return stringText(buf, s, e, this.escaped[k] === 1) === stringText(buf, start, end, escaped);
  }

  private growNames(): void {
    this.starts = grow32(this.starts);
    this.ends = grow32(this.ends);
    this.hashes = grow32(this.hashes);
    const e = new Uint8Array(this.escaped.length * 2);
    e.set(this.escaped);
    this.escaped = e;
  }
}

function grow32(a: Int32Array): Int32Array {
  const g = new Int32Array(a.length * 2);
  g.set(a);
  return g;
}

function isForbidden(buf: Buffer, s: number, e: number): boolean {
  const len = e - s;
  if (len === 9) return sameBytes(buf, s, PROTO) || sameBytes(buf, s, PROTOTYPE);
  if (len === 11) return sameBytes(buf, s, CONSTRUCTOR);
  return false;
}

function sameBytes(buf: Buffer, s: number, word: number[]): boolean {
  for (let k = 0; k < word.length; k++) if (buf[s + k] !== word[k]) return false;
  return true;
}

/** A name for an error message: quoted, escaped, and cut to a readable length. */
function quote(name: string): string {
  return JSON.stringify(name.length > 64 ? name.slice(0, 64) + '…' : name);
}
