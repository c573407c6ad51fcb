// Live resolved updates over real HTTP (enforced auth, the plant built through the Model
// routes, points written through real gRPC ingest): POST /v1/read/subscribe (SSE) and the
// GET /v1/stream WebSocket. Initial values then committed points, a rebind followed without
// resubscribing, Last-Event-ID resume, slow consumers cut off with a final message,
// authorization, multiplexing, and per-subscription errors. Then the resolved reads' filters
// on subscriptions: `units` (another unit of the same quantity kind, exact factors; another
// kind refused naming both units) and `exclude_quality` (the initial value too), on both
// transports, with points written through the main thread's storage engine, the path of
// calculation outputs and backfill commits; subscriptions with the same attributes and
// filters get the same body.
import t from 'tap';
import { connect as tcpConnect } from 'node:net';
import { startAuthService, createPerson, grantRole, sessionCookieOf, createServiceWithToken, ADMIN_PASSWORD } from '../helpers/auth.js';
import { request } from '../helpers/service.js';
import { connect, floatBatch } from '../helpers/ingest.js';
import { openSse, openWs, type LiveMessage } from '../helpers/live-clients.js';
import { nowNs } from '../../src/clock.js';
import { LIVE_BACKLOG_LIMIT } from '../../src/reads/live/live-subscription.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';

const WHO = { principal: 'tester' };
const CELSIUS = systemEntryId('units', 'degree Celsius');
const FAHRENHEIT = systemEntryId('units', 'degree Fahrenheit');
const KELVIN = systemEntryId('units', 'kelvin');
const BAR = systemEntryId('units', 'bar');
const TEMPERATURE = systemEntryId('quantity-kinds', 'Temperature');

interface Pt { ts_ns: bigint; value: unknown; quality: number }
const points = (m: LiveMessage) => entries(m).flatMap((e) => e.points ?? []) as Pt[];
const brief = (ps: Pt[]) => ps.map((p) => [p.ts_ns, p.value, p.quality]);

const SEC = 1_000_000_000n;

interface Entry { attribute_id: string; path: string; unit_id?: string | null; series: string | null; snapshot?: { ts_ns: bigint; value: unknown; quality: number } | null; points?: Array<{ ts_ns: bigint; value: unknown; quality: number }>; previous_series?: string }

const entries = (m: LiveMessage, key = 'attributes') => m.data[key] as Entry[];
const e = (m: LiveMessage) => entries(m)[0].attribute_id;
const pointsOf = (m: LiveMessage, series?: string) => entries(m).filter((e) => !series || e.series === series).flatMap((e) => e.points ?? []);

