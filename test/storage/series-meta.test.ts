// The stored series meta record: the compact array form round-trips every field, the older
// msgpack map form is still read, and a damaged record is refused.
import t from 'tap';
import { decodeMeta, encodeMeta, recordPackr, type SeriesMeta } from '../../src/storage/series-meta.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const full: SeriesMeta = {
  id: '0b8a3f6e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', type: 'enum', enumSet: { id: 'machine-state', ordinals: [0, 1, -7, 2147483647] },
  writableClass: 'calculation', finalisedNs: -5n, declaredGaps: [{ startNs: T0, endNs: T0 + SEC, reason: 'collector restart' }],
  lifecycle: { policy: { schema: 'service-lifecycle-policy/v1', raw: { keep_days: 3, then: 'rollups' }, rollups: { keep: 'forever' }, annotations: { keep: '30d' } }, version: 7n },
  lossyRanges: [{ startNs: T0, endNs: T0 + 10n * SEC, tag: 'swinging-door' }], createdNs: 1763712000123456789n,
};
const plain: SeriesMeta = { id: newId(), type: 'float64', enumSet: null, writableClass: 'collector', finalisedNs: null, declaredGaps: [], lifecycle: null, lossyRanges: [], createdNs: T0 };

t.test('the compact record round-trips every field', async (t) => {
  t.same(decodeMeta(encodeMeta(full)), full);
  t.same(decodeMeta(encodeMeta(plain)), plain);
  t.ok(encodeMeta(plain).length < 60, `a plain series' record is small (${encodeMeta(plain).length} bytes)`);
  for (const type of ['float64', 'int64', 'boolean', 'string', 'enum'] as const) t.equal(decodeMeta(encodeMeta({ ...plain, type })).type, type);
});

t.test('the older map form is still read, also through the store', async (t) => {
  t.same(decodeMeta(recordPackr.pack(full)), full);
  const { store } = await tempStore(t);
  const id = newId();
  await store.env.root.transaction(() => { store.env.meta.putSync(Buffer.from(id.replace(/-/g, ''), 'hex'), recordPackr.pack({ ...plain, id })); });
  t.same(store.meta(id), { ...plain, id });
  const r = await store.write([f64Batch(id, [T0], [1.5])], WHO);
  t.equal(r.accepted, 1, 'a series with an old record takes writes');
});

t.test('a damaged record is refused', async (t) => {
  const bytes = encodeMeta(plain);
  t.throws(() => decodeMeta(bytes.subarray(0, 3)));
  const wrongType = Buffer.concat([Buffer.from([1]), recordPackr.pack([Buffer.alloc(16), 9, null, 'c', null, [], null, [], 0n])]);
  t.throws(() => decodeMeta(wrongType), /damaged/);
});

t.test('readers share one decoded record until the stored one changes', async (t) => {
  const { store } = await tempStore(t);
  const id = newId();
  await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
  const first = store.meta(id);
  t.equal(store.meta(id), first, 'the same stored bytes give the same decoded object');
  await store.setWritableClass(id, 'manual');
  const changed = store.meta(id);
  t.not(changed, first, 'a changed record is decoded again');
  t.equal(changed?.writableClass, 'manual');
  await store.setFinalised(id, T0);
  t.equal(store.meta(id)?.finalisedNs, T0, 'every later change shows');
  t.equal(store.meta(newId()), undefined, 'an unknown series has none');
});
