import t from 'tap';
import { Unpackr } from 'msgpackr';
import { startTestService, request } from '../helpers/service.js';

const BASE = 1_700_000_000_123_456_789n;
const SEC = 1_000_000_000n;
const unpack = new Unpackr({ int64AsType: 'bigint', useRecords: false });

t.test('series-storage routes over real HTTP on real LMDB', async (t) => {
  const svc = await startTestService(t);
  const parts = svc.service.context.parts;
  const who = { principal: 'tester' };
  const flow = await parts.series.create({ sourceName: 'plant/flow', valueType: 'float64' }, who);
  const count = await parts.series.create({ sourceName: 'plant/counter', valueType: 'int64' }, who);
  const text = await parts.series.create({ sourceName: 'plant/batch', valueType: 'string' }, who);
  const state = await parts.series.create({ sourceName: 'other/state', valueType: 'enum', enumSet: { id: '0b6c5a1e-8f61-4a53-9d4a-2f1f3c4e5d6f', ordinals: [0, 1, 2] } }, who);

  const n = 1000;
  const times = new BigInt64Array(n);
  const f64 = new Float64Array(n);
  const i64 = new BigInt64Array(n);
  const ord = new Int32Array(n);
  const quality = new Uint32Array(n).fill(192);
  for (let i = 0; i < n; i++) {
    times[i] = BASE + BigInt(i) * SEC;
    f64[i] = Math.round((20 + Math.sin(i / 10) * 5) * 100) / 100;
    i64[i] = 9_007_199_254_740_993n + BigInt(i); // beyond 2^53: must stay exact
    ord[i] = i % 3;
  }
  quality[7] = 0;
  f64[8] = -0.125;
  const w = await parts.storage.write([
    { series: flow.id, times, values: f64, quality },
    { series: count.id, times, values: i64, quality },
    { series: text.id, times: times.slice(0, 3), values: ['a', 'b "quoted"', 'ü'], quality: quality.slice(0, 3) },
    { series: state.id, times, values: ord, quality },
  ], who);
  t.equal(w.refused, 0, 'every point was accepted');
  const end = BASE + BigInt(n) * SEC;

  t.test('GET /v1/series lists records with filters and cursor paging', async (t) => {
    const all = await request(`${svc.url}/v1/series`);
    t.equal(all.status, 200);
    const body = all.json as { items: Array<{ source_name: string; placement: string; value_type: string }>; next_cursor: string | null };
    t.same(body.items.map((i) => i.source_name), ['other/state', 'plant/batch', 'plant/counter', 'plant/flow'], 'source-name order');
    t.ok(body.items.every((i) => i.placement === 'staging'), 'unbound series are in staging');
    const prefixed = (await request(`${svc.url}/v1/series?name_prefix=plant/&value_type=float64`)).json as typeof body;
    t.same(prefixed.items.map((i) => i.source_name), ['plant/flow']);
    const p1 = (await request(`${svc.url}/v1/series?limit=3`)).json as typeof body;
    t.equal(p1.items.length, 3);
    t.type(p1.next_cursor, 'string');
    const p2 = (await request(`${svc.url}/v1/series?limit=3&cursor=${p1.next_cursor}`)).json as typeof body;
    t.same(p2.items.map((i) => i.source_name), ['plant/flow']);
    t.equal(p2.next_cursor, null, 'the last page has no cursor');
    const bound = (await request(`${svc.url}/v1/series?placement=bound`)).json as typeof body;
    t.same(bound.items, [], 'no series is bound yet');
    const bad = await request(`${svc.url}/v1/series?cursor=nope!`);
    t.equal(bad.status, 400);
    t.equal((bad.json as { code: string }).code, 'invalid-cursor');
  });

  t.test('raw returns exact times, values and qualities, and pages with a cursor', async (t) => {
    const r = await request(`${svc.url}/v1/series/${flow.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=600`);
    t.equal(r.status, 200);
    const b = r.json as { points: Array<{ ts_ns: bigint | number; value: number; quality: number }>; next_cursor: string };
    t.equal(b.points.length, 600);
    t.equal(BigInt(b.points[0].ts_ns), BASE, 'the first time is exact to the ns');
    t.equal(b.points[7].quality, 0);
    t.ok(Object.is(b.points[8].value, -0.125));
    for (let i = 0; i < 600; i++) if (b.points[i].value !== f64[i] || BigInt(b.points[i].ts_ns) !== times[i]) { t.fail(`point ${i} differs`); break; }
    const r2 = await request(`${svc.url}/v1/series/${flow.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=600&cursor=${b.next_cursor}`);
    const b2 = r2.json as typeof b;
    t.equal(b2.points.length, 400, 'the second page holds the rest');
    t.equal(BigInt(b2.points[0].ts_ns), times[600]);
    t.equal(b2.next_cursor, null);
    const other = await request(`${svc.url}/v1/series/${count.id}/raw?start_ns=${BASE}&end_ns=${end}&cursor=${b.next_cursor}`);
    t.equal(other.status, 400, 'a cursor of another series is refused');
  });

  t.test('raw keeps int64 values beyond 2^53 exact, in JSON and msgpack', async (t) => {
    const r = await request(`${svc.url}/v1/series/${count.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=5`);
    const b = r.json as { points: Array<{ value: bigint }> };
    t.equal(b.points[0].value, 9_007_199_254_740_993n);
    const res = await fetch(`${svc.url}/v1/series/${count.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=5`, { headers: { accept: 'application/x-msgpack' } });
    t.equal(res.headers.get('content-type'), 'application/x-msgpack');
    const m = unpack.unpack(new Uint8Array(await res.arrayBuffer())) as { points: Array<{ ts_ns: bigint; value: bigint; quality: number }>; series: string; next_cursor: string };
    t.equal(m.series, count.id);
    t.equal(m.points.length, 5);
    t.equal(m.points[0].ts_ns, BASE, 'msgpack times are int64');
    t.equal(m.points[4].value, 9_007_199_254_740_997n);
    t.type(m.next_cursor, 'string');
  });

  t.test('msgpack raw of a float series has the same shape as JSON', async (t) => {
    const j = (await request(`${svc.url}/v1/series/${flow.id}/raw?start_ns=${BASE}&end_ns=${end}`)).json as { points: Array<{ ts_ns: bigint | number; value: number; quality: number }> };
    const res = await fetch(`${svc.url}/v1/series/${flow.id}/raw?start_ns=${BASE}&end_ns=${end}`, { headers: { accept: 'application/x-msgpack' } });
    const m = unpack.unpack(new Uint8Array(await res.arrayBuffer())) as { points: Array<{ ts_ns: bigint; value: number; quality: number }> };
    t.equal(m.points.length, n);
    t.same(m.points.map((p) => [p.ts_ns, p.value, p.quality]), j.points.map((p) => [BigInt(p.ts_ns), p.value, p.quality]));
  });

  t.test('raw of string and enum series', async (t) => {
    const s = (await request(`${svc.url}/v1/series/${text.id}/raw?start_ns=${BASE}&end_ns=${end}`)).json as { points: Array<{ value: string }> };
    t.same(s.points.map((p) => p.value), ['a', 'b "quoted"', 'ü']);
    const e = (await request(`${svc.url}/v1/series/${state.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=2`)).json as { points: Array<{ value: unknown }> };
    t.same(e.points[1].value, { enum_set: '0b6c5a1e-8f61-4a53-9d4a-2f1f3c4e5d6f', ordinal: 1, member: null }, 'a set the registry does not hold names no member');
  });

  t.test('bad input is a 400 ErrorEnvelope naming the field', async (t) => {
    const cases: Array<[string, string]> = [
      [`/v1/series/not-a-uuid/raw?start_ns=1&end_ns=2`, 'path.uuid'],
      [`/v1/series/${flow.id}/raw?start_ns=abc&end_ns=2`, 'query.start_ns'],
      [`/v1/series/${flow.id}/raw?end_ns=2`, 'query.start_ns'],
      [`/v1/series/${flow.id}/raw?start_ns=5&end_ns=2`, 'query.end_ns'],
      [`/v1/series/${flow.id}/raw?start_ns=1&end_ns=2&limit=0`, 'query.limit'],
      [`/v1/series/${flow.id}/render?start_ns=1&end_ns=2&width=-1`, 'query.width'],
      [`/v1/series/${flow.id}/render?start_ns=1&end_ns=2&width=10&mode=pie`, 'query.mode'],
      [`/v1/series/${flow.id}/render?start_ns=1&end_ns=2&width=10&mode=minmax-band&stat=median`, 'query.stat'],
      [`/v1/series/${flow.id}/rollups?start_ns=1&end_ns=2&interval=5m`, 'query.interval'],
    ];
    for (const [path, field] of cases) {
      const r = await request(svc.url + path);
      t.equal(r.status, 400, path);
      const env = r.json as { code: string; details?: { errors?: Array<{ field: string }> }; error: string };
      t.equal(env.code, 'invalid-request', path);
      const named = env.details?.errors?.some((e) => e.field.startsWith(field)) || env.error.includes(field);
      t.ok(named, `${path} names ${field}`);
    }
    const strRender = await request(`${svc.url}/v1/series/${text.id}/render?start_ns=${BASE}&end_ns=${end}&width=10`);
    t.equal(strRender.status, 400, 'a string series cannot be rendered');
    const missing = await request(`${svc.url}/v1/series/00000000-0000-4000-8000-000000000000/raw?start_ns=1&end_ns=2`);
    t.equal(missing.status, 404);
    t.equal((missing.json as { code: string }).code, 'not-found');
  });

  t.test('render answers M4 significant points and a min/max band, JSON and msgpack', async (t) => {
    const r = await request(`${svc.url}/v1/series/${flow.id}/render?start_ns=${BASE}&end_ns=${end}&width=10`);
    t.equal(r.status, 200);
    const b = r.json as { t_ms: number[]; v: number[]; provenance: { mode: string; percentGood: number; pointsScanned: number }; transitions: unknown[] };
    t.equal(b.provenance.mode, 'significant-points');
    t.equal(b.provenance.pointsScanned, n);
    t.ok(b.t_ms.length <= 4 * 10 + 2 && b.t_ms.length > 0);
    t.equal(b.t_ms.length, b.v.length);
    t.ok(Math.abs(b.t_ms[0] - Number(BASE) / 1e6) < 1e-3, 't_ms is float milliseconds');
    t.ok(b.provenance.percentGood > 99 && b.provenance.percentGood < 100, 'one bad point lowers percentGood');
    t.equal(Math.max(...b.v), Math.max(...f64), 'the maximum survives');
    t.equal(Math.min(...b.v), Math.min(...f64), 'the minimum survives');
    const band = (await request(`${svc.url}/v1/series/${flow.id}/render?start_ns=${BASE}&end_ns=${end}&width=10&mode=minmax-band&stat=count`)).json as { t_ms: number[]; v_min: number[]; v_max: number[]; v_stat: number[]; points_scanned: number };
    t.equal(band.t_ms.length, 10);
    t.equal(band.v_stat.reduce((a, x) => a + x, 0), n, 'counts per column add up to every point');
    const res = await fetch(`${svc.url}/v1/series/${flow.id}/render?start_ns=${BASE}&end_ns=${end}&width=10`, { headers: { accept: 'application/x-msgpack' } });
    const m = unpack.unpack(new Uint8Array(await res.arrayBuffer())) as typeof b;
    t.same(m.t_ms, b.t_ms);
    t.same(m.v, b.v);
  });

  t.test('snapshot, chunks, finalised, gaps, rollups and lifecycle policy', async (t) => {
    const snap = (await request(`${svc.url}/v1/series/${flow.id}/snapshot`)).json as { snapshot: { ts_ns: bigint; value: number } };
    t.equal(BigInt(snap.snapshot.ts_ns), times[n - 1]);
    t.equal(snap.snapshot.value, f64[n - 1]);
    const chunks = (await request(`${svc.url}/v1/series/${flow.id}/chunks`)).json as { chunks: Array<{ count: number; bytes: number }> };
    t.equal(chunks.chunks.reduce((a, c) => a + c.count, 0), n, 'chunks and head hold every point');
    const fin = (await request(`${svc.url}/v1/series/${flow.id}/finalised`)).json as { finalised_ns: unknown };
    t.equal(fin.finalised_ns, null);
    await parts.storage.setFinalised(flow.id, times[500]);
    const fin2 = (await request(`${svc.url}/v1/series/${flow.id}/finalised`)).json as { finalised_ns: bigint };
    t.equal(BigInt(fin2.finalised_ns), times[500]);
    await parts.storage.declareGap(flow.id, { startNs: times[100], endNs: times[101], reason: 'collector restart' });
    const gaps = (await request(`${svc.url}/v1/series/${flow.id}/gaps?start_ns=${BASE}&end_ns=${end}`)).json as { gaps: Array<{ kind: string; reason: string }>; cadence_ns: bigint | number };
    t.same(gaps.gaps.map((g) => [g.kind, g.reason]), [['declared', 'collector restart']]);
    t.equal(BigInt(gaps.cadence_ns), SEC);
    const roll = await request(`${svc.url}/v1/series/${flow.id}/rollups?start_ns=${BASE - 3600n * SEC}&end_ns=${end}&interval=1h`);
    t.equal(roll.status, 200);
    const rb = roll.json as { buckets: Array<{ count: number }> };
    t.equal(rb.buckets.reduce((a, x) => a + x.count, 0), n, 'hourly buckets count every point');

    const none = (await request(`${svc.url}/v1/series/${flow.id}/lifecycle-policy`)).json;
    t.same(none, { policy: null, version: null });
    const policy = { schema: 'service-lifecycle-policy/v1', raw: { keep_days: 30, then: 'rollups' }, rollups: { keep: 'forever' }, annotations: { keep: '365d' } };
    const put = await request(`${svc.url}/v1/series/${flow.id}/lifecycle-policy`, { method: 'PUT', body: { policy, version: null } });
    t.equal(put.status, 200);
    t.same(put.json, { policy, version: 1 });
    const stale = await request(`${svc.url}/v1/series/${flow.id}/lifecycle-policy`, { method: 'PUT', body: { policy, version: null } });
    t.equal(stale.status, 409, 'a change based on an old version is a conflict');
    const badPolicy = await request(`${svc.url}/v1/series/${flow.id}/lifecycle-policy`, { method: 'PUT', body: { policy: { ...policy, raw: { keep_days: -1, then: 'rollups' } } } });
    t.equal(badPolicy.status, 400);
    t.match((badPolicy.json as { error: string }).error, 'policy.raw.keep_days');
    const got = (await request(`${svc.url}/v1/series/${flow.id}/lifecycle-policy`)).json;
    t.same(got, { policy, version: 1 });
  });

  t.test('raw-audit shows a superseded value with who and when', async (t) => {
    await parts.storage.write([{ series: flow.id, times: times.slice(3, 4), values: new Float64Array([99.5]), quality: new Uint32Array([192]) }], { principal: 'editor' });
    const a = (await request(`${svc.url}/v1/series/${flow.id}/raw-audit?start_ns=${BASE}&end_ns=${end}`)).json as { entries: Array<{ ts_ns: bigint | number; value: number; principal: string }> };
    t.equal(a.entries.length, 1);
    t.equal(BigInt(a.entries[0].ts_ns), times[3]);
    t.equal(a.entries[0].value, f64[3], 'the old value is kept');
    t.equal(a.entries[0].principal, 'editor');
  });

  t.test('PUT writable-class changes the record with a new tx', async (t) => {
    const r = await request(`${svc.url}/v1/series/${flow.id}/writable-class`, { method: 'PUT', body: { writable_class: 'manual' } });
    t.equal(r.status, 200);
    const b = r.json as { writable_class: string; tx_id: bigint | number; created_tx: bigint | number };
    t.equal(b.writable_class, 'manual');
    t.ok(BigInt(b.tx_id) > BigInt(b.created_tx));
    t.equal(parts.storage.meta(flow.id)?.writableClass, 'manual', 'LMDB meta agrees with the model');
    const bad = await request(`${svc.url}/v1/series/${flow.id}/writable-class`, { method: 'PUT', body: { writable_class: 'Not OK' } });
    t.equal(bad.status, 400);
  });

  t.test('GET /v1/jobs lists the background jobs, and lifecycle enforcement records an Operation', async (t) => {
    await parts.jobs.runNow('lifecycle-enforcement');
    const r = await request(`${svc.url}/v1/jobs`);
    t.equal(r.status, 200);
    const jobs = r.json as Array<{ name: string; kind: string; last_outcome: string | null; last_operation_id: string | null; next_run_ns: unknown }>;
    // the storage jobs; later areas add theirs (annotations-lifecycle)
    t.same(jobs.map((j) => j.name).filter((n) => n === 'lifecycle-enforcement' || n === 'seal-idle-heads'), ['lifecycle-enforcement', 'seal-idle-heads']);
    const lc = jobs.find((j) => j.name === 'lifecycle-enforcement')!;
    t.equal(lc.last_outcome, 'succeeded');
    t.type(lc.last_operation_id, 'string');
    t.ok(lc.next_run_ns !== null, 'the next run is scheduled');
    const op = await request(`${svc.url}/v1/operations/${lc.last_operation_id}`);
    t.equal(op.status, 200);
    t.equal((op.json as { state: string; kind: string }).state, 'completed');
    t.equal((op.json as { kind: string }).kind, 'storage.lifecycle-enforcement');
  });

  // Last, on the same service (a start costs seconds): a series of its own, so nothing above sees it.
  t.test('large raw bodies sent concurrently from reused worker buffers arrive whole, also after a client left mid-body', async (t) => {
    const { connect } = await import('node:net');
    const s = await parts.series.create({ sourceName: 'big/level', valueType: 'float64' }, { principal: 'tester' });
    const n = 200_000;
    const times = new BigInt64Array(n), values = new Float64Array(n), quality = new Uint32Array(n).fill(192);
    for (let i = 0; i < n; i++) { times[i] = BASE + BigInt(i) * SEC; values[i] = Math.round(1000 * Math.cos(i / 77)) / 8; }
    await parts.storage.write([{ series: s.id, times, values, quality }], { principal: 'tester' });
    const end = BASE + BigInt(n) * SEC;
    const path = `/v1/series/${s.id}/raw?start_ns=${BASE}&end_ns=${end}&limit=${n}`;
    const { port } = new URL(svc.url);

    // a client that reads the start of a ~11 MB body and leaves
    await new Promise<void>((resolve) => {
      const c = connect(Number(port), '127.0.0.1', () => c.write(`GET ${path} HTTP/1.1\r\nhost: t\r\n\r\n`));
      c.once('data', () => { c.destroy(); resolve(); });
      c.on('error', () => resolve());
    });
    // then more reads at once than each worker keeps buffers for; no body is read before every
    // response has started, so each body stays partly unsent (beyond the socket buffers) in
    // its worker's buffer while the other tasks run: a buffer reused too early would show here
    const responses = await Promise.all(Array.from({ length: 8 }, (_, k) =>
      fetch(`${svc.url}${path}`, { headers: { accept: k % 2 === 0 ? 'application/json' : 'application/x-msgpack' } })));
    await new Promise((r) => setTimeout(r, 200));
    const reads = responses.map(async (res, k) => {
      const chunks: Uint8Array[] = [];
      for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) chunks.push(c);
      const body = Buffer.concat(chunks);
      const points = k % 2 === 0
        ? (JSON.parse(body.toString('utf8')) as { points: Array<{ value: number }> }).points
        : (unpack.unpack(body) as { points: Array<{ value: number }> }).points;
      return points.length === n && points.every((p, i) => p.value === values[i]);
    });
    const whole = await Promise.all(reads);
    t.same(whole, whole.map(() => true), 'every body is complete and exact');
  });
});
