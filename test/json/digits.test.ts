import t from 'tap';
import fc from 'fast-check';
import { BodySink } from '../../src/body-sink.js';
import { splitBase, writeDouble, writeInt64At, writeTime } from '../../src/json/digits.js';
import { mpTime, splitWords } from '../../src/workers/msgpack-bytes.js';
import { Unpackr } from 'msgpackr';

const SEED = 424242;
t.comment(`fast-check seed ${SEED}`);
const text = (s: BodySink) => Buffer.from(s.buf.subarray(0, s.pos)).toString('latin1');

t.test('every finite double written as JSON parses back to the same double', async (t) => {
  const sink = new BodySink(64);
  const check = (v: number) => { sink.reset(); writeDouble(sink, v); return Object.is(JSON.parse(text(sink)), v); };
  fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), check), { seed: SEED, numRuns: 20_000 });
  // fixed-decimal plant values take the fast path and must agree with V8's text
  fc.assert(fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 6 }), (m, k) => {
    const v = m / 10 ** k;
    sink.reset(); writeDouble(sink, v);
    return JSON.parse(text(sink)) === v;
  }), { seed: SEED, numRuns: 20_000 });
  t.ok(check(-0), '-0 stays -0');
  t.ok(check(0.1 + 0.2), 'a value with no short decimal form falls back exactly');
});

t.test('times written from a base and an offset equal the exact int64 digits', async (t) => {
  const sink = new BodySink(64);
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), fc.integer({ min: 0, max: 2 ** 50 }), (base, offset) => {
    sink.reset();
    writeTime(sink, splitBase(base), base, offset);
    return text(sink) === (base + BigInt(offset)).toString();
  }), { seed: SEED, numRuns: 20_000 });
  t.pass('property held');
});

t.test('msgpack times from a base and an offset decode to the exact int64', async (t) => {
  const sink = new BodySink(64);
  const u = new Unpackr({ int64AsType: 'bigint' });
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), fc.integer({ min: 0, max: 2 ** 50 }), (base, offset) => {
    sink.reset();
    mpTime(sink, splitWords(base), offset);
    return u.unpack(sink.buf.slice(0, sink.pos)) === base + BigInt(offset);
  }), { seed: SEED, numRuns: 20_000 });
  t.pass('property held');
});

t.test('int64 values print exactly on both the 32-bit-halves path and the BigInt path', async (t) => {
  const sink = new BodySink(64);
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (v) => {
    const a = new BigInt64Array([v]);
    sink.reset();
    writeInt64At(sink, new Int32Array(a.buffer), 0, a);
    return text(sink) === v.toString();
  }), { seed: SEED, numRuns: 20_000 });
  t.pass('property held');
});
