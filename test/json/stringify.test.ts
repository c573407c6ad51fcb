import t from 'tap';
import fc from 'fast-check';
import { stringifyJson, jsonBytes, parseJson } from '../../src/json/json.js';
import { ServiceError } from '../../src/errors.js';

const SEED = 20240612;
t.comment(`fast-check seed ${SEED}`);

/** Strings from any UTF-16 code unit, lone surrogates included, so escaping is exercised fully. */
const anyString = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)) });

function internalError(fn: () => unknown, message: RegExp): ServiceError {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ServiceError) || e.code !== 'internal') throw new Error(`expected ServiceError('internal'), got ${String(e)}`);
    if (!message.test(e.message)) throw new Error(`unexpected message: ${e.message}`);
    return e;
  }
  throw new Error('expected a throw');
}

t.test('without bigints the output is exactly JSON.stringify\'s', (t) => {
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null), fc.boolean(), anyString, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(),
      fc.array(tie('v')),
      fc.dictionary(anyString, tie('v')),
    ),
  })).v;
  fc.assert(fc.property(value, (v) => {
    const ours = stringifyJson(v);
    if (ours !== JSON.stringify(v)) throw new Error(`differs: ${ours.slice(0, 200)}`);
  }), { seed: SEED, numRuns: 500 });
  t.pass('500 generated values written as JSON.stringify writes them');
  t.end();
});

t.test('bigint is written as its exact digits, and the text reads back to the same bigint', (t) => {
  t.equal(stringifyJson({ t: 1700000000123456789n, v: 1.5 }), '{"t":1700000000123456789,"v":1.5}');
  t.equal(stringifyJson([-9223372036854775808n, 2n ** 100n, 0n]), '[-9223372036854775808,1267650600228229401496703205376,0]');
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), (b) => {
    const back = parseJson(jsonBytes([b]));
    const want = b >= -(2n ** 53n - 1n) && b <= 2n ** 53n - 1n ? Number(b) : b;
    if ((back as unknown[])[0] !== want) throw new Error(`${b} read back as ${String(back)}`);
  }), { seed: SEED, numRuns: 1000 });
  t.pass('1000 generated bigints read back exactly');
  t.end();
});

t.test('undefined members are omitted, undefined elements and holes are written as null', (t) => {
  t.equal(stringifyJson({ a: undefined, b: 1, c: undefined }), '{"b":1}');
  t.equal(stringifyJson({ a: undefined }), '{}');
  t.equal(stringifyJson([undefined, 1]), '[null,1]');
  // eslint-disable-next-line no-sparse-arrays
  t.equal(stringifyJson([1, , 3]), '[1,null,3]');
  t.end();
});

t.test('toJSON and boxed primitives are honoured as JSON.stringify honours them', (t) => {
  const d = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6));
  t.equal(stringifyJson({ at: d }), '{"at":"2024-01-02T03:04:05.006Z"}');
  const keys: string[] = [];
  const probe = { toJSON(key: string) { keys.push(key); return key === 'x' ? undefined : 7; } };
  t.equal(stringifyJson({ x: probe, y: probe, z: [probe] }), '{"y":7,"z":[7]}', 'a toJSON returning undefined omits the member');
  t.same(keys, ['x', 'y', '0'], 'toJSON receives the member name or the index as a string');
  // eslint-disable-next-line no-new-wrappers
  t.equal(stringifyJson([new Number(3), new String('s'), new Boolean(false), Object(5n)]), '[3,"s",false,5]');
  t.equal(stringifyJson({ 'a"b\n': 1, '\u2028': 2 }), JSON.stringify({ 'a"b\n': 1, '\u2028': 2 }), 'member names are escaped');
  t.end();
});

t.test('non-finite numbers, functions, symbols, cycles, runaway depth and a top-level undefined are internal errors', (t) => {
  internalError(() => stringifyJson({ v: Number.NaN }), /NaN has no JSON form/);
  internalError(() => stringifyJson([Infinity]), /Infinity has no JSON form/);
  internalError(() => stringifyJson(-Infinity), /-Infinity has no JSON form/);
  internalError(() => stringifyJson({ f: () => 1 }), /function has no JSON form/);
  internalError(() => stringifyJson([Symbol('s')]), /symbol has no JSON form/);
  internalError(() => stringifyJson(undefined), /nothing to write/);
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = { back: cyclic };
  internalError(() => stringifyJson(cyclic), /cycle/);
  let deep: unknown[] = [];
  for (let i = 0; i < 100_000; i++) deep = [deep];
  internalError(() => stringifyJson(deep), /nests deeper than 1000/);
  let ok: unknown[] = [];
  for (let i = 0; i < 999; i++) ok = [ok];
  t.equal(stringifyJson(ok), '['.repeat(1000) + ']'.repeat(1000), '1000 levels are written');
  const shared = { x: 1 };
  t.equal(stringifyJson([shared, shared]), '[{"x":1},{"x":1}]', 'a value reached twice without a cycle is fine');
  t.end();
});

t.test('many distinct member names are written correctly past the name cache bound', (t) => {
  const big: Record<string, number> = {};
  for (let i = 0; i < 5000; i++) big[`name "${i}"`] = i;
  t.equal(stringifyJson(big), JSON.stringify(big));
  t.equal(stringifyJson(big), JSON.stringify(big), 'and again once cached');
  t.end();
});

t.test('jsonBytes is the UTF-8 encoding of stringifyJson', (t) => {
  const v = { name: 'Température €', t: 1700000000123456789n, emoji: '😀' };
  const b = jsonBytes(v);
  t.ok(Buffer.isBuffer(b));
  t.equal(b.toString('utf8'), stringifyJson(v));
  t.same(parseJson(b), v);
  t.end();
});
