// POST /v1/read/summary and /v1/read/render over real HTTP (enforced auth, a plant built
// through the Model routes, points written through the storage engine's write path):
// boundary weighting against a hand computation, a total with unit conversion, a summary
// and a render across a sensor swap, and the "each resolved result" scope.
import t from 'tap';
import { Unpackr } from 'msgpackr';
import { stringifyJson } from '../../src/json/json.js';
import { startAuthService, createPerson, grantRole, login, sessionCookieOf, ADMIN_PASSWORD, type Client } from '../helpers/auth.js';
import { request } from '../helpers/service.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';

const T0 = 1_700_000_000_000_000_000n;
const SEC = 1_000_000_000n;
const WHO = { principal: 'tester' };

const CELSIUS = systemEntryId('units', 'degree Celsius');
const TEMPERATURE = systemEntryId('quantity-kinds', 'Temperature');
const M3H = systemEntryId('units', 'cubic metre per hour');
const M3S = systemEntryId('units', 'cubic metre per second');
const M3 = systemEntryId('units', 'cubic metre');
const FLOW = systemEntryId('quantity-kinds', 'Volume flow rate');

const def = (name: string, continuity: string, kind: string | null, unit: string | null) => ({
  name, quantity_kind_id: kind, default_unit_id: unit, continuity_class: continuity, writer_class: 'collector',
  enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [],
});

type Row = Record<string, number | bigint | null>;
interface Item { attribute_id: string; path: string; unit_id: string | null; total_unit_id?: string | null; intervals?: Row[]; render?: Record<string, unknown> | null; provenance: Record<string, unknown> }

const num = (x: unknown) => (typeof x === 'bigint' ? Number(x) : x as number);
const close = (a: unknown, b: number) => Math.abs(num(a) - b) <= 1e-9 * Math.max(1, Math.abs(b));

