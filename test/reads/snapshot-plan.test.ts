// POST /v1/read/snapshot from a kept plan (src/reads/snapshot-plan.ts) over real HTTP: the
// same bytes as the snapshot resolved afresh (asked with a unit default, which the plan does
// not serve and which changes nothing for attributes without a unit), for every value type,
// an unbound attribute, a series without a point, a latest older than its binding and a
// value the table does not hold (a string too long: read from storage); a binding dated
// ahead followed when its instant comes, with no model commit in between; a rebind followed
// at once; JSON and msgpack.
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { parseJson, stringifyJson } from '../../src/json/json.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';
import { nowNs } from '../../src/clock.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';

const SEC = 1_000_000_000n;
const WHO = { principal: 'tester' };
const ENUM_SET = '00000000-0000-4000-8000-00000000e001';
const BAR = systemEntryId('units', 'bar');
const CONTINUITY: Record<ValueType, string> = { float64: 'continuous', int64: 'continuous', boolean: 'stepped', enum: 'stepped', string: 'event' };

interface Item { attribute_id: string; path: string; snapshot: { ts_ns: bigint | number; value: unknown; quality: number } | null; provenance: Record<string, unknown> }

/** The body with its instants (window, model instant) replaced, so two reads compare byte for byte. */
const timeless = (body: string) => body.replace(/"window_resolved":\{"start_ns":\d+,"end_ns":\d+\},"model_as_of_ns":\d+/g, '"window_resolved":{},"model_as_of_ns":0');

