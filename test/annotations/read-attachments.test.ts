// The splice that adds attached members (annotations, episodes, lineage) to a finished
// read body, JSON and msgpack: every item keeps its own members byte for byte (msgpack
// float64 stays float64), gains the members its attribute has, and lineage-like members
// also land in provenance. Property-based over random item lists.
import t from 'tap';
import fc from 'fast-check';
import { Packr, Unpackr } from 'msgpackr';
import { spliceAttachments } from '../../src/http/routes/reads/read-attachments.js';
import { jsonBytes, parseJson } from '../../src/json/json.js';

const packr = new Packr({ useRecords: false, int64AsType: 'bigint' });
const unpackr = new Unpackr({ useRecords: false, int64AsType: 'bigint' });

const item = fc.record({
  attribute_id: fc.uuid(),
  path: fc.string({ maxLength: 300 }),
  blob: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  provenance: fc.dictionary(fc.constantFrom('percent_good', 'model_as_of_ns', 'tiers_touched'), fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(['hot']))),
  points: fc.array(fc.record({ ts_ns: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), value: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(), fc.boolean(), fc.constant(null)), quality: fc.nat(255) }), { maxLength: 5 }),
});
const placements = [{ member: 'annotations' }, { member: 'lineage', alsoInProvenance: true }];
type Item = { attribute_id: string; provenance: Record<string, unknown> } & Record<string, unknown>;

function expected(items: Item[], values: Array<Map<string, unknown>>): Item[] {
  return items.map((it) => {
    const out: Item = { ...it, provenance: { ...it.provenance } };
    placements.forEach((p, i) => {
      if (!values[i].has(it.attribute_id)) return;
      out[p.member] = values[i].get(it.attribute_id);
      if (p.alsoInProvenance) out.provenance[p.member] = values[i].get(it.attribute_id);
    });
    return out;
  });
}

const valueMaps = (items: Item[]) => fc.tuple(
  fc.array(fc.boolean(), { minLength: items.length, maxLength: items.length }),
  fc.array(fc.boolean(), { minLength: items.length, maxLength: items.length }),
).map(([a, b]) => [
  new Map(items.flatMap((it, i) => (a[i] ? [[it.attribute_id, [{ start_ns: 1n, end_ns: 2n ** 62n, text: `note ${i}` }]] as const] : []))),
  new Map(items.flatMap((it, i) => (b[i] ? [[it.attribute_id, { rule_id: it.attribute_id, windows: [] }] as const] : []))),
] as Array<Map<string, unknown>>);

const cases = fc.array(item, { maxLength: 40 }).chain((items) => valueMaps(items as Item[]).map((values) => ({ items: items as Item[], values })));

t.test('msgpack: items gain their members, the rest decodes as before', async (t) => {
  fc.assert(fc.property(cases, ({ items, values }) => {
    const out = spliceAttachments(packr.pack(items), 'msgpack', placements, values);
    t.same(unpackr.unpack(out), expected(items, values));
  }), { numRuns: 200 });
});

t.test('json: items gain their members, int64 beyond 2^53 stays exact', async (t) => {
  fc.assert(fc.property(cases, ({ items, values }) => {
    const out = spliceAttachments(jsonBytes(items), 'json', placements, values);
    t.same(parseJson(out), parseJson(jsonBytes(expected(items, values))));
  }), { numRuns: 200 });
});

t.test('msgpack: a float64 that holds an integer is still a float64 after the splice', async (t) => {
  const f64 = new Packr({ useRecords: false, useFloat32: 0 });
  // msgpackr writes 3.0 as an integer; the workers write doubles as 0xcb, so build that by hand
  const body = Buffer.concat([Buffer.from([0x91, 0x83]), f64.pack('attribute_id'), f64.pack('a'), f64.pack('provenance'), Buffer.from([0x80]), f64.pack('v'), Buffer.from([0xcb, 0x40, 0x08, 0, 0, 0, 0, 0, 0])]);
  const out = spliceAttachments(body, 'msgpack', placements, [new Map([['a', []]]), new Map()]);
  t.ok(Buffer.from(out).includes(Buffer.from([0xcb, 0x40, 0x08, 0, 0, 0, 0, 0, 0])), 'the double is copied as it was');
  t.same(unpackr.unpack(out), [{ attribute_id: 'a', provenance: {}, v: 3, annotations: [] }]);
});
