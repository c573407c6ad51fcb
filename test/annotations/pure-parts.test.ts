// The pure pieces of annotations, property-based: clustering on reads, the content check of
// uploads (chunked at any boundary), byte ranges, and span classes.
import t from 'tap';
import fc from 'fast-check';
import { clusterAnnotations } from '../../src/http/routes/annotations/on-reads.js';
import { byteRange } from '../../src/http/routes/annotations/attachment-routes.js';
import { ContentCheck } from '../../src/annotations/content-check.js';
import { spanClass } from '../../src/annotations/annotation-store.js';

type Note = Parameters<typeof clusterAnnotations>[0][number];
const note = (i: number, start: bigint, len: bigint): Note => ({
  annotation_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, start_ns: start, end_ns: start + len, text: 'x', tags: [], redacted: false, target: 'attribute',
});

t.test('clusters keep every note once, in order, and separate clusters by at least px', async (t) => {
  const W = { startNs: 0n, endNs: 1_000_000n };
  fc.assert(fc.property(
    fc.array(fc.tuple(fc.bigInt({ min: 0n, max: 999_999n }), fc.bigInt({ min: 0n, max: 50_000n })), { maxLength: 60 }),
    fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 50 }),
    (raw, width, px) => {
      const notes = raw.map(([s, l], i) => note(i, s, l)).sort((a, b) => (a.start_ns < b.start_ns ? -1 : a.start_ns > b.start_ns ? 1 : 0));
      const out = clusterAnnotations(notes, W, width, px);
      const ids = out.flatMap((o) => ('cluster' in o ? o.cluster.annotation_ids : [o.annotation_id]));
      if (JSON.stringify(ids) !== JSON.stringify(notes.map((n) => n.annotation_id))) return false;
      const at = (x: bigint) => (Number(x) * width) / 1_000_000;
      for (let i = 1; i < out.length; i++) if (at(out[i].start_ns) - at(out[i - 1].end_ns) < px) return false;
      return out.every((o) => !('cluster' in o) || o.cluster.count === o.cluster.annotation_ids.length && o.cluster.count >= 2);
    }), { numRuns: 300 });
  t.pass('300 random note lists');
});

t.test('text: valid UTF-8 cut anywhere is accepted; bytes the strict decoder refuses are refused', async (t) => {
  const decides = (bytes: Uint8Array, cuts: number[]) => {
    const c = new ContentCheck('text/plain');
    let from = 0;
    try {
      for (const cut of [...cuts.filter((x) => x < bytes.length)].sort((a, b) => a - b).concat(bytes.length)) {
        c.update(Buffer.from(bytes.subarray(from, cut))); from = cut; c.check(false);
      }
      c.check(true);
      return true;
    } catch { return false; }
  };
  fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.array(fc.nat(200)), (s, cuts) => decides(Buffer.from(s, 'utf8'), cuts)), { numRuns: 300 });
  fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), fc.array(fc.nat(40)), (b, cuts) => {
    let strict = true;
    try { new TextDecoder('utf-8', { fatal: true }).decode(b); } catch { strict = false; }
    return decides(b, cuts) === strict;
  }), { numRuns: 300 });
  t.pass('600 random texts and byte strings');
});

t.test('magic numbers', async (t) => {
  const check = (type: string, bytes: number[]) => {
    const c = new ContentCheck(type);
    c.update(Buffer.from(bytes));
    try { c.check(true); return true; } catch { return false; }
  };
  t.ok(check('image/png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1]));
  t.notOk(check('image/png', [...Buffer.from('<svg onload=alert(1)>')]));
  t.ok(check('image/jpeg', [0xff, 0xd8, 0xff, 0xe0]));
  t.ok(check('application/pdf', [...Buffer.from('%PDF-1.7')]));
  t.notOk(check('application/pdf', [...Buffer.from('%PD')]), 'too short');
  t.ok(check('image/webp', [...Buffer.from('RIFF'), 0, 0, 0, 0, ...Buffer.from('WEBP')]));
  t.notOk(check('image/webp', [...Buffer.from('RIFF'), 0, 0, 0, 0, ...Buffer.from('WAVE')]));
  t.ok(check('application/octet-stream', [...Buffer.from('<html>')]), 'opaque bytes are not checked');
});

t.test('byte ranges', async (t) => {
  t.same(byteRange(undefined, 10), null);
  t.same(byteRange('bytes=0-3', 10), { start: 0, end: 3 });
  t.same(byteRange('bytes=5-', 10), { start: 5, end: 9 });
  t.same(byteRange('bytes=-3', 10), { start: 7, end: 9 });
  t.same(byteRange('bytes=8-100', 10), { start: 8, end: 9 });
  t.same(byteRange('bytes=0-1,4-5', 10), null, 'several ranges: the whole file');
  t.throws(() => byteRange('bytes=10-', 10), { code: 'range-not-satisfiable' });
  t.throws(() => byteRange('bytes=-0', 10), { code: 'range-not-satisfiable' });
  fc.assert(fc.property(fc.nat(1000), fc.nat(1000), fc.integer({ min: 1, max: 1000 }), (a, b, size) => {
    try {
      const r = byteRange(`bytes=${a}-${b}`, size);
      return r !== null && r.start === a && r.end === Math.min(b, size - 1) && r.start <= r.end;
    } catch (e) { return (e as { code?: string }).code === 'range-not-satisfiable' && (a >= size || a > b); }
  }));
});

t.test('span classes bound each range', async (t) => {
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), fc.bigInt({ min: 0n, max: 2n ** 62n }), (s, d) => {
    const c = spanClass(s, s + d);
    return d < 2n ** BigInt(c) && (c === 0 || d >= 2n ** BigInt(c - 1));
  }));
  t.pass('a range of class c is shorter than 2^c and at least 2^(c-1)');
});