t.test('a snapshot from a kept plan', async (t) => {
  const svc = await startTestService(t);
  const parts = svc.service.context.parts;
  const post = async (path: string, body: unknown, accept = 'application/json'): Promise<{ status: number; bytes: Buffer }> => {
    const res = await fetch(svc.url + path, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: stringifyJson(body) });
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const ok = async <T>(path: string, body: unknown, status = 200): Promise<T> => {
    const r = await post(path, body);
    if (r.status !== status) throw new Error(`${path}: ${r.status} ${r.bytes.toString()}`);
    return parseJson(r.bytes) as T;
  };
  const now = nowNs();
  const from = now - 3600n * SEC;
  const plant = (await ok<{ asset_id: string }>('/v1/model/assets', { name: 'Plant' })).asset_id;
  const attribute = async (name: string, type: ValueType, unit: string | null = null) => (await ok<{ attribute_id: string }>('/v1/model/attributes', {
    asset_id: plant,
    definition: { name, quantity_kind_id: unit === null ? null : systemEntryId('quantity-kinds', 'Pressure'), default_unit_id: unit, continuity_class: CONTINUITY[type], writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] },
  }, 201)).attribute_id;
  const series = async (name: string, type: ValueType) => (await parts.series.create({ sourceName: name, valueType: type, ...(type === 'enum' ? { enumSet: { id: ENUM_SET, ordinals: [0, 1, 2] } } : {}) }, WHO)).id;
  const bind = (attributeId: string, seriesId: string, fromNs: bigint) => ok('/v1/model/bindings', { attribute_id: attributeId, series_id: seriesId, from_ns: fromNs }, 201);
  const column = (type: ValueType, values: unknown[]) => type === 'float64' ? Float64Array.from(values as number[]) : type === 'int64' ? BigInt64Array.from(values as bigint[])
    : type === 'boolean' ? Uint8Array.from(values.map((v) => (v ? 1 : 0))) : type === 'enum' ? Int32Array.from(values as number[]) : values as string[];
  const write = (id: string, ts: bigint[], values: unknown[], type: ValueType = 'float64') => parts.storage.write([{
    series: id, times: BigInt64Array.from(ts), quality: Uint32Array.from(ts.map(() => 192)), values: column(type, values),
  }], WHO);

  const cases: Array<[string, ValueType, unknown[]]> = [
    ['F', 'float64', [1.5, -2.25e-7]], ['I', 'int64', [7n, -9007199254740993n]], ['B', 'boolean', [true, false]],
    ['E', 'enum', [1, 2]], ['S', 'string', ['B-1', 'B-2']], ['L', 'string', ['x', 'a longer value than the table keeps: '.repeat(3)]],
    // doubles the plan writes itself (123456.789, 7) and those it leaves to String(v) (17 digits, 1e21); a second
    // attribute of the same enum set and ordinal (the plan keeps an enum value's text per set and ordinal)
    ['G', 'float64', [2.5, 0.30000000000000004]], ['H', 'float64', [7, 1e21]], ['J', 'float64', [1, 123456.789]], ['E2', 'enum', [0, 2]],
  ];
  const ids: Record<string, string> = {};
  for (const [name, type, values] of cases) {
    const a = ids[name] = await attribute(name, type);
    const s = await series(`plan/${name}`, type);
    await bind(a, s, from);
    await write(s, [now - 20n * SEC, now - 10n * SEC], values, type);
  }
  ids.Unbound = await attribute('Unbound', 'float64');
  ids.Empty = await attribute('Empty', 'float64');
  await bind(ids.Empty, await series('plan/empty', 'float64'), from);
  ids.Old = await attribute('Old', 'float64');
  const old = await series('plan/old', 'float64');
  await write(old, [from - 10n * SEC], [3.5]);
  await bind(ids.Old, old, from);
  ids.Future = await attribute('Future', 'float64', BAR);
  const first = await series('plan/first', 'float64'), second = await series('plan/second', 'float64');
  await write(first, [now - 5n * SEC], [10.5]);
  await bind(ids.Future, first, from);
  // the second sensor takes over 5 s from now (its point just after): no model commit when it does
  const takeover = nowNs() + 5n * SEC;
  await write(second, [takeover + 1_000_000n], [20.5]);
  await bind(ids.Future, second, takeover);

  const everything = { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } };
  const planned = () => post('/v1/read/snapshot', { resolve: everything });
  // a unit default: the snapshot resolves afresh; Future has a unit and is read in its own, the others have none
  const afresh = () => post('/v1/read/snapshot', { resolve: everything, units: { default: BAR } });

  t.test('the same bytes as a snapshot resolved afresh, for every kind of answer', async (t) => {
    for (let i = 0; i < 3; i++) {
      const before = nowNs();
      const [a, b] = [await planned(), await afresh()];
      t.equal(a.status, 200);
      // the two reads on one side of the takeover (a slow box may put it between them)
      if (before >= takeover || nowNs() < takeover) t.equal(timeless(a.bytes.toString()), timeless(b.bytes.toString()), `read ${i + 1}`);
    }
    const items = new Map((parseJson((await planned()).bytes) as Item[]).map((i) => [i.attribute_id, i]));
    const beforeTakeover = nowNs() < takeover;
    t.same(items.get(ids.F)!.snapshot, { ts_ns: now - 10n * SEC, value: -2.25e-7, quality: 192 });
    t.same(items.get(ids.I)!.snapshot!.value, -9007199254740993n, 'int64 exact');
    t.same(items.get(ids.B)!.snapshot!.value, false);
    t.same(items.get(ids.E)!.snapshot!.value, { enum_set: ENUM_SET, ordinal: 2, member: null });
    t.same(items.get(ids.E2)!.snapshot!.value, { enum_set: ENUM_SET, ordinal: 2, member: null });
    t.same([ids.G, ids.H, ids.J].map((id) => items.get(id)!.snapshot!.value), [0.30000000000000004, 1e21, 123456.789]);
    t.same(items.get(ids.L)!.snapshot!.value, 'a longer value than the table keeps: '.repeat(3), 'read from storage');
    t.equal(items.get(ids.Unbound)!.snapshot, null);
    t.notOk('tiers_touched' in items.get(ids.Unbound)!.provenance, 'no binding: no tier');
    t.equal(items.get(ids.Empty)!.snapshot, null);
    t.equal(items.get(ids.Old)!.snapshot, null, 'a latest older than the binding is not this attribute\'s');
    // (on a slow box the takeover may already have come: the next subtest checks it)
    if (beforeTakeover) t.same(items.get(ids.Future)!.snapshot!.value, 10.5, 'the first sensor before the takeover');
  });

  t.test('msgpack: the same bytes as afresh, apart from the instants', async (t) => {
    const { Unpackr } = await import('msgpackr');
    const unpack = new Unpackr({ int64AsType: 'bigint', useRecords: false });
    const a = unpack.unpack((await post('/v1/read/snapshot', { resolve: everything }, 'application/x-msgpack')).bytes) as Item[];
    const b = unpack.unpack((await post('/v1/read/snapshot', { resolve: everything, units: { default: BAR } }, 'application/x-msgpack')).bytes) as Item[];
    const strip = (items: Item[]) => items.map((i) => ({ ...i, provenance: { ...i.provenance, window_resolved: null, model_as_of_ns: null } }));
    t.same(strip(a), strip(b));
  });

  t.test('a binding dated ahead is followed when its instant comes', async (t) => {
    while (nowNs() <= takeover) await new Promise((r) => setTimeout(r, 200));
    const items = parseJson((await planned()).bytes) as Item[];
    t.same(items.find((i) => i.attribute_id === ids.Future)!.snapshot, { ts_ns: takeover + 1_000_000n, value: 20.5, quality: 192 });
    t.equal(timeless((await planned()).bytes.toString()), timeless((await afresh()).bytes.toString()), 'the same bytes as afresh after it');
  });

  t.test('a rebind is followed at once', async (t) => {
    const third = await series('plan/third', 'float64');
    await write(third, [now - 2n * SEC], [30.5]);
    await bind(ids.F, third, now - 3n * SEC);
    const items = parseJson((await planned()).bytes) as Item[];
    t.same(items.find((i) => i.attribute_id === ids.F)!.snapshot, { ts_ns: now - 2n * SEC, value: 30.5, quality: 192 });
  });

  t.test('a new point is answered by the next read', async (t) => {
    const fresh = nowNs();
    await ok<{ results: Array<{ series_id: string }> }>('/v1/model/resolve', everything);
    const items0 = parseJson((await planned()).bytes) as Item[];
    t.ok(items0.length > 0);
    const s = (await ok<{ results: Array<{ attribute_id: string; bindings: Array<{ series_id: string }> }> }>('/v1/model/resolve', { select: { kind: 'attribute_ids', content: [ids.F] }, scope: {} })).results[0].bindings.at(-1)!.series_id;
    await write(s, [fresh], [99.25]);
    const items = parseJson((await planned()).bytes) as Item[];
    t.same(items.find((i) => i.attribute_id === ids.F)!.snapshot, { ts_ns: fresh, value: 99.25, quality: 192 });
  });
});
