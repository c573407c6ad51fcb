// Issue 32, items 13-15, over real HTTP on real LMDB: the snapshot as of an instant and
// unknown query parameters refused on every series route, enum points with their member
// names, and the series listing searched by a part of the source name.
import t from 'tap';
import { Unpackr } from 'msgpackr';
import { startTestService, request } from '../helpers/service.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const BASE = 1_700_000_000_000_000_000n;
const SEC = 1_000_000_000n;
const unpack = new Unpackr({ int64AsType: 'bigint', useRecords: false });

t.test('the first hour with one series', async (t) => {
  const svc = await startTestService(t);
  const parts = svc.service.context.parts;
  const who = { principal: 'tester' };
  const get = (path: string, headers: Record<string, string> = {}) => request(`${svc.url}${path}`, { headers });
  const set = (await request(`${svc.url}/v1/model/registries/enum-sets/entries`, {
    method: 'POST', body: { name: 'Pump state', members: [{ ordinal: 0, name: 'stopped' }, { ordinal: 1, name: 'running' }, { ordinal: 2, name: 'tripped "hard"' }] },
  })).json as Json;
  const flow = await parts.series.create({ sourceName: 'sim-1/plant/analog/FT-101', valueType: 'float64' }, who);
  const temp = await parts.series.create({ sourceName: 'sim-1/plant/analog/TT-102', valueType: 'float64' }, who);
  const text = await parts.series.create({ sourceName: 'sim-1/lab/batch', valueType: 'string' }, who);
  const state = await parts.series.create({ sourceName: 'sim-1/plant/digital/P-101.state', valueType: 'enum', enumSet: { id: set.id, ordinals: [0, 1, 2, 3] } }, who);
  const times = new BigInt64Array([BASE, BASE + 10n * SEC, BASE + 20n * SEC, BASE + 30n * SEC]);
  const quality = new Uint32Array([192, 192, 192, 192]);
  const w = await parts.storage.write([
    { series: flow.id, times, values: new Float64Array([1.5, 2.5, 3.5, 4.5]), quality },
    { series: text.id, times, values: ['a', 'b', 'c', 'd'], quality },
    { series: state.id, times, values: new Int32Array([0, 1, 2, 3]), quality },
  ], who);
  t.equal(w.refused, 0);

  t.test('snapshot answers the value as of an instant: the latest point at or before it', async (t) => {
    const latest = (await get(`/v1/series/${flow.id}/snapshot`)).json as Json;
    t.equal(latest.snapshot.value, 4.5);
    const between = (await get(`/v1/series/${flow.id}/snapshot?as_of_ns=${BASE + 15n * SEC}`)).json as Json;
    t.equal(BigInt(between.snapshot.ts_ns), BASE + 10n * SEC);
    t.equal(between.snapshot.value, 2.5);
    const exact = (await get(`/v1/series/${flow.id}/snapshot?as_of_ns=${BASE + 20n * SEC}`)).json as Json;
    t.equal(exact.snapshot.value, 3.5, 'a point at the instant counts');
    const before = (await get(`/v1/series/${flow.id}/snapshot?as_of_ns=${BASE - 1n}`)).json as Json;
    t.equal(before.snapshot, null, 'nothing before the first point');
    const str = (await get(`/v1/series/${text.id}/snapshot?as_of_ns=${BASE + 25n * SEC}`)).json as Json;
    t.equal(str.snapshot.value, 'c', 'strings keep their value');
    const empty = (await get(`/v1/series/${temp.id}/snapshot?as_of_ns=${BASE}`)).json as Json;
    t.equal(empty.snapshot, null);
    const bad = await get(`/v1/series/${flow.id}/snapshot?as_of_ns=yesterday`);
    t.equal(bad.status, 400);
    t.match((bad.json as Json).error, /as_of_ns/);
  });

  t.test('snapshot reads sealed chunks too', async (t) => {
    const sealed = await parts.series.create({ sourceName: 'sim-1/plant/analog/PT-103', valueType: 'float64' }, who);
    const n = 70_000; // more than a chunk holds
    const ts = new BigInt64Array(n);
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) { ts[i] = BASE + BigInt(i) * SEC; v[i] = i; }
    await parts.storage.write([{ series: sealed.id, times: ts, values: v, quality: new Uint32Array(n).fill(192) }], who);
    await parts.storage.sealHeads(0); // every point now lies in sealed chunks
    for (const i of [0, 12_345, 65_535, 65_536, n - 1]) {
      const s = (await get(`/v1/series/${sealed.id}/snapshot?as_of_ns=${BASE + BigInt(i) * SEC + 1n}`)).json as Json;
      t.equal(s.snapshot.value, i, `as of just after point ${i}`);
    }
  });

  t.test('every series route refuses a query parameter it does not know, naming it', async (t) => {
    const routes = [
      `/v1/series/${flow.id}/snapshot?as_of=1`, `/v1/series/${flow.id}/finalised?x=1`, `/v1/series/${flow.id}/lifecycle-policy?x=1`,
      `/v1/series/${flow.id}/raw?start_ns=0&end_ns=1&x=1`, `/v1/series/${flow.id}/chunks?x=1`, `/v1/series/${flow.id}/gaps?start_ns=0&end_ns=1&x=1`,
      `/v1/series/${flow.id}/rollups?start_ns=0&end_ns=1&interval=1h&x=1`, `/v1/series/${flow.id}/raw-audit?start_ns=0&end_ns=1&x=1`,
      `/v1/series/${flow.id}/render?start_ns=0&end_ns=1&width=10&x=1`, '/v1/series?x=1',
    ];
    for (const path of routes) {
      const r = await get(path);
      t.equal(r.status, 400, path);
      t.match(r.json, { code: 'invalid-request' }, path);
    }
    const put = await request(`${svc.url}/v1/series/${flow.id}/writable-class?force=1`, { method: 'PUT', body: { writable_class: 'manual' } });
    t.equal(put.status, 400, 'PUT writable-class too');
  });

  t.test('routes of other areas that take no query parameters refuse one, naming it', async (t) => {
    for (const path of ['/v1/model/tree?as_of=1', '/v1/auth/whoami?x=1&y=2', '/v1/collectors?verbose=true']) {
      const r = await get(path);
      t.equal(r.status, 400, path);
      const errors = (r.json as { details: { errors: Array<{ field: string }> } }).details.errors;
      t.equal(errors[0].field, `query.${path.split('?')[1].split('=')[0]}`, `${path} names the parameter`);
    }
    t.equal((await get('/v1/model/tree')).status, 200, 'the same route without one answers');
  });

  t.test('a forged raw cursor whose time is past int64 is 400 invalid-cursor', async (t) => {
    const forged = Buffer.from(JSON.stringify([`series-raw:${flow.id}`, '9999999999999999999'])).toString('base64url');
    const r = await get(`/v1/series/${flow.id}/raw?start_ns=0&end_ns=1&cursor=${forged}`);
    t.equal(r.status, 400);
    t.match(r.json, { code: 'invalid-cursor' });
  });

  t.test('enum points carry their member name in raw rows (JSON and msgpack) and the snapshot', async (t) => {
    const raw = (await get(`/v1/series/${state.id}/raw?start_ns=${BASE}&end_ns=${BASE + 60n * SEC}`)).json as Json;
    t.same(raw.points.map((p: Json) => p.value), [
      { enum_set: set.id, ordinal: 0, member: 'stopped' }, { enum_set: set.id, ordinal: 1, member: 'running' },
      { enum_set: set.id, ordinal: 2, member: 'tripped "hard"' }, { enum_set: set.id, ordinal: 3, member: null },
    ], 'an ordinal the set does not name has member null');
    const mp = await fetch(`${svc.url}/v1/series/${state.id}/raw?start_ns=${BASE}&end_ns=${BASE + 60n * SEC}`, { headers: { accept: 'application/x-msgpack' } });
    const body = unpack.unpack(new Uint8Array(await mp.arrayBuffer())) as Json;
    t.same(body.points.map((p: Json) => p.value.member), ['stopped', 'running', 'tripped "hard"', null]);
    t.same(body.points[1].value, { enum_set: set.id, ordinal: 1, member: 'running' });
    const snap = (await get(`/v1/series/${state.id}/snapshot?as_of_ns=${BASE + 15n * SEC}`)).json as Json;
    t.same(snap.snapshot.value, { enum_set: set.id, ordinal: 1, member: 'running' });
    const cols = (await get(`/v1/series/${state.id}/raw?start_ns=${BASE}&end_ns=${BASE + 60n * SEC}&layout=columns`)).json as Json;
    t.same(cols.points.value, [0, 1, 2, 3], 'the columns layout keeps bare ordinals with its enum_set');
    t.equal(cols.enum_set, set.id);
  });

  t.test('GET /v1/series finds a part of the source name, ignoring case', async (t) => {
    const names = async (q: string) => ((await get(`/v1/series?${q}`)).json as Json).items.map((i: Json) => i.source_name);
    t.same(await names('name_contains=plant/analog'), ['sim-1/plant/analog/FT-101', 'sim-1/plant/analog/PT-103', 'sim-1/plant/analog/TT-102']);
    t.same(await names('name_contains=PLANT/ANALOG/ft'), ['sim-1/plant/analog/FT-101']);
    t.same(await names('name_contains=plant&value_type=enum'), ['sim-1/plant/digital/P-101.state']);
    t.same(await names('name_contains=%25'), [], 'LIKE wildcards are plain characters');
    t.same(await names('name_contains=_'), [], 'and so is _');
    const page1 = (await get('/v1/series?name_contains=analog&limit=2')).json as Json;
    t.equal(page1.items.length, 2);
    const page2 = (await get(`/v1/series?name_contains=analog&limit=2&cursor=${page1.next_cursor}`)).json as Json;
    t.same(page2.items.map((i: Json) => i.source_name), ['sim-1/plant/analog/TT-102'], 'paging keeps the filter');
    t.same(await names('name_prefix=plant/analog'), [], 'name_prefix is still a byte prefix');
  });
});
