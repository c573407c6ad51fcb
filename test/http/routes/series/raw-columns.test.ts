import t from 'tap';
import { Unpackr } from 'msgpackr';
import { startTestService, request } from '../../../helpers/service.js';
import { parsePackRef } from '../../../../src/storage/tail-packs.js';
import { columnPoints, jsonColumnPoints, type ColumnsBody, type JsonColumnsBody } from '../../../helpers/raw-columns-decode.js';

const BASE = 1_700_000_000_123_456_789n;
const MS = 1_000_000n;
const N = 5_000;
const PAGE = 777;
const unpack = new Unpackr({ int64AsType: 'bigint', useRecords: false, mapsAsObjects: true });
const ENUM_SET = '0b6c5a1e-8f61-4a53-9d4a-2f1f3c4e5d6f';

/** A point as comparable text: exact time, value (int64 as digits, -0 kept) and quality. */
const key = (ts: bigint | number, v: unknown, q: number) =>
  JSON.stringify([String(ts), typeof v === 'number' && Object.is(v, -0) ? '-0' : v, q], (_, x) => (typeof x === 'bigint' ? String(x) : x));

t.test('layout=columns over real HTTP, msgpack and JSON, decodes to exactly the points of the rows layout, every value type, cursor paging included', async (t) => {
  const svc = await startTestService(t);
  const parts = svc.service.context.parts;
  const who = { principal: 'tester' };
  const mk = (name: string, valueType: 'float64' | 'int64' | 'boolean' | 'string' | 'enum') =>
    parts.series.create({ sourceName: name, valueType, ...(valueType === 'enum' ? { enumSet: { id: ENUM_SET, ordinals: [0, 1, 2, 300] } } : {}) }, who);
  const flow = await mk('plant/flow', 'float64');
  const count = await mk('plant/count', 'int64');
  const run = await mk('plant/run', 'boolean');
  const batch = await mk('plant/batch', 'string');
  const state = await mk('plant/state', 'enum');
  const smallState = await mk('plant/small-state', 'enum');

  const times = new BigInt64Array(N), quality = new Uint32Array(N).fill(192), wideQuality = new Uint32Array(N).fill(192);
  const f64 = new Float64Array(N), i64 = new BigInt64Array(N), u8 = new Uint8Array(N), ord = new Int32Array(N), smallOrd = new Int32Array(N);
  const str: string[] = [];
  for (let i = 0; i < N; i++) {
    times[i] = BASE + BigInt(i) * 250n * MS + BigInt(i % 7); // not whole milliseconds
    f64[i] = Math.round(Math.sin(i / 30) * 1e5) / 100;
    i64[i] = -9_007_199_254_740_993n + BigInt(i) * 1_000_000_007n; // beyond 2^53 either side
    u8[i] = (i >> 3) & 1;
    ord[i] = [0, 1, 2, 300][i % 4]; // 300 does not fit a byte: int32le
    smallOrd[i] = i % 3;
    str.push(i % 11 === 0 ? `batch "${i}" ü€` : `b${i}`);
    if (i % 97 === 0) { quality[i] = 0; wideQuality[i] = 0x10000 + i; }
  }
  f64[3] = -0;
  const w = await parts.storage.write([
    { series: flow.id, times, values: f64, quality },
    { series: count.id, times, values: i64, quality: wideQuality },
    { series: run.id, times, values: u8, quality },
    { series: batch.id, times, values: str, quality },
    { series: state.id, times, values: ord, quality },
    { series: smallState.id, times, values: smallOrd, quality: wideQuality },
  ], who);
  t.equal(w.refused, 0, 'every point was accepted');
  await parts.storage.sealHeads(0);
  let packed = 0;
  for (const { value } of parts.storage.env.chunks.getRange({})) if (parsePackRef(value) !== null) packed++;
  // (a last chunk that fills its page stays plain: five of the six here)
  t.ok(packed >= 2, `last chunks share a tail pack (${packed} packed): the reads below resolve them in the read workers`);
  // a head after the sealed chunks: pages cross from chunks into the open head
  const later = BigInt64Array.from([BASE + BigInt(N) * 250n * MS]);
  await parts.storage.write([{ series: flow.id, times: later, values: Float64Array.from([1.5]), quality: Uint32Array.from([192]) }], who);
  const end = BASE + BigInt(N + 1) * 250n * MS;

  const cases = [
    [flow, 'float64le', 'uint8'], [count, 'int64le', 'uint32le'], [run, 'uint8', 'uint8'],
    [batch, 'string', 'uint8'], [state, 'int32le', 'uint8'], [smallState, 'uint8', 'uint32le'],
  ] as const;
  for (const [s, valueEncoding, qualityEncoding] of cases) {
    const rows: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await request(`${svc.url}/v1/series/${s.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`);
      t.equal(r.status, 200);
      const b = r.json as { points: Array<{ ts_ns: bigint | number; value: unknown; quality: number }>; next_cursor: string | null };
      // the lossless JSON parser gives int64 values within 2^53 as numbers
      // rows name each enum member too (`member`); the columns layouts carry bare ordinals with the set
      const same = (v: unknown) => s.valueType === 'int64' ? BigInt(v as number | bigint)
        : s.valueType === 'enum' ? { enum_set: (v as { enum_set: string }).enum_set, ordinal: (v as { ordinal: number }).ordinal } : v;
      for (const p of b.points) rows.push(key(p.ts_ns, same(p.value), p.quality));
      cursor = b.next_cursor;
    } while (cursor !== null);

    const cols: string[] = [];
    const encodings = new Set<string>();
    let pages = 0;
    cursor = null;
    do {
      const res = await fetch(`${svc.url}/v1/series/${s.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=${PAGE}&layout=columns${cursor ? `&cursor=${cursor}` : ''}`, { headers: { accept: 'application/x-msgpack' } });
      t.equal(res.status, 200);
      t.equal(res.headers.get('content-type'), 'application/x-msgpack');
      const b = unpack.unpack(Buffer.from(await res.arrayBuffer())) as ColumnsBody;
      t.equal(b.series, s.id);
      t.equal(b.layout, 'columns');
      t.equal(b.value_type, s.valueType);
      t.equal(b.enum_set, s.valueType === 'enum' ? ENUM_SET : null);
      encodings.add(`${b.encoding.value}/${b.encoding.quality}`);
      for (const p of columnPoints(b)) cols.push(key(p.ts_ns, p.value, p.quality));
      cursor = b.next_cursor;
      pages++;
    } while (cursor !== null);
    const jsonCols: string[] = [];
    let jsonPages = 0;
    cursor = null;
    do {
      const r = await request(`${svc.url}/v1/series/${s.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=${PAGE}&layout=columns${cursor ? `&cursor=${cursor}` : ''}`);
      t.equal(r.status, 200);
      t.match(r.headers.get('content-type'), /^application\/json/);
      const b = r.json as JsonColumnsBody;
      t.same([b.series, b.layout, b.value_type, b.enum_set], [s.id, 'columns', s.valueType, s.valueType === 'enum' ? ENUM_SET : null]);
      if (jsonPages === 0) t.match(r.text, `"count":${b.count},"points":{"ts_ns":[`, `${s.sourceName}: plain JSON, no padding before the count`);
      for (const p of jsonColumnPoints(b)) jsonCols.push(key(p.ts_ns, p.value, p.quality));
      cursor = b.next_cursor;
      jsonPages++;
    } while (cursor !== null);
    t.equal(jsonPages, pages, `${s.sourceName}: JSON columns page as msgpack columns do`);
    t.ok(jsonCols.length === rows.length && jsonCols.every((k, i) => k === rows[i]), `${s.sourceName}: JSON columns hold exactly the rows layout's points, in order`);
    t.ok(rows.length >= N, `${s.sourceName}: ${rows.length} points`);
    t.equal(pages, Math.ceil(rows.length / PAGE) + (rows.length % PAGE === 0 ? 1 : 0), `${s.sourceName}: one page per ${PAGE} points`);
    t.ok(cols.length === rows.length && cols.every((k, i) => k === rows[i]), `${s.sourceName}: columns hold exactly the JSON layout's points, in order`);
    t.ok(encodings.has(`${valueEncoding}/${qualityEncoding}`), `${s.sourceName}: ${[...encodings].join(', ')} includes ${valueEncoding}/${qualityEncoding}`);
  }

  t.test('an empty range is a page of zero-length columns', async (t) => {
    const res = await fetch(`${svc.url}/v1/series/${flow.id}/raw?start_ns=1&end_ns=2&layout=columns`, { headers: { accept: 'application/x-msgpack' } });
    const b = unpack.unpack(Buffer.from(await res.arrayBuffer())) as ColumnsBody;
    t.equal(b.count, 0);
    t.same(columnPoints(b), []);
    t.equal(b.next_cursor, null);
    const j = await request(`${svc.url}/v1/series/${flow.id}/raw?start_ns=1&end_ns=2&layout=columns`);
    t.same((j.json as JsonColumnsBody).points, { ts_ns: [], value: [], quality: [] }, 'JSON: three empty arrays');
    t.equal((j.json as JsonColumnsBody).count, 0);
    t.match(j.text, '"count":0,"points":{"ts_ns":[],"value":[],"quality":[]}', 'JSON: plain, no padding');
  });

  t.test('layout is checked: an unknown layout is a 400 naming query.layout', async (t) => {
    for (const [q, accept] of [['layout=grid', undefined], ['layout=grid', 'application/x-msgpack'], ['layout=', 'application/json']] as const) {
      const r = await request(`${svc.url}/v1/series/${flow.id}/raw?start_ns=${BASE}&end_ns=${end}&${q}`, { headers: accept ? { accept } : {} });
      t.equal(r.status, 400, `${q} with ${accept ?? 'no Accept'}`);
      t.match(JSON.stringify(r.json), /query\.layout|\/layout/, 'the envelope names the field');
    }
    const rows = await fetch(`${svc.url}/v1/series/${flow.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=2&layout=rows`, { headers: { accept: 'application/x-msgpack' } });
    const b = unpack.unpack(Buffer.from(await rows.arrayBuffer())) as { points: unknown[] };
    t.equal(b.points.length, 2, 'layout=rows is the default shape');
  });

  t.test('the contract declares the layout parameter and the columnar msgpack body', async (t) => {
    const c = (await request(`${svc.url}/v1/openapi.json`)).json as { paths: Record<string, { get: { parameters: Array<{ name: string }>; responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>; components: { schemas: Record<string, unknown> } };
    const op = c.paths['/v1/series/{uuid}/raw'].get;
    t.ok(op.parameters.some((p) => p.name === 'layout'));
    t.match(JSON.stringify(op.responses['200'].content['application/x-msgpack'].schema), /RawColumns/);
    t.match(JSON.stringify(op.responses['200'].content['application/json'].schema), /RawColumnsJson/);
    t.ok(c.components.schemas.RawColumns, 'RawColumns is a component');
    t.ok(c.components.schemas.RawColumnsJson, 'RawColumnsJson is a component');
  });
});
