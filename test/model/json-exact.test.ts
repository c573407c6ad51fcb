// Any-JSON the model stores keeps integers of any size exactly, from the request through
// jsonb to the response, on PGlite and (with DATABASE_URL) on PostgreSQL. Random JSON with
// large integers goes through each stored field over real HTTP; what comes back must
// have the same canonical JSON text (jsonb orders object keys its own way, so key order
// is the one thing compared loosely).
import t from 'tap';
import fc from 'fast-check';
import { startTestService } from '../helpers/service.js';
import { modelClient } from '../helpers/model.js';
import { canonicalJson } from '../../src/json/canonical-json.js';
import { parseStoredJson } from '../../src/json/json.js';

const SEED = 20261127;
const RUNS = 12;

// Integers around and far beyond 2^53 and int64, and small ones; doubles below 1e21 (above
// that JavaScript writes an exponent, which PostgreSQL's numeric gives back as digits: the
// same number, spelled as an integer; docs/decisions.md).
const bigInteger = fc.oneof(
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
  fc.bigInt({ min: 2n ** 53n - 3n, max: 2n ** 53n + 3n }),
  fc.constantFrom(1700000000123456789n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n, 10n ** 40n + 1n, -(10n ** 25n) - 7n),
);
const leaf = fc.oneof(
  { weight: 4, arbitrary: bigInteger },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ min: -1e20, max: 1e20, noNaN: true, noDefaultInfinity: true }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
);
const key = fc.string({ unit: 'grapheme-ascii', maxLength: 8 }).filter((k) => k !== '__proto__' && k !== 'constructor' && k !== 'prototype');
const { json: anyJson } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('json'), { maxLength: 5 }), fc.dictionary(key, tie('json'), { maxKeys: 5 })),
}));
const objectJson = fc.dictionary(key, anyJson, { minKeys: 1, maxKeys: 5 });

t.test('parseStoredJson keeps integers beyond 2^53 exact and leaves the rest to JSON.parse', async (t) => {
  t.same(parseStoredJson('{"a": 1700000000123456789, "b": [1, 9007199254740993, -12345678901234567890123]}'),
    { a: 1700000000123456789n, b: [1, 9007199254740993n, -12345678901234567890123n] });
  t.same(parseStoredJson('{"s": "1234567890123456789", "f": 0.12345678901234567}'), { s: '1234567890123456789', f: 0.12345678901234567 });
  t.equal(parseStoredJson('9007199254740991'), 9007199254740991, 'the largest safe integer stays a number');
  t.same(parseStoredJson('[1.5, "x", null, true]'), [1.5, 'x', null, true]);
});