t.test('summary and render through resolution', async (t) => {
  const svc = await startAuthService(t);
  const admin = svc.admin;
  const parts = svc.service.context.parts;
  const ok = async <T>(path: string, body: unknown, status = 200, client: Client = admin): Promise<T> => {
    const r = await client(path, { method: 'POST', body });
    if (r.status !== status) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json as T;
  };
  const read = (route: string, body: unknown, client: Client = admin) => ok<Item[]>(`/v1/read/${route}`, body, 200, client);

  const tpl = await ok<{ template_id: string }>('/v1/model/templates', {
    name: 'Pump', attributes: [def('Flow', 'continuous', FLOW, M3H), def('Temp', 'continuous', TEMPERATURE, CELSIUS), def('Setpoint', 'stepped', TEMPERATURE, CELSIUS)],
  }, 201);
  const plant = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'Plant' });
  const areaA = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'A', parent: plant.asset_id });
  const areaB = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'B', parent: plant.asset_id });
  await ok('/v1/model/assets', { name: 'P1', parent: areaA.asset_id, template_id: tpl.template_id });
  await ok('/v1/model/assets', { name: 'P2', parent: areaB.asset_id, template_id: tpl.template_id });
  const attrs = (await ok<{ results: Array<{ attribute_id: string; asset_path: string; name: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } })).results;
  const attr = (asset: string, name: string) => attrs.find((a) => a.asset_path === asset && a.name === name)!.attribute_id;
  const one = (asset: string, name: string) => ({ select: { kind: 'attribute_ids', content: [attr(asset, name)] }, scope: {} });

  const series = async (name: string) => (await parts.series.create({ sourceName: name, valueType: 'float64' }, WHO)).id;
  const bind = (attributeId: string, seriesId: string, fromNs: bigint) => ok('/v1/model/bindings', { attribute_id: attributeId, series_id: seriesId, from_ns: fromNs }, 201);
  const write = async (id: string, secs: number[], values: number[], quality?: number[]) => {
    const r = await parts.storage.write([{ series: id, times: BigInt64Array.from(secs, (s) => T0 + BigInt(s) * SEC), values: Float64Array.from(values), quality: Uint32Array.from(quality ?? secs.map(() => 192)) }], WHO);
    if (r.refused !== 0) throw new Error('refused points');
  };
  const at = (s: number) => T0 + BigInt(s) * SEC;

  const flowOld = await series('p1/flow-old'), flowNew = await series('p1/flow-new'), temp = await series('p1/temp'), sp = await series('p1/setpoint'), p2flow = await series('p2/flow');
  await bind(attr('/Plant/A/P1', 'Flow'), flowOld, at(-100_000));
  await bind(attr('/Plant/A/P1', 'Flow'), flowNew, at(1800));
  await bind(attr('/Plant/A/P1', 'Temp'), temp, at(-100_000));
  await bind(attr('/Plant/A/P1', 'Setpoint'), sp, at(-100_000));
  await bind(attr('/Plant/B/P2', 'Flow'), p2flow, at(-100_000));
  await write(temp, [-10, 10, 60, 110], [0, 20, 70, 20]);
  await write(sp, [-30, 20, 70, 120], [10, 20, 30, 40], [192, 192, 100, 192]);
  // P1 Flow: the old meter reads 3600 m³/h until the swap at 1800 s (and on after it, unbound); the new one 7200 m³/h
  await write(flowOld, [-60, 0, 600, 1200, 1790, 1900, 3000], [3600, 3600, 3600, 3600, 3600, 99999, 99999]);
  await write(flowNew, [1000, 1810, 2400, 3000, 3600, 4000], [-1, 7200, 7200, 7200, 7200, 7200]);
  await write(p2flow, [0, 3600], [100, 100]);

  t.test('the value before each interval weights its start (hand computation)', async (t) => {
    const [s] = await read('summary', { resolve: one('/Plant/A/P1', 'Setpoint'), start_ns: at(0), end_ns: at(100), interval: '50s', stats: ['count', 'first', 'min', 'twa', 'percent_good', 'duration_good_ns', 'duration_uncertain_ns', 'duration_bad_ns'] });
    t.equal(s.intervals!.length, 2);
    // [0, 50): 10 (from the point at -30 s) holds 0..20 s, then 20 holds 20..50 s: (10·20 + 20·30) / 50 = 16
    t.match(s.intervals![0], { start_ns: at(0), end_ns: at(50), count: 1, first: 20, min: 20, twa: 16, percent_good: 100, duration_good_ns: 50e9, duration_uncertain_ns: 0, duration_bad_ns: 0 });
    // [50, 100): 20 holds 50..70 s, 30 (uncertain) 70..100 s: (20·20 + 30·30) / 50 = 26
    t.match(s.intervals![1], { count: 1, first: 30, twa: 26, percent_good: 40, duration_good_ns: 20e9, duration_uncertain_ns: 30e9, duration_bad_ns: 0 });
    // without uncertain points the 20 holds on through [50, 100); the dropped point held 70..100 s of the window
    const [f] = await read('summary', { resolve: one('/Plant/A/P1', 'Setpoint'), start_ns: at(0), end_ns: at(100), interval: '50s', stats: ['count', 'twa', 'duration_uncertain_ns'], exclude_quality: 'bad_and_uncertain' });
    t.match(f.intervals![1], { count: 0, twa: 20, duration_uncertain_ns: 0 });
    t.equal(f.provenance.percent_time_filtered, 30);
    const [c] = await read('summary', { resolve: one('/Plant/A/P1', 'Temp'), start_ns: at(0), end_ns: at(100), interval: 50n * SEC, stats: ['twa', 'mean', 'range', 'stddev', 'count'] });
    // continuous: the line from (-10 s, 0) to (10 s, 20) enters at 10; [0, 50): (150 + 1600) / 50 = 35; [50, 100): (650 + 2000) / 50 = 53
    t.ok(close(c.intervals![0].twa, 35), `twa ${c.intervals![0].twa} = 35, not the 40 that weighting from the first point gives`);
    t.ok(close(c.intervals![1].twa, 53), `twa ${c.intervals![1].twa} = 53`);
    t.match(c.intervals![0], { count: 1, mean: 20, range: 0, stddev: null });
    t.match(c.intervals![1], { count: 1, mean: 70 });
    t.same(c.provenance.window_resolved, { start_ns: at(0), end_ns: at(100) });
  });

  t.test('a total integrates the flow in the registry units: m³/h totals to m³', async (t) => {
    const [p2] = await read('summary', { resolve: one('/Plant/B/P2', 'Flow'), start_ns: at(0), end_ns: at(3600), interval: '1h', stats: ['total', 'twa'] });
    t.equal(p2.total_unit_id, M3);
    t.equal(p2.unit_id, M3H);
    t.ok(close(p2.intervals![0].total, 100), `100 m³/h for one hour is 100 m³ (${p2.intervals![0].total})`);
    t.ok(close(p2.intervals![0].twa, 100));
    const [inS] = await read('summary', { resolve: one('/Plant/B/P2', 'Flow'), start_ns: at(0), end_ns: at(3600), interval: '30m', stats: ['total', 'twa'], units: { default: M3S } });
    t.equal(inS.unit_id, M3S);
    t.ok(close(inS.intervals![0].twa, 100 / 3600), 'twa in the unit asked for');
    t.ok(close(inS.intervals![0].total, 50), 'the total stays in m³ whatever unit the values are read in');
    const [tmp] = await read('summary', { resolve: one('/Plant/A/P1', 'Temp'), start_ns: at(0), end_ns: at(100), interval: '100s', stats: ['total'] });
    t.equal(tmp.total_unit_id, null, 'a temperature integrates to nothing');
    t.equal(tmp.intervals![0].total, null);
  });

  t.test('a summary across a sensor swap stitches the two meters', async (t) => {
    const [s] = await read('summary', { resolve: one('/Plant/A/P1', 'Flow'), start_ns: at(0), end_ns: at(3600), interval: '30m', stats: ['count', 'min', 'max', 'first', 'last', 'twa', 'total'] });
    // [0, 1800): old meter 0..1790 s at 3600; the line from (1790, 3600) to the new meter's (1810, 7200) crosses the swap
    t.match(s.intervals![0], { count: 4, min: 3600, max: 3600, first: 3600, last: 3600 });
    t.match(s.intervals![1], { count: 3, min: 7200, max: 7200, first: 7200, last: 7200 }, 'neither the old meter after the swap nor the new one before it');
    const area0 = 3600 * 1790 + (3600 + 5400) / 2 * 10; // m³/h x s, to 1800 s
    const area1 = (5400 + 7200) / 2 * 10 + 7200 * 1790;
    t.ok(close(s.intervals![0].twa, area0 / 1800), `twa ${s.intervals![0].twa}`);
    t.ok(close(s.intervals![1].twa, area1 / 1800), `twa ${s.intervals![1].twa}`);
    t.ok(close(s.intervals![0].total, area0 / 3600), 'total in m³');
    t.ok(close(s.intervals![1].total, area1 / 3600));
    // the same over a day of 1-hour intervals (interior hours from the rollups where a bucket is inside one binding)
    const [d] = await read('summary', { resolve: one('/Plant/A/P1', 'Flow'), start_ns: at(0), end_ns: at(3600), interval: '1h', stats: ['count', 'twa'] });
    t.match(d.intervals![0], { count: 7 });
    t.ok(close(d.intervals![0].twa, (area0 + area1) / 3600));
  });

  t.test('a render across a swap equals the render of the union of the two meters', async (t) => {
    const union = await series('p1/flow-union');
    await write(union, [-60, 0, 600, 1200, 1790, 1810, 2400, 3000, 3600, 4000], [3600, 3600, 3600, 3600, 3600, 7200, 7200, 7200, 7200, 7200]);
    for (const q of [{ width: 7 }, { width: 500 }, { width: 9, mode: 'minmax-band' }, { width: 13, mode: 'minmax-band', stat: 'twa' }, { width: 4, mode: 'minmax-band', stat: 'count' }]) {
      const [r] = await read('render', { resolve: one('/Plant/A/P1', 'Flow'), start_ns: at(0), end_ns: at(3000), ...q });
      const params = new URLSearchParams({ start_ns: String(at(0)), end_ns: String(at(3000)), ...Object.fromEntries(Object.entries(q).map(([k, v]) => [k, String(v)])) });
      const want = (await admin(`/v1/series/${union}/render?${params}`)).json as Record<string, unknown>;
      const got = r.render!;
      for (const k of ['t_ms', 'v', 'v_min', 'v_max', 'v_stat']) t.same(got[k], want[k], `${JSON.stringify(q)}: ${k} equals the union's`);
      t.same((got.transitions as Array<{ kind: string }>).map((x) => x.kind), ['binding'], 'the swap is a transition');
    }
  });

  t.test('attributes the caller may not read are absent from summaries and renders', async (t) => {
    const id = await createPerson(admin, 'reader-a', 'reader password 1');
    await grantRole(admin, id, 'viewer', { kind: 'asset', asset_id: areaA.asset_id });
    const reader = await login(svc.url, 'reader-a', 'reader password 1');
    const flows = { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { under: { kind: 'path', content: '/Plant' } } };
    const all = await read('summary', { resolve: flows, start_ns: at(0), end_ns: at(3600), interval: '1h', stats: ['count'] });
    t.equal(all.length, 2);
    const mine = await read('summary', { resolve: flows, start_ns: at(0), end_ns: at(3600), interval: '1h', stats: ['count'] }, reader);
    t.same(mine.map((i) => i.attribute_id), [attr('/Plant/A/P1', 'Flow')]);
    const rendered = await read('render', { resolve: flows, start_ns: at(0), end_ns: at(3600), width: 10 }, reader);
    t.same(rendered.map((i) => i.attribute_id), [attr('/Plant/A/P1', 'Flow')]);
  });

  t.test('many attributes are split over the workers and joined into one answer (JSON and msgpack)', async (t) => {
    const N = 40;
    const rack = await ok<{ template_id: string }>('/v1/model/templates', { name: 'Rack', attributes: Array.from({ length: N }, (_, i) => def(`C${String(i).padStart(2, '0')}`, 'continuous', null, null)) }, 201);
    const r1 = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'R1', parent: plant.asset_id, template_id: rack.template_id });
    const cells = (await ok<{ results: Array<{ attribute_id: string; name: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: r1.asset_id } } })).results;
    t.equal(cells.length, N);
    for (const [i, c] of cells.entries()) {
      const s = await series(`r1/c${i}`);
      await bind(c.attribute_id, s, at(-100));
      await write(s, [0, 60], [i, i]);
    }
    const body = { resolve: { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: r1.asset_id } } }, start_ns: at(0), end_ns: at(60) };
    const json = await read('summary', { ...body, interval: '30s', stats: ['twa', 'count'] });
    t.equal(json.length, N);
    t.same(json.map((i) => i.attribute_id), cells.map((c) => c.attribute_id), 'in path order');
    t.ok(json.every((i) => close(i.intervals![0].twa, Number(cells.findIndex((c) => c.attribute_id === i.attribute_id)))), 'each item its own values');
    const signin = await request(`${svc.url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } });
    const unpack = new Unpackr({ int64AsType: 'bigint', useRecords: false });
    for (const [route, extra] of [['summary', { interval: '30s', stats: ['twa'] }], ['render', { width: 10 }]] as const) {
      const res = await fetch(`${svc.url}/v1/read/${route}`, {
        method: 'POST', body: stringifyJson({ ...body, ...extra }),
        headers: { cookie: sessionCookieOf(signin), accept: 'application/x-msgpack', 'content-type': 'application/json' },
      });
      t.equal(res.status, 200);
      t.equal(res.headers.get('content-type'), 'application/x-msgpack');
      const items = unpack.unpack(new Uint8Array(await res.arrayBuffer())) as Item[];
      t.same(items.map((i) => i.attribute_id), cells.map((c) => c.attribute_id), `${route}: ${N} items joined in order`);
    }
  });

  t.test('provenance says how many chunks rollups and headers spared', async (t) => {
    // P2's temperature: 4 days of 20 s points from a midnight, sealed into chunks
    const dense = await series('p2/temp-dense');
    await bind(attr('/Plant/B/P2', 'Temp'), dense, at(-100_000));
    const day = 86_400, d0 = Number((86_400n * SEC - (T0 % (86_400n * SEC))) / SEC); // the first midnight after T0, in s from T0
    const secs = Array.from({ length: 4 * day / 20 }, (_, i) => d0 + i * 20);
    await write(dense, secs, secs.map((_, i) => Math.round(Math.sin(i / 200) * 1000) / 10 + 20));
    await parts.storage.sealHeads(0);
    const body = { resolve: one('/Plant/B/P2', 'Temp'), start_ns: at(d0), end_ns: at(d0 + 4 * day), interval: '1d' };
    const [days] = await read('summary', { ...body, stats: ['count', 'twa'] });
    t.same(days.intervals!.map((i) => i.count), [4320, 4320, 4320, 4320]);
    const pruned = days.provenance.chunks_pruned as number;
    t.ok(pruned > 0, `${pruned} chunks spared by the rollups`);
    t.match(days.provenance.computed, /^summary: 2 day rollups, \d+ hour rollups, \d+ raw points$/, 'the two interior days from their day rows');
    const [raw] = await read('summary', { ...body, stats: ['count', 'mean'] });
    t.equal(raw.provenance.chunks_pruned, 0, 'a mean reads every point: nothing spared');
    t.same(raw.intervals!.map((i) => i.count), [4320, 4320, 4320, 4320]);
    const [r] = await read('render', { resolve: body.resolve, start_ns: body.start_ns, end_ns: body.end_ns, width: 4 });
    t.ok((r.provenance.chunks_pruned as number) > 0, `render: ${String(r.provenance.chunks_pruned)} chunks answered by their headers`);
    const [wide] = await read('render', { resolve: body.resolve, start_ns: body.start_ns, end_ns: body.end_ns, width: 100_000 });
    t.ok((wide.provenance.chunks_pruned as number) < (r.provenance.chunks_pruned as number), 'fewer at a width where chunks span columns');
  });

  t.test('bad requests are 400s naming the field', async (t) => {
    const body = { resolve: one('/Plant/A/P1', 'Temp'), start_ns: at(0), end_ns: at(100) };
    for (const [b, field] of [
      [{ ...body, interval: '5 minutes', stats: ['count'] }, 'interval'],
      [{ ...body, interval: '1m', stats: ['median'] }, 'stats'],
      [{ ...body, interval: '1m', stats: [] }, 'stats'],
      [{ ...body, interval: '1ns', stats: ['count'] }, 'interval'],
      [{ ...body, end_ns: at(-1), interval: '1m', stats: ['count'] }, 'end_ns'],
    ] as const) {
      const r = await admin('/v1/read/summary', { method: 'POST', body: b });
      t.equal(r.status, 400, `${JSON.stringify(b.stats)} ${String(b.interval)}`);
      t.match(r.text, field);
    }
    const r = await admin('/v1/read/render', { method: 'POST', body: { ...body, width: 10, stat: 'twa' } });
    t.equal(r.status, 400);
    t.match(r.text, 'stat');
  });
});
