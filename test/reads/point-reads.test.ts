// The resolved point reads over real HTTP (enforced auth, a real plant built through the
// Model routes, points written through the storage engine's write path): snapshot, raw
// (sensor swap, prior point, limits, msgpack), at and sampled (interpolation by
// continuity), units, quality filtering, as-of after a late edit, raw-audit, and the
// "each resolved result" scope.
import t from 'tap';
import { Unpackr } from 'msgpackr';
import { startAuthService, createPerson, grantRole, login, sessionCookieOf, ADMIN_PASSWORD, type Client } from '../helpers/auth.js';
import { stringifyJson } from '../../src/json/json.js';
import { request } from '../helpers/service.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';
import { nowNs } from '../../src/clock.js';

const T0 = 1_700_000_000_000_000_000n;
const SEC = 1_000_000_000n;
const WHO = { principal: 'tester' };
const unpack = new Unpackr({ int64AsType: 'bigint', useRecords: false });
const NO_AFTER = 'no stored point after this instant under its binding to interpolate toward';

const CELSIUS = systemEntryId('units', 'degree Celsius');
const FAHRENHEIT = systemEntryId('units', 'degree Fahrenheit');
const BAR = systemEntryId('units', 'bar');
const TEMPERATURE = systemEntryId('quantity-kinds', 'Temperature');

const def = (name: string, continuity: string, unit: string | null) => ({
  name, quantity_kind_id: unit ? TEMPERATURE : null, default_unit_id: unit, continuity_class: continuity, writer_class: 'collector',
  enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [],
});

interface Pt { ts_ns: bigint | number; value?: unknown; quality?: number; interpolated?: boolean; no_value?: string; series?: string }
interface Seg { series: string; start_ns: bigint | number; end_ns: bigint | number; points: Pt[] }
interface Item { attribute_id: string; path: string; unit_id: string | null; provenance: Record<string, unknown>; segments?: Seg[]; points?: Pt[]; snapshot?: Pt | null; prior?: Pt | null; entries?: Array<Record<string, unknown>> }

const big = (x: bigint | number) => BigInt(x);
const under = (path: string, name?: string) => ({
  select: name ? { kind: 'attributes_named', content: { name } } : { kind: 'all' }, scope: { under: { kind: 'path', content: path } },
});

