// The benchmark client's JSON parser (bench/raw-json-parse.ts) against JSON.parse: it must
// accept exactly the documents JSON.parse accepts (objects at the top), count the
// top-level `points` array and read `next_cursor`, or the benchmark's parsed figures
// would measure something less than a real client's parse.
import t from 'tap';
import fc from 'fast-check';
import { parseRawJsonBody } from '../../bench/raw-json-parse.js';

const SEED = 20261121;
const enc = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));

/** What JSON.parse makes of the text's UTF-8 bytes (what the parser is given), in the parser's terms (null: rejected). */
function reference(text: string): { points: number; nextCursor: string | null } | null {
  let v: unknown;
  try { v = JSON.parse(Buffer.from(text, 'utf8').toString('utf8')); } catch { return null; }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  return { points: pointCount(o.points), nextCursor: typeof o.next_cursor === 'string' ? o.next_cursor : null };
}

/** The rows layout's array length, or a third of the elements of the columnar layout's arrays (what the parser counts). */
function pointCount(points: unknown): number {
  if (Array.isArray(points)) return points.length;
  if (points === null || typeof points !== 'object') return 0;
  let n = 0;
  for (const v of Object.values(points)) if (v !== null && typeof v === 'object') n += Array.isArray(v) ? v.length : Object.keys(v).length;
  return n / 3;
}

function ours(text: string): { points: number; nextCursor: string | null } | null {
  try { const r = parseRawJsonBody(enc(text)); return { points: r.points, nextCursor: r.nextCursor }; } catch { return null; }
}

const body = fc.record({
  indent: fc.constantFrom(undefined, 0, 1, 2, '\t', ' \r\n'),
  series: fc.string(),
  points: fc.array(fc.oneof(
    fc.record({ ts_ns: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), value: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.string(), fc.integer()), quality: fc.nat() }),
    fc.jsonValue(),
  ), { maxLength: 30 }),
  next_cursor: fc.option(fc.string({ unit: 'binary' })),
  extra: fc.jsonValue(),
});
// times as bare int64 digits, as the service writes them (JSON.stringify has no bigint)
const text = ({ indent, ...b }: { indent: string | number | undefined }) =>
  JSON.stringify(b, (_k, v: unknown) => (typeof v === 'bigint' ? `@@${v}@@` : v), indent).replace(/"@@(-?\d+)@@"/g, '$1');

t.test('bodies the service could write: the same count and cursor as JSON.parse', async (t) => {
  fc.assert(fc.property(body, (b) => {
    const s = text(b);
    const want = reference(s), got = ours(s);
    return want !== null && got !== null && got.points === want.points && got.nextCursor === want.nextCursor;
  }), { seed: SEED, numRuns: 400 });
  t.pass(`seed ${SEED}`);
});

t.test('columnar bodies (layout=columns): the count of each of the three arrays', async (t) => {
  const columns = fc.array(fc.tuple(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.string(), fc.integer()), fc.nat()), { maxLength: 30 })
    .map((rows) => ({ indent: undefined, layout: 'columns', count: rows.length, points: { ts_ns: rows.map((r) => r[0]), value: rows.map((r) => r[1]), quality: rows.map((r) => r[2]) }, next_cursor: null }));
  fc.assert(fc.property(columns, (b) => {
    const got = ours(text(b));
    return got !== null && got.points === b.count;
  }), { seed: SEED, numRuns: 300 });
  t.pass(`seed ${SEED}`);
});

t.test('damaged documents are rejected exactly when JSON.parse rejects them', async (t) => {
  const damaged = fc.tuple(body, fc.nat(), fc.nat(), fc.constantFrom('', ',', '}', ']', '"', '\\', '-', '0', '.', 'e', ' ', '\u0001', 'tru', 'nul', '{', '[')).map(([b, at, len, insert]) => {
    const s = text(b);
    const i = at % (s.length + 1);
    return s.slice(0, i) + insert + s.slice(Math.min(s.length, i + (len % 3)));
  });
  fc.assert(fc.property(damaged, (s) => {
    const want = reference(s), got = ours(s);
    if (want === null) return got === null;
    return got !== null && got.points === want.points && got.nextCursor === want.nextCursor;
  }), { seed: SEED, numRuns: 2000 });
  t.pass(`seed ${SEED}`);
});

t.test('every number is read: one digit more or less changes the checksum', async (t) => {
  const a = parseRawJsonBody(enc('{"points":[{"ts_ns":1700000000123456789,"value":12.5,"quality":192}],"next_cursor":null}'));
  const b = parseRawJsonBody(enc('{"points":[{"ts_ns":1700000000123456788,"value":12.5,"quality":192}],"next_cursor":null}'));
  const c = parseRawJsonBody(enc('{"points":[{"ts_ns":1700000000123456789,"value":12.25,"quality":192}],"next_cursor":null}'));
  t.equal(a.points, 1);
  t.not(a.checksum, b.checksum, 'the low digit of an int64 time');
  t.not(a.checksum, c.checksum, 'a decimal value');
});