t.test('live resolved updates', async (t) => {
  const svc = await startAuthService(t);
  const admin = svc.admin;
  const ok = async <T>(path: string, body: unknown, status = 201): Promise<T> => {
    const r = await admin(path, { method: 'POST', body });
    if (r.status !== status) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json as T;
  };
  const loginRes = await request(`${svc.url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } });
  const cookie = sessionCookieOf(loginRes);
  const auth = { cookie };

  // The plant: /Plant/A/P1 and /Plant/B/P2, each pump with Flow.
  const tpl = await ok<{ template_id: string }>('/v1/model/templates', {
    name: 'Pump', attributes: [{ name: 'Flow', quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] }],
  });
  const plant = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'Plant' }, 200);
  const areaA = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'A', parent: plant.asset_id }, 200);
  const areaB = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'B', parent: plant.asset_id }, 200);
  await ok('/v1/model/assets', { name: 'P1', parent: areaA.asset_id, template_id: tpl.template_id }, 200);
  await ok('/v1/model/assets', { name: 'P2', parent: areaB.asset_id, template_id: tpl.template_id }, 200);
  const attrs = (await ok<{ results: Array<{ attribute_id: string; asset_path: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } }, 200)).results;
  const attrOf = (assetPath: string) => (attrs.find((a) => a.asset_path === assetPath) as { attribute_id: string }).attribute_id;
  const p1Flow = attrOf('/Plant/A/P1'), p2Flow = attrOf('/Plant/B/P2');

  // A collector with three streams: p1 (bound to P1 Flow), p1b (P1's replacement sensor), p2.
  const { token } = await createServiceWithToken(admin, 'line-1', 'collector');
  const collector = await connect(svc, { collectorId: 'line-1', token, streams: [{ name: 'p1', type: 'float64' }, { name: 'p1b', type: 'float64' }, { name: 'p2', type: 'float64' }] });
  t.teardown(() => collector.close());
  const [sP1, sP1b, sP2] = collector.welcome.streams.map((s) => s.series_id);
  const start = nowNs() - 3600n * SEC;
  await ok('/v1/model/bindings', { attribute_id: p1Flow, series_id: sP1, from_ns: start });
  await ok('/v1/model/bindings', { attribute_id: p2Flow, series_id: sP2, from_ns: start });

  let clock = nowNs() - 600n * SEC;
  /** Sends n points to a stream through gRPC and waits for the ack; returns their times. */
  const send = async (stream: number, n: number, base = 0): Promise<bigint[]> => {
    const b = floatBatch(clock, n, 1_000_000n, base);
    clock += BigInt(n) * 1_000_000n;
    const r = await collector.send('LIVE', stream, 'float64', b);
    if (!r.ok) throw new Error(`batch refused: ${JSON.stringify(r)}`);
    return [...b.times];
  };
  await send(0, 5, 100); // before anyone subscribes: the last (104) is P1's initial value
  const underA = { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { under: { kind: 'path', content: '/Plant/A' } } };
  const byIds = (...ids: string[]) => ({ select: { kind: 'attribute_ids', content: ids }, scope: {} });

  t.test('SSE: the latest value first, then every point ingest makes durable, in order', async (t) => {
    const sse = await openSse(svc.url, { resolve: underA }, auth);
    t.teardown(() => sse.close());
    t.equal(sse.status, 200);
    const snap = await sse.next((m) => m.type === 'snapshot');
    t.match(snap.eventId, /^[0-9a-f]{8}-\d+$/, 'the snapshot carries a resume position');
    t.same(entries(snap).map((e) => [e.attribute_id, e.series, e.snapshot?.value]), [[p1Flow, sP1, 104]]);
    const times = await send(0, 3, 200);
    const got: bigint[] = [];
    while (got.length < 3) {
      const m = await sse.next((x) => x.type === 'points');
      for (const p of pointsOf(m, sP1)) { got.push(p.ts_ns); t.equal(p.quality, 192); }
      t.match(m.eventId, /^[0-9a-f]{8}-\d+$/);
    }
    t.same(got, times, 'exact ns times, in the order sent');
    await send(2, 2); // P2 is outside the scope
    const more = await send(0, 1, 300);
    const m = await sse.next((x) => x.type === 'points');
    t.same(pointsOf(m).map((p) => [p.ts_ns, p.value]), [[more[0], 300]], 'only the subscribed attribute\'s points arrive');
  });

  t.test('SSE: a rebind is followed without resubscribing, and the new series\' points arrive', async (t) => {
    const sse = await openSse(svc.url, { resolve: underA }, auth);
    t.teardown(() => sse.close());
    await sse.next((m) => m.type === 'snapshot');
    await send(1, 2, 500); // the replacement sensor already reports; not yet bound
    await ok('/v1/model/bindings', { attribute_id: p1Flow, series_id: sP1b, from_ns: nowNs() - SEC });
    const r = await sse.next((m) => m.type === 'resolved');
    const rebound = entries(r, 'rebound');
    t.same(rebound.map((e) => [e.attribute_id, e.series, e.previous_series, e.snapshot?.value]), [[p1Flow, sP1b, sP1, 501]], 'rebound, with the new series\' latest value');
    t.same(r.data.added, []);
    t.same(r.data.removed, []);
    const times = await send(1, 2, 600);
    const m = await sse.next((x) => x.type === 'points');
    t.same(pointsOf(m, sP1b).map((p) => p.ts_ns), times);
    await send(0, 1, 700); // the old sensor is no longer P1's
    const next = await send(1, 1, 800);
    const m2 = await sse.next((x) => x.type === 'points');
    t.same(pointsOf(m2).map((p) => [p.ts_ns, p.value]), [[next[0], 800]], 'the old series\' points no longer arrive');
  });

  t.test('SSE: Last-Event-ID resumes within the window; an unknown id gets a reset and fresh initial values', async (t) => {
    const first = await openSse(svc.url, { resolve: underA }, auth);
    await first.next((m) => m.type === 'snapshot');
    await send(1, 1, 900);
    const seen = await first.next((m) => m.type === 'points');
    first.close();
    const missed = [...await send(1, 2, 910), ...await send(1, 1, 920)];
    const again = await openSse(svc.url, { resolve: underA }, { ...auth, 'last-event-id': seen.eventId as string });
    t.teardown(() => again.close());
    const resumed = await again.next();
    t.equal(resumed.type, 'resumed', 'no snapshot: the missed events follow');
    const got: bigint[] = [];
    while (got.length < missed.length) got.push(...pointsOf(await again.next((m) => m.type === 'points')).map((p) => p.ts_ns));
    t.same(got, missed, 'exactly the points committed while away');

    const lost = await openSse(svc.url, { resolve: underA }, { ...auth, 'last-event-id': '00000000-5' });
    t.teardown(() => lost.close());
    t.equal((await lost.next()).type, 'reset');
    t.equal((await lost.next()).type, 'snapshot');
  });

  t.test('an attribute entering the scope is reported and followed', async (t) => {
    const sse = await openSse(svc.url, { resolve: underA }, auth);
    t.teardown(() => sse.close());
    await sse.next((m) => m.type === 'snapshot');
    const p3 = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'P3', parent: areaA.asset_id, template_id: tpl.template_id }, 200);
    const added = await sse.next((m) => m.type === 'resolved');
    const entry = entries(added, 'added')[0];
    t.match(entry, { path: /P3/, series: null, snapshot: null }, 'the new pump\'s Flow, unbound');
    const p3Flow = (await ok<{ results: Array<{ attribute_id: string; asset_id: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: p3.asset_id } } }, 200)).results[0].attribute_id;
    t.equal(entry.attribute_id, p3Flow);
    // P1's first sensor, free since P1's rebind, goes to P3.
    await ok('/v1/model/bindings', { attribute_id: p3Flow, series_id: sP1, from_ns: nowNs() });
    const bound = await sse.next((m) => m.type === 'resolved');
    t.same(entries(bound, 'rebound').map((e) => [e.attribute_id, e.series, e.previous_series]), [[p3Flow, sP1, null]]);
    const times = await send(0, 2, 1500);
    const m = await sse.next((x) => x.type === 'points');
    t.same(pointsOf(m, sP1).map((p) => [p.ts_ns, e(m)]), times.map((ts) => [ts, p3Flow]), 'its points follow, as P3\'s');
  });

  t.test('WebSocket: resume_after replays what a subscription missed', async (t) => {
    const ws = await openWs(svc.url, { cookie });
    t.teardown(() => ws.close());
    ws.send({ type: 'subscribe', id: 'r', resolve: byIds(p2Flow) });
    const snap = await ws.next((m) => m.type === 'snapshot');
    t.match(snap.eventId, /^[0-9a-f]{8}-\d+$/);
    ws.send({ type: 'unsubscribe', id: 'r' });
    await ws.next((m) => m.type === 'unsubscribed');
    const missed = await send(2, 3, 1600);
    ws.send({ type: 'subscribe', id: 'r', resolve: byIds(p2Flow), resume_after: snap.eventId });
    t.match((await ws.next((m) => m.data.id === 'r')).data, { type: 'resumed', after: snap.eventId });
    t.same(pointsOf(await ws.next((m) => m.type === 'points')).map((p) => p.ts_ns), missed);
  });

  t.test('live subscriptions refuse as_of_ns and range, and anonymous callers', async (t) => {
    const asOf = await openSse(svc.url, { resolve: { ...underA, as_of_ns: nowNs() } }, auth);
    t.equal(asOf.status, 400);
    t.match(asOf.text, /as_of_ns/);
    const anon = await openSse(svc.url, { resolve: underA });
    t.equal(anon.status, 401);
    const refused = await openWs(svc.url).then(() => null, (e: { status?: number }) => e);
    t.equal(refused?.status, 401, 'an upgrade without credentials is refused with 401');
    const plain = await request(`${svc.url}/v1/stream`, { headers: { cookie } });
    t.equal(plain.status, 426, 'a GET without an upgrade is 426');
    t.match(plain.json, { code: 'upgrade-required' });
  });

  t.test('a principal granted one subtree receives only its attributes, on both transports', async (t) => {
    const id = await createPerson(admin, 'reader-b', 'reader password 2');
    await grantRole(admin, id, 'viewer', { kind: 'asset', asset_id: areaB.asset_id });
    const res = await request(`${svc.url}/v1/auth/login/local`, { method: 'POST', body: { username: 'reader-b', password: 'reader password 2' } });
    const readerCookie = sessionCookieOf(res);
    const all = { select: { kind: 'attributes_named', content: { name: 'Flow' } }, scope: { under: { kind: 'path', content: '/Plant' } } };
    const sse = await openSse(svc.url, { resolve: all }, { cookie: readerCookie });
    t.teardown(() => sse.close());
    const snap = await sse.next((m) => m.type === 'snapshot');
    t.same(entries(snap).map((e) => e.attribute_id), [p2Flow], 'only /Plant/B');
    const ws = await openWs(svc.url, { cookie: readerCookie });
    t.teardown(() => ws.close());
    ws.send({ type: 'subscribe', id: 'all', resolve: all });
    t.same(entries(await ws.next((m) => m.type === 'snapshot')).map((e) => e.attribute_id), [p2Flow]);
    await send(1, 1, 1000); // P1 (not visible)
    const vis = await send(2, 1, 1001);
    t.same(pointsOf(await sse.next((m) => m.type === 'points')).map((p) => p.ts_ns), vis);
    t.same(pointsOf(await ws.next((m) => m.type === 'points')).map((p) => p.ts_ns), vis);
    t.equal(sse.all.filter((m) => m.type === 'points').flatMap((m) => entries(m)).filter((e) => e.attribute_id !== p2Flow).length, 0);
  });

  t.test('a revoked token ends its subscriptions at the next resolution', async (t) => {
    const { token: bearer, tokenId } = await createServiceWithToken(admin, 'short-lived', 'integration', 'viewer');
    const sse = await openSse(svc.url, { resolve: underA }, { authorization: `Bearer ${bearer}` });
    t.teardown(() => sse.close());
    await sse.next((m) => m.type === 'snapshot');
    const r = await admin(`/v1/auth/service-identities/tokens/${tokenId}/revoke`, { method: 'POST', body: {} });
    t.ok(r.status < 300, `revoked (${r.status})`);
    await ok('/v1/model/assets', { name: 'Spare', parent: plant.asset_id }, 200); // any model commit resolves again
    const closing = await sse.next((m) => m.type === 'closing');
    t.match(closing.data, { code: 'unauthenticated' });
  });

  t.test('WebSocket: two subscriptions multiplexed by id, then one unsubscribed', async (t) => {
    const { token: bearer } = await createServiceWithToken(admin, 'dashboard', 'integration', 'viewer');
    const ws = await openWs(svc.url, { authorization: `Bearer ${bearer}` });
    t.teardown(() => ws.close());
    ws.send({ type: 'subscribe', id: 'a', resolve: byIds(p1Flow) });
    ws.send({ type: 'subscribe', id: 'b', resolve: byIds(p2Flow) });
    const snaps = [await ws.next((m) => m.type === 'snapshot'), await ws.next((m) => m.type === 'snapshot')];
    t.same(snaps.map((m) => [m.data.id, entries(m)[0].attribute_id]).sort(), [['a', p1Flow], ['b', p2Flow]]);
    const onB = await send(2, 2, 1100);
    const mb = await ws.next((m) => m.type === 'points');
    t.equal(mb.data.id, 'b');
    t.same(pointsOf(mb).map((p) => p.ts_ns), onB);
    const onA = await send(1, 1, 1200);
    const ma = await ws.next((m) => m.type === 'points');
    t.equal(ma.data.id, 'a');
    t.same(pointsOf(ma).map((p) => p.ts_ns), onA);
    ws.send({ type: 'unsubscribe', id: 'a' });
    t.match((await ws.next((m) => m.type === 'unsubscribed')).data, { id: 'a' });
    await send(1, 1, 1300);
    const lastB = await send(2, 1, 1301);
    const after = await ws.next((m) => m.type === 'points');
    t.equal(after.data.id, 'b', 'nothing more for the unsubscribed id');
    t.same(pointsOf(after).map((p) => p.ts_ns), lastB);
  });

  t.test('WebSocket: an invalid message gets an error for its subscription id and the socket stays open', async (t) => {
    const ws = await openWs(svc.url, { cookie });
    t.teardown(() => ws.close());
    ws.send({ type: 'subscribe', id: 'bad', resolve: { select: 5, scope: {} } });
    const e1 = await ws.next((m) => m.type === 'error');
    t.match(e1.data, { id: 'bad', code: 'invalid-request' });
    t.match(String(e1.data.error), /message\.resolve/);
    ws.sendText('{not json');
    t.match((await ws.next((m) => m.type === 'error')).data, { id: null, code: 'invalid-json' });
    ws.send({ type: 'subscribe', id: 'late', resolve: { ...byIds(p1Flow), range: [1, 2] } });
    t.match((await ws.next((m) => m.type === 'error')).data, { id: 'late', code: 'invalid-request' });
    ws.send({ type: 'subscribe', id: 'good', resolve: byIds(p1Flow) });
    t.match((await ws.next((m) => m.type === 'snapshot')).data, { id: 'good' });
    ws.send({ type: 'subscribe', id: 'good', resolve: byIds(p1Flow) });
    t.match((await ws.next((m) => m.type === 'error')).data, { id: 'good', code: 'invalid-request' }, 'a duplicate id is refused');
    t.equal(ws.closeCode, null, 'still open');
  });

  t.test('a slow consumer is cut off with a final message, on both transports', async (t) => {
    // A client that stops reading: the kernel buffers fill, then the service's backlog.
    const sseSock = tcpConnect(svc.service.http.port, '127.0.0.1');
    t.teardown(() => { sseSock.destroy(); });
    const body = JSON.stringify({ resolve: underA });
    await new Promise<void>((r) => sseSock.once('connect', () => r()));
    sseSock.write(`POST /v1/read/subscribe HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const sseChunks: Buffer[] = [];
    sseSock.on('data', (c: Buffer) => sseChunks.push(c));
    const ws = await openWs(svc.url, { cookie });
    t.teardown(() => ws.close());
    for (let i = 0; i < 20; i++) ws.send({ type: 'subscribe', id: `s${i}`, resolve: underA }); // 20x the bytes per point
    await ws.next((m) => m.type === 'snapshot' && m.data.id === 's19');
    await new Promise((r) => setTimeout(r, 200));
    sseSock.pause();
    ws.socket.pause();
    const hub = svc.service.context.parts.live;
    let sent = 0;
    while (hub.stats().subscriptions > 0 && sent < 3_000_000) {
      await Promise.all([send(1, 10_000, sent), send(1, 10_000, sent + 10_000)]);
      sent += 20_000;
    }
    t.equal(hub.stats().subscriptions, 0, `both clients were cut off (after ${sent} points; backlog limit ${LIVE_BACKLOG_LIMIT} B)`);
    sseSock.resume();
    ws.socket.resume();
    await new Promise<void>((r) => { if (sseSock.destroyed || sseSock.readableEnded) r(); else sseSock.once('close', () => r()); setTimeout(r, 20_000); });
    const sseText = Buffer.concat(sseChunks).toString('utf8');
    t.match(sseText, /event: closing\ndata: \{"code":"slow-consumer"/, 'the SSE stream ends with a closing event');
    const closing = await ws.next((m) => m.type === 'closing', 20_000);
    t.match(closing.data, { code: 'slow-consumer', limit_bytes: LIVE_BACKLOG_LIMIT });
    await new Promise((r) => setTimeout(r, 200));
    t.equal(ws.closeCode, 1008, 'then the WebSocket closes with 1008');
  });

  // ---- units and quality filters; writes through the main thread's engine (calculation outputs, backfill commits) ----
  t.test('filters and writes that do not come through ingest', async (t) => {
    const parts = svc.service.context.parts;
    const ok2 = async <T>(path: string, body: unknown, status = 200): Promise<T> => {
      const r = await admin(path, { method: 'POST', body });
      if (r.status !== status) throw new Error(`${path}: ${r.status} ${r.text}`);
      return r.json as T;
    };
    const heaterTpl = await ok2<{ template_id: string }>('/v1/model/templates', {
      name: 'Heater', attributes: [{ name: 'Temp', quantity_kind_id: TEMPERATURE, default_unit_id: CELSIUS, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] }],
    }, 201);
    const works = await ok2<{ asset_id: string }>('/v1/model/assets', { name: 'Works' });
    await ok2('/v1/model/assets', { name: 'H1', parent: works.asset_id, template_id: heaterTpl.template_id });
    const [temp] = (await ok2<{ results: Array<{ attribute_id: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Works' } } })).results;
    const heaterSeries = (await parts.series.create({ sourceName: 'h1/temp', valueType: 'float64' }, WHO)).id;
    await ok2('/v1/model/bindings', { attribute_id: temp.attribute_id, series_id: heaterSeries, from_ns: nowNs() - 3600n * SEC }, 201);

    let clockH = nowNs() - 600n * SEC;
    /** Writes through the main thread's engine (as calculations do); returns the points' times. */
    const writeH = async (values: number[], quality: number[]): Promise<bigint[]> => {
      const times = values.map(() => (clockH += SEC));
      const r = await parts.storage.write([{ series: heaterSeries, times: BigInt64Array.from(times), values: Float64Array.from(values), quality: Uint32Array.from(quality) }], WHO);
      if (r.refused > 0) throw new Error('refused');
      return times;
    };
    // 37 °C good, then a bad 500 °C: the latest point is bad.
    const [t37] = await writeH([37, 500], [192, 0]);
    const heaterResolve = { select: { kind: 'attribute_ids', content: [temp.attribute_id] }, scope: {} };

    t.test('SSE in °F without bad points: the latest good value first, then converted points, bad ones left out', async (t) => {
      const sse = await openSse(svc.url, { resolve: heaterResolve, units: { default: FAHRENHEIT }, exclude_quality: 'bad' }, auth);
      t.teardown(() => sse.close());
      t.equal(sse.status, 200, sse.text ?? '');
      const snap = await sse.next((m) => m.type === 'snapshot');
      const [e] = entries(snap);
      t.equal(e.unit_id, FAHRENHEIT, 'entries name the unit answered');
      t.same(brief([e.snapshot as Pt]), [[t37, 98.6, 192]], 'the bad 500 °C is passed over; 37 °C is exactly 98.6 °F');
      const times = await writeH([100, -40, 20, 0], [192, 100, 10, 192]);
      const got: Pt[] = [];
      while (got.length < 3) got.push(...points(await sse.next((m) => m.type === 'points')));
      t.same(brief(got), [[times[0], 212, 192], [times[1], -40, 100], [times[3], 32, 192]], 'uncertain kept, bad left out, values in °F');
    });

    t.test('WebSocket per-attribute unit, good points only; an unfiltered subscription on the same socket sees every point in °C', async (t) => {
      const [tBad] = await writeH([999], [0]); // the latest point is bad again; the good one before it is 0 °C
      const ws = await openWs(svc.url, auth);
      t.teardown(() => ws.close());
      ws.send({ type: 'subscribe', id: 'k', resolve: heaterResolve, units: { attributes: { [temp.attribute_id]: KELVIN } }, exclude_quality: 'bad_and_uncertain' });
      ws.send({ type: 'subscribe', id: 'all', resolve: heaterResolve });
      // The two subscriptions answer in either order: take messages as they come and sort them by id.
      const snaps = [await ws.next((m) => m.type === 'snapshot'), await ws.next((m) => m.type === 'snapshot')];
      const snapK = snaps.find((m) => m.data.id === 'k') as LiveMessage, snapAll = snaps.find((m) => m.data.id === 'all') as LiveMessage;
      t.equal(entries(snapK)[0].unit_id, KELVIN);
      t.equal(entries(snapAll)[0].unit_id, CELSIUS, 'no units asked: the attribute\'s own');
      t.same(brief([entries(snapAll)[0].snapshot as Pt]), [[tBad, 999, 0]], 'without a filter the latest point is the latest, bad or not');
      t.same((entries(snapK)[0].snapshot as Pt).value, 273.15, 'the latest good one, in kelvin');
      const times = await writeH([26.85, 30, 5], [192, 64, 192]);
      const gotK: Pt[] = [], gotAll: Pt[] = [];
      while (gotK.length < 2 || gotAll.length < 3) {
        const m = await ws.next((x) => x.type === 'points');
        (m.data.id === 'k' ? gotK : gotAll).push(...points(m));
      }
      t.same(brief(gotK), [[times[0], 300, 192], [times[2], 278.15, 192]], 'in kelvin, the uncertain point left out');
      t.same(brief(gotAll), [[times[0], 26.85, 192], [times[1], 30, 64], [times[2], 5, 192]]);
    });

    t.test('a unit of another quantity kind is refused naming the attribute and both units', async (t) => {
      const sse = await openSse(svc.url, { resolve: heaterResolve, units: { default: BAR } }, auth);
      t.equal(sse.status, 400);
      t.match(sse.text, /units\.default/);
      t.match(sse.text, new RegExp(`${CELSIUS}.*${BAR}`));
      t.match(sse.text, temp.attribute_id);
      const bad = await openSse(svc.url, { resolve: heaterResolve, exclude_quality: 'worst' }, auth);
      t.equal(bad.status, 400, 'an unknown exclude_quality is refused');
      t.match(bad.text, /exclude_quality/);
      const ws = await openWs(svc.url, auth);
      t.teardown(() => ws.close());
      ws.send({ type: 'subscribe', id: 'b', resolve: heaterResolve, units: { default: BAR } });
      const err = await ws.next((m) => m.type === 'error');
      t.match(err.data, { id: 'b', code: 'invalid-request' });
      t.match(String(err.data.error), /units\.default/);
      ws.send({ type: 'subscribe', id: 'q', resolve: heaterResolve, exclude_quality: 'worst' });
      const err2 = await ws.next((m) => m.type === 'error');
      t.match(err2.data, { id: 'q', code: 'invalid-request' });
      t.match(String(err2.data.error), /message\.exclude_quality/);
    });

    t.test('subscriptions with the same attributes and filters receive identical points bodies', async (t) => {
      const a = await openSse(svc.url, { resolve: heaterResolve, units: { default: FAHRENHEIT } }, auth);
      const b = await openSse(svc.url, { resolve: heaterResolve, units: { default: FAHRENHEIT } }, auth);
      const c = await openSse(svc.url, { resolve: heaterResolve }, auth);
      t.teardown(() => { a.close(); b.close(); c.close(); });
      for (const s of [a, b, c]) await s.next((m) => m.type === 'snapshot');
      // Two writes: the first may still skip a repeat of the initial value per subscription, the second is shared.
      await writeH([1], [192]);
      for (const s of [a, b, c]) await s.next((m) => m.type === 'points');
      const [t2] = await writeH([2], [192]);
      const [ma, mb, mc] = await Promise.all([a, b, c].map((s) => s.next((m) => m.type === 'points')));
      t.same(ma.data, mb.data, 'the same body');
      t.equal(ma.eventId, mb.eventId);
      t.same(brief(points(ma)), [[t2, 35.6, 192]]);
      t.same(brief(points(mc)), [[t2, 2, 192]], 'another filter, its own body');
    });

    t.test('one payload framed for both transports in turn: SSE and WebSocket subscriptions alike receive the same points', async (t) => {
      // attached in this order, the first SSE subscription builds the payload and the
      // others frame it: a WebSocket, then SSE again (after the WebSocket framed it in place), then a WebSocket
      const a = await openSse(svc.url, { resolve: heaterResolve }, auth);
      t.teardown(() => a.close());
      await a.next((m) => m.type === 'snapshot');
      const ws = await openWs(svc.url, auth);
      t.teardown(() => ws.close());
      ws.send({ type: 'subscribe', id: 'w1', resolve: heaterResolve });
      await ws.next((m) => m.type === 'snapshot' && m.data.id === 'w1');
      const c = await openSse(svc.url, { resolve: heaterResolve }, auth);
      t.teardown(() => c.close());
      await c.next((m) => m.type === 'snapshot');
      ws.send({ type: 'subscribe', id: 'w2', resolve: heaterResolve });
      await ws.next((m) => m.type === 'snapshot' && m.data.id === 'w2');
      // the first write after the initial values may leave out a repeat of them per subscription; the second is shared
      await writeH([1], [192]);
      await Promise.all([a, c].map((s) => s.next((m) => m.type === 'points')));
      for (let k = 0; k < 2; k++) await ws.next((m) => m.type === 'points');
      const [t2] = await writeH([2], [192]);
      const [ma, mc] = await Promise.all([a, c].map((s) => s.next((m) => m.type === 'points')));
      const mw = [await ws.next((m) => m.type === 'points'), await ws.next((m) => m.type === 'points')];
      t.same(brief(points(ma)), [[t2, 2, 192]]);
      t.same(mc.data, ma.data, 'SSE after a WebSocket framed the payload: the same body');
      t.same(mw.map((m) => m.data.id).sort(), ['w1', 'w2']);
      for (const m of mw) {
        t.same(m.data.attributes, ma.data.attributes, `WebSocket ${String(m.data.id)}: the same attributes`);
        t.equal(m.data.event_id, ma.eventId, 'the same event id');
        t.same(Object.keys(m.data), ['type', 'id', 'event_id', 'attributes'], 'members as before the payload was shared');
      }
    });

    t.test('an attribute of another quantity kind entering the scope ends a subscription in °F with units-incompatible', async (t) => {
      const sse = await openSse(svc.url, { resolve: { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Works' } } }, units: { default: FAHRENHEIT } }, auth);
      t.teardown(() => sse.close());
      t.equal(sse.status, 200, sse.text ?? '');
      await sse.next((m) => m.type === 'snapshot');
      const gauge = await ok2<{ template_id: string }>('/v1/model/templates', {
        name: 'Gauge', attributes: [{ name: 'Pressure', quantity_kind_id: systemEntryId('quantity-kinds', 'Pressure'), default_unit_id: systemEntryId('units', 'kilopascal'), continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] }],
      }, 201);
      await ok2('/v1/model/assets', { name: 'G1', parent: works.asset_id, template_id: gauge.template_id });
      const closing = await sse.next((m) => m.type === 'closing');
      t.match(closing.data, { code: 'units-incompatible' });
      t.match(String(closing.data.error), FAHRENHEIT);
    });
  });
});