t.test('resolved point reads', async (t) => {
  const svc = await startAuthService(t);
  const admin = svc.admin;
  const parts = svc.service.context.parts;
  const ok = async <T>(path: string, body: unknown, status = 200, client: Client = admin): Promise<T> => {
    const r = await client(path, { method: 'POST', body });
    if (r.status !== status) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json as T;
  };
  const read = (route: string, body: unknown, client: Client = admin) => ok<Item[]>(`/v1/read/${route}`, body, 200, client);

  // The plant: /Plant/A/P1 and /Plant/B/P2, each pump with Temp (continuous, °C),
  // Setpoint (stepped, °C), Trip (event) and Spare (continuous, never bound).
  const tpl = await ok<{ template_id: string }>('/v1/model/templates', {
    name: 'Pump', attributes: [def('Temp', 'continuous', CELSIUS), def('Setpoint', 'stepped', CELSIUS), def('Trip', 'event', null), def('Spare', 'continuous', CELSIUS)],
  }, 201);
  const plant = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'Plant' });
  const areaA = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'A', parent: plant.asset_id });
  const areaB = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'B', parent: plant.asset_id });
  const p1 = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'P1', parent: areaA.asset_id, template_id: tpl.template_id });
  await ok('/v1/model/assets', { name: 'P2', parent: areaB.asset_id, template_id: tpl.template_id });
  const attrs = (await ok<{ results: Array<{ attribute_id: string; path: string; asset_path: string; name: string }> }>('/v1/model/resolve', under('/Plant'))).results;
  // '/Plant/A/P1|Temp': asset path, then the attribute name; expectations use the path the model writes
  const found = (p: string) => {
    const cut = Math.max(p.lastIndexOf('/'), p.lastIndexOf('|'));
    const a = attrs.find((x) => x.asset_path === p.slice(0, cut) && x.name === p.slice(cut + 1));
    if (!a) throw new Error(`no ${p} in ${JSON.stringify(attrs.map((x) => x.path))}`);
    return a;
  };
  const attr = (p: string) => found(p).attribute_id;
  const path = (p: string) => found(p).path;

  const series = async (name: string) => (await parts.series.create({ sourceName: name, valueType: 'float64' }, WHO)).id;
  const s1 = await series('p1/temp-old'), s2 = await series('p1/temp-new'), sp = await series('p1/setpoint'), trip = await series('p1/trip'), p2t = await series('p2/temp');
  const bind = (attributeId: string, seriesId: string, fromNs: bigint) => ok('/v1/model/bindings', { attribute_id: attributeId, series_id: seriesId, from_ns: fromNs }, 201);
  // The sensor swap: P1 Temp reads s1 from T0 - 100 s, s2 from T0 + 50 s.
  await bind(attr('/Plant/A/P1|Temp'), s1, T0 - 100n * SEC);
  await bind(attr('/Plant/A/P1|Temp'), s2, T0 + 50n * SEC);
  await bind(attr('/Plant/A/P1|Setpoint'), sp, T0 - 100n * SEC);
  await bind(attr('/Plant/A/P1|Trip'), trip, T0 - 100n * SEC);
  await bind(attr('/Plant/B/P2|Temp'), p2t, T0 - 100n * SEC);

  const write = async (id: string, times: bigint[], values: number[], quality?: number[]) => {
    const r = await parts.storage.write([{ series: id, times: BigInt64Array.from(times), values: Float64Array.from(values), quality: Uint32Array.from(quality ?? times.map(() => 192)) }], WHO);
    if (r.refused !== 0) throw new Error('refused points');
  };
  const at = (s: number) => T0 + BigInt(s) * SEC;
  // s1: -20 s .. 60 s every 10 s (the points after the swap belong to no attribute's window), value = 10 + s/10
  await write(s1, [-20, -10, 0, 10, 20, 30, 40, 50, 60].map(at), [8, 9, 10, 11, 12, 13, 14, 15, 16]);
  // s2: 50 s .. 90 s, value 20 + ..; the point at 70 s is bad, 80 s uncertain
  await write(s2, [50, 60, 70, 80, 90].map(at), [20, 21, 22, 23, 24], [192, 192, 0, 100, 192]);
  await write(sp, [0, 30].map(at), [50, 60]);
  await write(trip, [15].map(at), [1]);
  await write(p2t, [0, 10].map(at), [30, 31]);
  const window = { start_ns: at(0), end_ns: at(100) };
  const p1Temp = { select: { kind: 'attribute_ids', content: [attr('/Plant/A/P1|Temp')] }, scope: {} };

  t.test('raw stitches a sensor swap into two segments, each labelled with its series', async (t) => {
    const [item] = await read('raw', { resolve: p1Temp, ...window });
    t.equal(item.path, path('/Plant/A/P1|Temp'));
    t.equal(item.unit_id, CELSIUS);
    t.same(item.segments!.map((s) => [s.series, big(s.start_ns), big(s.end_ns)]), [[s1, at(0), at(50)], [s2, at(50), at(100)]]);
    t.same(item.segments![0].points.map((p) => [big(p.ts_ns), p.value]), [[at(0), 10], [at(10), 11], [at(20), 12], [at(30), 13], [at(40), 14]]);
    t.same(item.segments![1].points.map((p) => p.value), [20, 21, 22, 23, 24]);
    t.same(item.provenance.window_resolved, { start_ns: at(0), end_ns: at(100) });
    t.same(item.provenance.tiers_touched, ['hot']);
    t.type(item.provenance.model_as_of_ns, 'bigint');
    t.notOk('prior' in item, 'prior only when asked');
  });

  t.test('include_prior gives the last point before the window under the binding covering its start', async (t) => {
    const [item] = await read('raw', { resolve: p1Temp, start_ns: at(5), end_ns: at(100), include_prior: true });
    t.same(item.prior, { series: s1, ts_ns: at(0), value: 10, quality: 192 });
    const [late] = await read('raw', { resolve: p1Temp, start_ns: at(50), end_ns: at(100), include_prior: true });
    t.equal(late.prior, null, 's2 has no point before its binding began: no prior from s1 (another binding)');
  });

  t.test('a read larger than max_points is refused with a 400 naming the limit', async (t) => {
    const r = await admin('/v1/read/raw', { method: 'POST', body: { resolve: p1Temp, ...window, max_points: 3 } });
    t.equal(r.status, 400);
    t.match(r.json, { code: 'read-too-large', details: { limit: 3, field: 'max_points' } });
  });

  t.test('raw answers msgpack when asked, with the same shape', async (t) => {
    const login = await request(`${svc.url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } });
    const res = await fetch(`${svc.url}/v1/read/raw`, {
      method: 'POST', body: stringifyJson({ resolve: p1Temp, ...window }),
      headers: { cookie: sessionCookieOf(login), 'x-service-csrf': '1', accept: 'application/x-msgpack', 'content-type': 'application/json' },
    });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'application/x-msgpack');
    const [item] = unpack.unpack(new Uint8Array(await res.arrayBuffer())) as Item[];
    t.equal(item.path, path('/Plant/A/P1|Temp'));
    t.same(item.segments!.map((s) => [s.series, s.points.length]), [[s1, 5], [s2, 5]]);
    t.same(item.segments![0].points[1], { ts_ns: at(10), value: 11, quality: 192 });
    t.same(item.provenance.window_resolved, { start_ns: at(0), end_ns: at(100) });

    const cols = await fetch(`${svc.url}/v1/read/raw`, {
      method: 'POST', body: stringifyJson({ resolve: p1Temp, ...window, layout: 'columns', exclude_quality: 'bad', units: { default: FAHRENHEIT } }),
      headers: { cookie: sessionCookieOf(login), 'x-service-csrf': '1', accept: 'application/x-msgpack', 'content-type': 'application/json' },
    });
    const [colItem] = unpack.unpack(new Uint8Array(await cols.arrayBuffer())) as Array<{ segments: Array<{ layout: string; count: number; value_type: string; points: { ts_ns: Uint8Array; value: Uint8Array; quality: Uint8Array }; encoding: Record<string, string> }> }>;
    const second = colItem.segments[1];
    t.match(second, { layout: 'columns', count: 4, value_type: 'float64', encoding: { ts_ns: 'int64le', value: 'float64le', quality: 'uint8' } });
    const f64 = (b: Uint8Array) => new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    const i64 = (b: Uint8Array) => new BigInt64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    t.same([...f64(second.points.value)], [68, 69.8, 73.4, 75.2], 'converted, the bad point dropped');
    t.same([...i64(second.points.ts_ns)], [at(50), at(60), at(80), at(90)]);
    t.same([...second.points.quality], [192, 192, 100, 192]);
    const [jsonCols] = await read('raw', { resolve: p1Temp, ...window, layout: 'columns' });
    t.same(jsonCols.segments![0], { series: s1, start_ns: at(0), end_ns: at(50), layout: 'columns', value_type: 'float64', enum_set: null, count: 5,
      points: { ts_ns: [at(0), at(10), at(20), at(30), at(40)], value: [10, 11, 12, 13, 14], quality: [192, 192, 192, 192, 192] } });
  });

  t.test('an unbound attribute has no segments and a null snapshot, never an error', async (t) => {
    const spare = { select: { kind: 'attribute_ids', content: [attr('/Plant/A/P1|Spare')] }, scope: {} };
    const [raw] = await read('raw', { resolve: spare, ...window });
    t.same(raw.segments, []);
    const [snap] = await read('snapshot', { resolve: spare });
    t.equal(snap.snapshot, null);
    const [sampled] = await read('at', { resolve: spare, instants: [at(10)] });
    t.same(sampled.points, [{ ts_ns: at(10), no_value: 'unbound: no binding covers this instant' }]);
  });

  t.test('snapshot answers the latest point of the current binding', async (t) => {
    const items = await read('snapshot', { resolve: under('/Plant/A/P1') });
    const byPath = new Map(items.map((i) => [i.path, i]));
    t.same(byPath.get(path('/Plant/A/P1|Temp'))!.snapshot, { ts_ns: at(90), value: 24, quality: 192 });
    t.same(byPath.get(path('/Plant/A/P1|Setpoint'))!.snapshot, { ts_ns: at(30), value: 60, quality: 192 });
    t.equal(byPath.get(path('/Plant/A/P1|Spare'))!.snapshot, null);
    const [good] = await read('snapshot', { resolve: p1Temp, exclude_quality: 'bad_and_uncertain' });
    t.same(good.snapshot, { ts_ns: at(90), value: 24, quality: 192 });
  });

  t.test('values convert exactly to another unit of the same quantity kind; another kind is a 400 naming both', async (t) => {
    const [f] = await read('raw', { resolve: p1Temp, ...window, units: { default: FAHRENHEIT } });
    t.equal(f.unit_id, FAHRENHEIT);
    t.same(f.segments![0].points.map((p) => p.value), [50, 51.8, 53.6, 55.4, 57.2], '10 °C is 50 °F, 11 °C exactly 51.8 °F');
    const [snap] = await read('snapshot', { resolve: p1Temp, units: { attributes: { [attr('/Plant/A/P1|Temp')]: FAHRENHEIT } } });
    t.equal(snap.snapshot!.value, 75.2);
    const r = await admin('/v1/read/raw', { method: 'POST', body: { resolve: p1Temp, ...window, units: { default: BAR } } });
    t.equal(r.status, 400);
    t.match(r.json, { code: 'invalid-request' });
    const msg = (r.json as { error: string }).error;
    t.ok(msg.includes(path('/Plant/A/P1|Temp')), 'the message names the attribute');
    t.match(msg, CELSIUS);
    t.match(msg, BAR);
  });

  t.test('quality filtering drops bad (or bad and uncertain) points and says how much time it dropped', async (t) => {
    const [all] = await read('raw', { resolve: p1Temp, ...window });
    t.notOk('percent_time_filtered' in all.provenance);
    t.equal(all.provenance.percent_good, 80, '70..90 s of 40 + 50 s of held time is not good: 20 of 100 s');
    const [noBad] = await read('raw', { resolve: p1Temp, ...window, exclude_quality: 'bad' });
    t.same(noBad.segments![1].points.map((p) => p.value), [20, 21, 23, 24]);
    t.equal(noBad.provenance.percent_time_filtered, 10, 'the bad point held 70..80 s of the 100 s window');
    const [goodOnly] = await read('raw', { resolve: p1Temp, ...window, exclude_quality: 'bad_and_uncertain' });
    t.same(goodOnly.segments![1].points.map((p) => p.value), [20, 21, 24]);
    t.equal(goodOnly.provenance.percent_time_filtered, 20);
  });

  t.test('at and sampled interpolate by continuity and mark interpolated values', async (t) => {
    const items = await read('at', { resolve: under('/Plant/A/P1'), instants: [at(15), at(10), at(30)] });
    const byPath = new Map(items.map((i) => [i.path, i.points!]));
    t.same(byPath.get(path('/Plant/A/P1|Temp')), [
      { ts_ns: at(10), value: 11, quality: 192, series: s1 },
      { ts_ns: at(15), value: 11.5, quality: 192, interpolated: true, series: s1 },
      { ts_ns: at(30), value: 13, quality: 192, series: s1 },
    ], 'continuous: linear between neighbours; a stored point is not interpolated');
    t.same(byPath.get(path('/Plant/A/P1|Setpoint'))!.map((p) => [p.value, p.interpolated ?? false]), [[50, true], [50, true], [60, false]], 'stepped: the previous value holds');
    t.same(byPath.get(path('/Plant/A/P1|Trip'))!.map((p) => p.value ?? p.no_value), [
      'event attribute: no point at this instant, and event values are not interpolated', 1,
      'event attribute: no point at this instant, and event values are not interpolated',
    ], 'event: only a point at the instant');
    const tempItem = items.find((i) => i.path === path('/Plant/A/P1|Temp'))!;
    t.equal(tempItem.provenance.computed, 'linear-interpolation');

    const [sampled] = await read('sampled', { resolve: p1Temp, start_ns: at(40), end_ns: at(100), interval_ns: 20n * SEC, exclude_quality: 'bad' });
    t.same(sampled.points!.map((p) => [big(p.ts_ns), p.value ?? p.no_value, p.series]), [
      [at(40), 14, s1], [at(60), 21, s2], [at(80), 23, s2],
    ]);
    const [edge] = await read('sampled', { resolve: p1Temp, start_ns: at(95), end_ns: at(96), interval_ns: SEC });
    t.same(edge.points, [{ ts_ns: at(95), no_value: 'no stored point after this instant under its binding to interpolate toward', series: s2 }]);
    const [conv] = await read('at', { resolve: p1Temp, instants: [at(15)], units: { default: FAHRENHEIT } });
    t.equal(conv.points![0].value, 52.7, '11.5 °C is 52.7 °F');
  });

  t.test('as-of answers the data as it was known then; raw-audit tells who changed what', async (t) => {
    const before = nowNs();
    await new Promise((r) => setTimeout(r, 5));
    await write(s1, [at(10)], [99]); // a late edit supersedes 11 at 10 s
    const [now] = await read('raw', { resolve: p1Temp, start_ns: at(0), end_ns: at(20) });
    t.same(now.segments![0].points.map((p) => p.value), [10, 99]);
    const [then] = await read('as-of', { resolve: p1Temp, start_ns: at(0), end_ns: at(20), known_at_ns: before });
    t.same(then.segments![0].points.map((p) => p.value), [10, 11], 'the superseded value as it was known then');
    t.equal(then.provenance.contains_unknown_arrival, true, 'points never edited have no recorded arrival');
    const [later] = await read('as-of', { resolve: p1Temp, start_ns: at(0), end_ns: at(20), known_at_ns: nowNs() });
    t.same(later.segments![0].points.map((p) => p.value), [10, 99]);
    const [audit] = await read('raw-audit', { resolve: p1Temp, start_ns: at(0), end_ns: at(20) });
    t.equal(audit.entries!.length, 1);
    t.match(audit.entries![0], { series: s1, ts_ns: at(10), principal: 'tester', old: { value: 11, quality: 192 }, new: { value: 99, quality: 192 } });
    t.ok(big(audit.entries![0].superseded_at_ns as bigint) > before);
    const [f] = await read('raw-audit', { resolve: p1Temp, start_ns: at(0), end_ns: at(20), units: { default: FAHRENHEIT } });
    t.match(f.entries![0], { old: { value: 51.8 }, new: { value: 210.2 } });
  });

  t.test('each resolved result: a principal granted one subtree sees only its results; anonymous is 401', async (t) => {
    const id = await createPerson(admin, 'reader-a', 'reader password 1');
    await grantRole(admin, id, 'viewer', { kind: 'asset', asset_id: areaA.asset_id });
    const reader = await login(svc.url, 'reader-a', 'reader password 1');
    const plantTemps = under('/Plant', 'Temp');
    t.same((await read('snapshot', { resolve: plantTemps })).map((i) => i.path), [path('/Plant/A/P1|Temp'), path('/Plant/B/P2|Temp')], 'the admin sees both');
    for (const [route, extra] of [['snapshot', {}], ['raw', window], ['at', { instants: [at(10)] }], ['sampled', { ...window, interval_ns: 10n * SEC }],
      ['as-of', { ...window, known_at_ns: nowNs() }], ['raw-audit', window]] as const) {
      const items = await read(route, { resolve: plantTemps, ...extra }, reader);
      t.same(items.map((i) => i.path), [path('/Plant/A/P1|Temp')], `${route}: only the granted subtree`);
      const anon = await request(`${svc.url}/v1/read/${route}`, { method: 'POST', body: { resolve: plantTemps, ...extra } });
      t.equal(anon.status, 401, `${route}: anonymous is 401`);
    }
    // the snapshot is answered from a plan kept per caller: a repeat, another reader of the
    // same body, a grant added and one removed are each seen at once
    const snapPaths = async (c: Client) => (await read('snapshot', { resolve: plantTemps }, c)).map((i) => i.path);
    t.same(await snapPaths(reader), [path('/Plant/A/P1|Temp')], 'a repeated snapshot stays filtered');
    const idB = await createPerson(admin, 'reader-b', 'reader password 2');
    await grantRole(admin, idB, 'viewer', { kind: 'asset', asset_id: areaB.asset_id });
    const readerB = await login(svc.url, 'reader-b', 'reader password 2');
    t.same(await snapPaths(readerB), [path('/Plant/B/P2|Temp')], 'another reader of the same body has its own plan');
    t.same(await snapPaths(reader), [path('/Plant/A/P1|Temp')]);
    const more = await grantRole(admin, id, 'viewer', { kind: 'asset', asset_id: areaB.asset_id });
    t.same(await snapPaths(reader), [path('/Plant/A/P1|Temp'), path('/Plant/B/P2|Temp')], 'a new grant is seen by the next snapshot');
    t.equal((await admin(`/v1/auth/grants/${more}`, { method: 'DELETE' })).status, 204);
    t.same(await snapPaths(reader), [path('/Plant/A/P1|Temp')], 'a removed grant is seen by the next snapshot');
    void p1;
  });

  t.test('a read over many attributes runs in slices and answers one array in path order', async (t) => {
    const names = Array.from({ length: 20 }, (_, i) => `Cell-${String(i).padStart(2, '0')}`);
    const bank = await ok<{ template_id: string }>('/v1/model/templates', { name: 'Bank', attributes: names.map((n) => def(n, 'continuous', CELSIUS)) }, 201);
    const site = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'Site' });
    for (const b of ['B1', 'B2']) await ok('/v1/model/assets', { name: b, parent: site.asset_id, template_id: bank.template_id });
    const cells = (await ok<{ results: Array<{ attribute_id: string; path: string }> }>('/v1/model/resolve', under('/Site'))).results;
    t.equal(cells.length, 40);
    const cellSeries = await series('bank/cell');
    await bind(cells[7].attribute_id, cellSeries, T0 - 100n * SEC);
    await write(cellSeries, [at(0), at(10), at(20)], [3.5, 3.6, 3.7]);
    const raw = await read('raw', { resolve: under('/Site'), ...window });
    t.same(raw.map((i) => i.path), cells.map((c) => c.path), 'every attribute once, in path order');
    t.same(raw[7].segments!.map((s) => s.points.map((p) => p.value)), [[3.5, 3.6, 3.7]]);
    t.ok(raw.every((i, k) => k === 7 || i.segments!.length === 0));
    const snap = await read('snapshot', { resolve: under('/Site'), units: { default: FAHRENHEIT } });
    t.equal(snap.length, 40);
    t.same(snap[7].snapshot, { ts_ns: at(20), value: 38.66, quality: 192 });
    const big = await admin('/v1/read/raw', { method: 'POST', body: { resolve: under('/Site'), ...window, max_points: 2 } });
    t.match(big.json, { code: 'read-too-large', details: { limit: 2 } });
    const bigColumns = await admin('/v1/read/raw', { method: 'POST', body: { resolve: under('/Site'), ...window, max_points: 2, layout: 'columns' } });
    t.match(bigColumns.json, { code: 'read-too-large', details: { limit: 2 } }, 'the JSON columns layout too');
    const cols = await read('raw', { resolve: under('/Site'), ...window, layout: 'columns' });
    t.same((cols[7].segments as unknown as Array<{ count: number; points: { value: number[] } }>).map((s) => [s.count, s.points.value]), [[3, [3.5, 3.6, 3.7]]], 'JSON columns of a sliced read');
  });

  t.test('a point stamped after the service clock is clock_suspect; a snapshot as of an instant ignores later points', async (t) => {
    const asOf = nowNs();
    await write(s2, [asOf + 3_600n * SEC], [25]); // a source clock an hour ahead
    const [latest] = await read('snapshot', { resolve: p1Temp });
    t.same(latest.snapshot, { ts_ns: asOf + 3_600n * SEC, value: 25, quality: 192 });
    t.equal(latest.provenance.clock_suspect, true);
    const [then] = await read('snapshot', { resolve: { ...p1Temp, as_of_ns: asOf } });
    t.same(then.snapshot, { ts_ns: at(90), value: 24, quality: 192 }, 'the latest point at or before as_of_ns');
    t.notOk('clock_suspect' in then.provenance);
    t.equal(big(then.provenance.model_as_of_ns as bigint), asOf);
  });

  t.test('a few instants over many points seek their neighbours and answer as a scan would', async (t) => {
    // P2 Temp: 30 at 0 s, 31 at 10 s, then k at 200 + k s for k = 0..399
    const times = Array.from({ length: 400 }, (_, k) => at(200) + BigInt(k) * SEC);
    await write(p2t, times, times.map((_, k) => k));
    const p2Temp = { select: { kind: 'attribute_ids', content: [attr('/Plant/B/P2|Temp')] }, scope: {} };
    const instants = [at(199), at(250) + 500_000_000n, at(300), at(700)];
    const [sought] = await read('at', { resolve: p2Temp, instants });
    t.same(sought.points!.map((p) => p.value ?? p.no_value), [31 - (31 * 189) / 190, 50.5, 100, NO_AFTER]);
    t.same(sought.points!.map((p) => p.interpolated ?? false), [true, true, false, false]);
    const more = Array.from({ length: 20 }, (_, k) => at(201 + k));
    const [scanned] = await read('at', { resolve: p2Temp, instants: [...instants, ...more] });
    const byTime = new Map(scanned.points!.map((p) => [big(p.ts_ns), p]));
    for (const p of sought.points!) t.same(p, byTime.get(big(p.ts_ns)), `the value at ${p.ts_ns} equals the one a scan answers`);
  });

  t.test('enum values carry their member names in every row (snapshot, raw rows in JSON and msgpack, prior, at, as-of)', async (t) => {
    const set = await ok<{ id: string }>('/v1/model/registries/enum-sets/entries', { name: 'Pump state (reads)', members: [{ ordinal: 0, name: 'stopped' }, { ordinal: 1, name: 'running' }] }, 201);
    const root = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'Enums' });
    const state = await ok<{ attribute_id: string }>('/v1/model/attributes', { asset_id: root.asset_id, definition: { ...def('State', 'stepped', null), enum_set_id: set.id } }, 201);
    const sid = (await parts.series.create({ sourceName: 'enums/state', valueType: 'enum', enumSet: { id: set.id, ordinals: [0, 1, 2] } }, WHO)).id;
    await bind(state.attribute_id, sid, T0 - 100n * SEC);
    const r = await parts.storage.write([{ series: sid, times: BigInt64Array.of(at(0), at(10), at(20)), values: Int32Array.of(0, 1, 2), quality: Uint32Array.of(192, 192, 192) }], WHO);
    t.equal(r.accepted, 3);
    const one = { select: { kind: 'attribute_ids', content: [state.attribute_id] }, scope: {} };
    const v = (ordinal: number, member: string | null) => ({ enum_set: set.id, ordinal, member });
    const [snap] = await read('snapshot', { resolve: one });
    t.same(snap.snapshot, { ts_ns: at(20), value: v(2, null), quality: 192 }, 'an ordinal the set does not name: member null');
    const [raw] = await read('raw', { resolve: one, start_ns: at(5), end_ns: at(30), include_prior: true });
    t.same(raw.segments![0].points.map((p) => p.value), [v(1, 'running'), v(2, null)]);
    t.same(raw.prior!.value, v(0, 'stopped'));
    const login = await request(`${svc.url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } });
    const res = await fetch(`${svc.url}/v1/read/raw`, {
      method: 'POST', body: stringifyJson({ resolve: one, start_ns: at(0), end_ns: at(30) }),
      headers: { cookie: sessionCookieOf(login), 'x-service-csrf': '1', accept: 'application/x-msgpack', 'content-type': 'application/json' },
    });
    const packed = unpack.unpack(new Uint8Array(await res.arrayBuffer())) as Item[];
    t.same(packed[0].segments![0].points.map((p) => p.value), [v(0, 'stopped'), v(1, 'running'), v(2, null)], 'msgpack rows carry the same values');
    const [atRead] = await read('at', { resolve: one, instants: [at(15)] });
    t.same(atRead.points![0].value, v(1, 'running'));
    const [asOf] = await read('as-of', { resolve: one, start_ns: at(0), end_ns: at(30), known_at_ns: nowNs() });
    t.same(asOf.segments![0].points.map((p) => p.value), [v(0, 'stopped'), v(1, 'running'), v(2, null)]);
    // a rebind after those reads (their resolution is kept until a model commit) is in the next read
    const sid2 = (await parts.series.create({ sourceName: 'enums/state-new', valueType: 'enum', enumSet: { id: set.id, ordinals: [0, 1, 2] } }, WHO)).id;
    await bind(state.attribute_id, sid2, at(25));
    await parts.storage.write([{ series: sid2, times: BigInt64Array.of(at(26)), values: Int32Array.of(0), quality: Uint32Array.of(192) }], WHO);
    const [rebound] = await read('snapshot', { resolve: one });
    t.same(rebound.snapshot, { ts_ns: at(26), value: v(0, 'stopped'), quality: 192 }, 'the snapshot follows the rebind');
    const [stitched] = await read('raw', { resolve: one, start_ns: at(0), end_ns: at(30) });
    t.same(stitched.segments!.map((g) => [g.series, g.points.length]), [[sid, 3], [sid2, 1]]);
  });

  t.test('a resolve body with an unknown field is a 400', async (t) => {
    const r = await admin('/v1/read/snapshot', { method: 'POST', body: { resolve: { ...p1Temp, extra: 1 } } });
    t.equal(r.status, 400);
  });
});