t.test('any-JSON model fields keep integers of any size exactly over HTTP', async (t) => {
  const svc = await startTestService(t);
  const m = modelClient(svc.url);
  t.comment(`fast-check seed ${SEED}, ${RUNS} runs a field, on ${svc.databaseUrl ? 'PostgreSQL' : 'PGlite'}`);
  const same = (got: unknown, sent: unknown, what: string) => {
    const a = canonicalJson(got);
    const b = canonicalJson(sent);
    if (a !== b) throw new Error(`${what}: sent ${b}, got back ${a}`);
  };
  const params = { seed: SEED, numRuns: RUNS, endOnFailure: true };
  let n = 0;

  t.test('asset property values', async (t) => {
    const asset = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'Exact' });
    await fc.assert(fc.asyncProperty(anyJson, async (value) => {
      const k = `p${n++}`;
      const put = await m.ok<{ value: unknown }>('PUT', `/v1/model/assets/${asset.asset_id}/properties/${k}`, { value });
      same(put.value, value, 'PUT answer');
      const got = await m.ok<{ properties: Array<{ key: string; value: unknown }> }>('GET', `/v1/model/assets/${asset.asset_id}/properties`);
      same(got.properties.find((p) => p.key === k)?.value, value, `property ${k}`);
    }), params);
    t.pass(`${RUNS} property values came back exact`);
    // The issue's own example, checked on the wire: bare digits in, the same digits out.
    const wire = await fetch(`${svc.url}/v1/model/assets/${asset.asset_id}/properties/ns`, {
      method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"value":1700000000123456789}',
    });
    t.equal(wire.status, 200);
    const text = await (await fetch(`${svc.url}/v1/model/assets/${asset.asset_id}/properties`)).text();
    t.match(text, '"key":"ns","value":1700000000123456789,', 'the stored value reads back as the same bare digits');
  });

  t.test('template limit_traits, lifecycle_policy and entry_cadence, and attribute overrides', async (t) => {
    const def = (name: string, limit: unknown, policy: unknown, cadence: unknown) => ({
      name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector',
      enum_set_id: null, limit_traits: limit, lifecycle_policy: policy, entry_cadence: cadence, overridable: ['limit_traits', 'entry_cadence'],
    });
    type Def = { limit_traits: unknown; lifecycle_policy: unknown; entry_cadence: unknown };
    await fc.assert(fc.asyncProperty(anyJson, anyJson, anyJson, anyJson, async (limit, policy, cadence, override) => {
      const i = n++;
      const tpl = await m.ok<{ template_id: string }>('POST', '/v1/model/templates', { name: `Exact ${i}`, attributes: [def(`A${i}`, limit, policy, cadence)] }, 201);
      const got = await m.ok<{ attributes: Array<[string, Def]> }>('GET', `/v1/model/templates/${tpl.template_id}`);
      const d = got.attributes[0][1];
      same(d.limit_traits, limit, 'limit_traits');
      same(d.lifecycle_policy, policy, 'lifecycle_policy');
      same(d.entry_cadence, cadence, 'entry_cadence');
      const asset = await m.ok<{ asset_id: string }>('POST', '/v1/model/assets', { name: `Exact asset ${i}`, template_id: tpl.template_id });
      // Creating from a template may already have made the attribute; instantiate makes what is missing.
      await m.ok('POST', `/v1/model/assets/${asset.asset_id}/instantiate`, {});
      const found = await m.ok<{ results: Array<Def & { attribute_id: string }> }>('POST', '/v1/model/resolve',
        { select: { kind: 'attributes_named', content: { name: `A${i}` } }, scope: {} });
      if (found.results.length !== 1) throw new Error(`resolve found ${found.results.length} attributes named A${i}`);
      same(found.results[0].limit_traits, limit, 'resolved limit_traits');
      const attrId = found.results[0].attribute_id;
      const patched = await m.ok<Def>('PATCH', `/v1/model/attributes/${attrId}`, { overrides: { limit_traits: override, entry_cadence: policy } });
      same(patched.limit_traits, override, 'PATCH answer limit_traits');
      const read = await m.ok<Def>('GET', `/v1/model/attributes/${attrId}`);
      same(read.limit_traits, override, 'overridden limit_traits');
      same(read.entry_cadence, policy, 'overridden entry_cadence');
      same(read.lifecycle_policy, policy, 'inherited lifecycle_policy');
    }), params);
    t.pass(`${RUNS} templates and attributes came back exact`);
  });

  t.test('registry encoding and enum-set members', async (t) => {
    const ordinal = fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 2 ** 53 - 1000, max: 2 ** 53 - 1 }));
    await fc.assert(fc.asyncProperty(objectJson, fc.uniqueArray(ordinal, { maxLength: 5 }), async (encoding, ordinals) => {
      const i = n++;
      const members = ordinals.map((o, j) => ({ ordinal: o, name: `m${j}` }));
      const made = await m.ok<{ id: string }>('POST', '/v1/model/registries/enum-sets/entries', { name: `exact-set-${i}-${SEED}`, members, encoding }, 201);
      const got = await m.ok<{ encoding: unknown; members: unknown }>('GET', `/v1/model/registries/enum-sets/entries/${made.id}`);
      same(got.encoding, encoding, 'encoding');
      same(got.members, members, 'members');
    }), params);
    t.pass(`${RUNS} registry entries came back exact`);
  });

  t.test('bulk job params', async (t) => {
    await m.ok('POST', '/v1/model/assets', { name: 'JobRoot' });
    await fc.assert(fc.asyncProperty(fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), async (fromNs) => {
      const params = { pattern: 'opc/{asset}.{attribute}', under: '/JobRoot', from_ns: fromNs };
      const job = await m.ok<{ job_id: bigint | number; params: unknown }>('POST', '/v1/model/jobs', { kind: 'bulk-bind', params });
      same(job.params, params, 'POST answer params');
      const got = await m.ok<{ params: unknown }>('GET', `/v1/model/jobs/${job.job_id}`);
      same(got.params, params, 'stored params');
    }), params);
    t.pass(`${RUNS} jobs' params came back exact`);
  });
});
