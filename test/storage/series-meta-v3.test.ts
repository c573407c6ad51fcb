// The v3 series meta record: fields that hold their default are cut from its end and the
// usual writable class is one byte; every field round-trips, and v2 records are still read.
import t from 'tap';
import fc from 'fast-check';
import { decodeMeta, encodeMeta, recordPackr, type SeriesMeta } from '../../src/storage/series-meta.js';
import { seriesKey } from '../../src/storage/keys.js';
import { typeCode } from '../../src/storage/encoding/chunk-header.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);

const plain: SeriesMeta = { id: newId(), type: 'float64', enumSet: null, writableClass: 'collector', finalisedNs: null, declaredGaps: [], lifecycle: null, lossyRanges: [], createdNs: T0 };
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const range = fc.record({ startNs: int64, endNs: int64 });

const anyMeta: fc.Arbitrary<SeriesMeta> = fc.record({
  id: fc.uuid(),
  type: fc.constantFrom('float64', 'int64', 'boolean', 'string', 'enum'),
  enumSet: fc.option(fc.record({ id: fc.string(), ordinals: fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })) }), { nil: null }),
  writableClass: fc.oneof(fc.constant('collector'), fc.string({ minLength: 1 })),
  finalisedNs: fc.option(int64, { nil: null }),
  declaredGaps: fc.array(fc.record({ startNs: int64, endNs: int64, reason: fc.string() }), { maxLength: 3 }),
  lifecycle: fc.option(fc.record({
    policy: fc.constant({ schema: 'service-lifecycle-policy/v1', raw: { keep_days: 3, then: 'rollups' }, rollups: { keep: 'forever' }, annotations: { keep: '30d' } } as const),
    version: fc.bigInt({ min: 1n, max: 2n ** 40n }),
  }), { nil: null }),
  lossyRanges: fc.array(fc.record({ startNs: range.map((r) => r.startNs), endNs: int64, tag: fc.constant('swinging-door') }), { maxLength: 3 }),
  createdNs: int64,
}) as fc.Arbitrary<SeriesMeta>;

t.test('any meta round-trips through the v3 record', async (t) => {
  fc.assert(fc.property(anyMeta, (m) => {
    const bytes = encodeMeta(m);
    t.equal(bytes[0], 2);
    t.same(decodeMeta(bytes), m);
  }), { seed: SEED, numRuns: 500 });
});

t.test('a plain collector series costs about 31 bytes; defaults at the end are not stored', async (t) => {
  const size = encodeMeta(plain).length;
  t.ok(size <= 32, `plain record ${size} bytes`);
  t.equal(encodeMeta({ ...plain, writableClass: 'calculation' }).length, size + 11, 'another class is stored as its string');
  t.ok(encodeMeta({ ...plain, lossyRanges: [{ startNs: T0, endNs: T0 + SEC, tag: 'swinging-door' }] }).length > size + 5, 'a non-default last field keeps the ones before it');
  t.same(decodeMeta(encodeMeta({ ...plain, finalisedNs: 0n })).finalisedNs, 0n, 'a zero watermark is not taken for a default');
});

t.test('v2 records are still read, also through the store', async (t) => {
  const v2 = (m: SeriesMeta) => Buffer.concat([Buffer.from([1]), recordPackr.pack([seriesKey(m.id), typeCode(m.type), m.enumSet, m.writableClass, m.finalisedNs, m.declaredGaps, m.lifecycle, m.lossyRanges, m.createdNs])]);
  fc.assert(fc.property(anyMeta, (m) => { t.same(decodeMeta(v2(m)), m); }), { seed: SEED, numRuns: 200 });
  const { store } = await tempStore(t);
  const id = newId();
  await store.env.root.transaction(() => { store.env.meta.putSync(seriesKey(id), v2({ ...plain, id })); });
  t.same(store.meta(id), { ...plain, id });
  t.equal((await store.write([f64Batch(id, [T0], [1.5])], WHO)).accepted, 1, 'a series with a v2 record takes writes');
  await store.setFinalised(id, T0);
  t.equal(store.env.meta.get(seriesKey(id))![0], 2, 'and is rewritten as v3 when it changes');
  t.same(store.meta(id), { ...plain, id, finalisedNs: T0 });
});

t.test('a damaged v3 record is refused', async (t) => {
  const rec = (f: unknown[]) => Buffer.concat([Buffer.from([2]), recordPackr.pack(f)]);
  t.throws(() => decodeMeta(rec([Buffer.alloc(16), 9, 0n, 0])), /damaged/, 'unknown type code');
  t.throws(() => decodeMeta(rec([Buffer.alloc(15), 0, 0n, 0])), /damaged/, 'short uuid');
  t.throws(() => decodeMeta(rec([Buffer.alloc(16), 0, 0n])), /damaged/, 'missing writable class');
  t.throws(() => decodeMeta(rec([Buffer.alloc(16), 0, 0n, 7])), /damaged/, 'writable class neither 0 nor a string');
  t.throws(() => decodeMeta(encodeMeta(plain).subarray(0, 5)));
});
