// Annotations over real HTTP with enforced auth: versions and a stale edit, redaction with
// the bytes gone from the database and the attachment store, attachments (upload streamed,
// the limit, hostile types, ranges), the query by each filter with cursor paging,
// include_annotations and clustering on resolved reads (JSON and msgpack), who may read
// what, and the lifecycle's annotations keep recording an Operation.
import t from 'tap';
import { existsSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { Unpackr } from 'msgpackr';
import { startAuthService, createPerson, grantRole, login, type Client } from '../helpers/auth.js';
import { stringifyJson } from '../../src/json/json.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';

const T0 = 1_700_000_000_000_000_000n;
const SEC = 1_000_000_000n;
const HOUR = 3600n * SEC;
const DAY = 24n * HOUR;
const WHO = { principal: 'tester' };
const LIMIT = 1 << 20;
const CELSIUS = systemEntryId('units', 'degree Celsius');
const TEMPERATURE = systemEntryId('quantity-kinds', 'Temperature');
const unpack = new Unpackr({ int64AsType: 'bigint', useRecords: false });
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3, 4]);

interface Ann { annotation_id: string; version: number; text: string | null; tags: string[]; start_ns: bigint | number; end_ns: bigint | number; author: string; redacted: unknown; attachments: Array<{ attachment_id: string; redacted: boolean }> }

// One server for the whole file (several logins: scrypt); ~30 s on a quiet box, far more on a loaded one.
t.setTimeout(300_000);

t.test('annotations', async (t) => {
  const svc = await startAuthService(t, { SERVICE_ATTACHMENT_MAX_BYTES: String(LIMIT) });
  const admin = svc.admin;
  const db = svc.service.context.db;
  const ok = async <T>(client: Client, path: string, body: unknown, status = 200, method = 'POST'): Promise<T> => {
    const r = await client(path, { method, body });
    if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json as T;
  };

  // The plant: /Site/A/P1 and /Site/B/P2, pumps with Temp and Flow.
  const def = (name: string) => ({
    name, quantity_kind_id: TEMPERATURE, default_unit_id: CELSIUS, continuity_class: 'continuous', writer_class: 'collector',
    enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [],
  });
  const tpl = await ok<{ template_id: string }>(admin, '/v1/model/templates', { name: 'Pump', attributes: [def('Temp'), def('Flow')] }, 201);
  const site = await ok<{ asset_id: string }>(admin, '/v1/model/assets', { name: 'Site' });
  const areaA = await ok<{ asset_id: string }>(admin, '/v1/model/assets', { name: 'A', parent: site.asset_id });
  const areaB = await ok<{ asset_id: string }>(admin, '/v1/model/assets', { name: 'B', parent: site.asset_id });
  const p1 = await ok<{ asset_id: string }>(admin, '/v1/model/assets', { name: 'P1', parent: areaA.asset_id, template_id: tpl.template_id });
  const p2 = await ok<{ asset_id: string }>(admin, '/v1/model/assets', { name: 'P2', parent: areaB.asset_id, template_id: tpl.template_id });
  const attrs = (await ok<{ results: Array<{ attribute_id: string; asset_path: string; name: string }> }>(admin, '/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Site' } } })).results;
  const attr = (asset: string, name: string) => (attrs.find((a) => a.asset_path.endsWith(asset) && a.name === name) as { attribute_id: string }).attribute_id;
  const p1Temp = attr('P1', 'Temp'), p1Flow = attr('P1', 'Flow'), p2Temp = attr('P2', 'Temp');
  const parts = svc.service.context.parts;
  const series = await parts.series.create({ sourceName: 'p1/temp', valueType: 'float64' }, WHO);
  await ok(admin, '/v1/model/bindings', { attribute_id: p1Temp, series_id: series.id, from_ns: T0 - DAY }, 201);
  const w = await parts.storage.write([{ series: series.id, times: BigInt64Array.from([T0, T0 + HOUR]), values: Float64Array.from([1, 2]), quality: Uint32Array.from([192, 192]) }], WHO);
  t.equal(w.refused, 0);
  for (const name of ['maintenance', 'trip', 'shift-note']) await ok(admin, '/v1/model/registries/annotation-tags/entries', { name }, 201);

  const create = (client: Client, body: Record<string, unknown>, status = 201) => ok<Ann>(client, '/v1/annotations', { text: 'note', ...body }, status);

  t.test('create, read, a new version, a stale edit is 409, versions say who and when', async (t) => {
    const a = await create(admin, { target: { attributes: [p1Temp] }, start_ns: T0, text: 'Pump tripped on high vibration', tags: ['trip'] });
    t.equal(a.version, 1);
    t.equal(BigInt(a.end_ns), T0, 'an instant ends where it starts');
    t.same(a.tags, ['trip']);
    t.equal(a.author, 'admin');
    const edited = await ok<Ann>(admin, `/v1/annotations/${a.annotation_id}`, {
      target: { attributes: [p1Temp] }, start_ns: T0, end_ns: T0 + HOUR, text: 'Pump tripped on high vibration; bearing replaced', tags: ['trip', 'maintenance'], expected_version: 1, reason: 'follow-up',
    }, 200, 'PUT');
    t.equal(edited.version, 2);
    t.same(edited.tags, ['maintenance', 'trip']);
    const stale = await admin(`/v1/annotations/${a.annotation_id}`, { method: 'PUT', body: { target: { attributes: [p1Temp] }, start_ns: T0, text: 'an edit made on version 1', expected_version: 1 } });
    t.equal(stale.status, 409);
    t.match(stale.json, { code: 'conflict', details: { current_version: 2, expected_version: 1 } });
    const got = await ok<Ann>(admin, `/v1/annotations/${a.annotation_id}`, undefined, 200, 'GET');
    t.equal(got.text, 'Pump tripped on high vibration; bearing replaced');
    const versions = await ok<{ items: Array<{ version: number; principal: string; committed_ns: bigint; reason: string; content: { text: string } }> }>(admin, `/v1/annotations/${a.annotation_id}/versions`, undefined, 200, 'GET');
    t.same(versions.items.map((v) => [v.version, v.principal, v.content.text]), [[1, 'admin', 'Pump tripped on high vibration'], [2, 'admin', 'Pump tripped on high vibration; bearing replaced']]);
    t.equal(versions.items[1].reason, 'follow-up');
    t.ok(BigInt(versions.items[1].committed_ns) >= BigInt(versions.items[0].committed_ns));
    const events = await ok<Array<{ events: Array<{ entity_kind: string; entity_id: string; action: string }> }>>(admin, '/v1/model/events?since_tx=0&limit=1000', undefined, 200, 'GET');
    t.same(events.flatMap((e) => e.events).filter((e) => e.entity_id === a.annotation_id).map((e) => e.action), ['create', 'update'], 'each change is a model transaction');
  });

  t.test('bad input is a 400 naming the field', async (t) => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ target: { attributes: [p1Temp] }, start_ns: T0, end_ns: T0 - 1n }, 'end_ns'],
      [{ target: { attributes: [p1Temp] }, start_ns: T0, tags: ['no-such-tag'] }, 'tags'],
      [{ target: { attributes: ['00000000-0000-4000-8000-000000000000'] }, start_ns: T0 }, 'target.attributes'],
      [{ target: { asset: '00000000-0000-4000-8000-000000000000' }, start_ns: T0 }, 'target.asset'],
      [{ target: { attributes: [p1Temp] }, start_ns: T0, attachment_ids: ['00000000-0000-4000-8000-000000000000'] }, 'attachment_ids'],
      [{ target: {}, start_ns: T0 }, 'target'],
    ];
    for (const [body, field] of cases) {
      const r = await admin('/v1/annotations', { method: 'POST', body: { text: 'x', ...body } });
      t.equal(r.status, 400, field);
      t.match(JSON.stringify(r.json), field, `names ${field}`);
    }
  });

  t.test('query by each filter, time overlap finds ranges begun before the window, cursor paging', async (t) => {
    const W0 = T0 + 10n * DAY;
    const long = await create(admin, { target: { attributes: [p1Flow] }, start_ns: W0 - 5n * DAY, end_ns: W0 + HOUR, text: 'Flow meter recalibration campaign', tags: ['maintenance'] });
    const inside = await create(admin, { target: { attributes: [p1Flow] }, start_ns: W0 + 2n * HOUR, text: 'Operator noted cavitation noise', tags: ['shift-note'] });
    const before = await create(admin, { target: { attributes: [p1Flow] }, start_ns: W0 - 2n * DAY, end_ns: W0 - DAY, text: 'ended before the window' });
    const onAsset = await create(admin, { target: { asset: p2.asset_id }, start_ns: W0 + 3n * HOUR, text: 'Pump 2 painted', tags: ['maintenance', 'shift-note'] });
    const q = async (body: Record<string, unknown>) => (await ok<{ items: Ann[]; next_cursor: string | null }>(admin, '/v1/annotations/query', body)).items.map((a) => a.annotation_id);
    const day = { start_ns: W0, end_ns: W0 + DAY };
    t.same(await q({ attributes: [p1Flow], ...day }), [long.annotation_id, inside.annotation_id], 'the range begun 5 days before is found; the one that ended before is not');
    t.same(await q({ attributes: [p1Flow] }), [long.annotation_id, before.annotation_id, inside.annotation_id], 'no window: all, in start order');
    t.same(await q({ asset_subtree: areaB.asset_id }), [onAsset.annotation_id], 'asset subtree');
    t.same((await q({ asset_subtree: site.asset_id, ...day })).sort(), [long.annotation_id, inside.annotation_id, onAsset.annotation_id].sort(), 'subtree with attributes of its assets');
    t.same(await q({ tags: ['maintenance', 'shift-note'], ...day }), [onAsset.annotation_id], 'tags: all');
    t.same(await q({ tags: ['maintenance', 'shift-note'], tags_match: 'any', ...day }), [long.annotation_id, inside.annotation_id, onAsset.annotation_id], 'tags: any');
    t.same(await q({ text: 'recalibrate' }), [long.annotation_id], 'full text with stemming');
    t.same(await q({ text: 'cavitation -painted' }), [inside.annotation_id], 'web-search syntax');
    t.same(await q({ author: 'admin', ...day }), [long.annotation_id, inside.annotation_id, onAsset.annotation_id], 'author');
    t.same(await q({ author: 'nobody-wrote-this' }), [], 'another author');
    // paging: one at a time through the subtree's day
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Ann[]; next_cursor: string | null } = await ok(admin, '/v1/annotations/query', { asset_subtree: site.asset_id, ...day, limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((a) => a.annotation_id));
      cursor = page.next_cursor;
    } while (cursor);
    t.same(seen, [long.annotation_id, inside.annotation_id, onAsset.annotation_id], 'pages in order, each once');
    const bad = await admin('/v1/annotations/query', { method: 'POST', body: { cursor: 'bm90LWEtY3Vyc29y' } });
    t.equal(bad.status, 400);
    const half = await admin('/v1/annotations/query', { method: 'POST', body: { start_ns: W0 } });
    t.equal(half.status, 400);
    t.match(half.json, { details: { errors: [{ field: 'end_ns' }] } });
  });

  t.test('an episode target', async (t) => {
    const template = await ok<{ id: string }>(admin, '/v1/episodes/templates', { name: 'Batch', family: 'batch', overlap: 'allowed', retro_edit_approval: 'none' }, 201);
    const episode = await ok<{ id: string }>(admin, '/v1/episodes', { template_id: template.id, name: 'B-001', start_ns: T0 }, 201);
    const a = await create(admin, { target: { episode: episode.id }, start_ns: T0 + SEC, text: 'batch sampled late' });
    const found = await ok<{ items: Ann[] }>(admin, '/v1/annotations/query', { episode: episode.id });
    t.same(found.items.map((x) => x.annotation_id), [a.annotation_id]);
    const missing = await admin('/v1/annotations', { method: 'POST', body: { target: { episode: '00000000-0000-4000-8000-000000000000' }, start_ns: T0, text: 'x' } });
    t.equal(missing.status, 400);
  });

  t.test('include_annotations on reads, JSON and msgpack, and clustering', async (t) => {
    const R0 = T0 + 30n * DAY;
    const near1 = await create(admin, { target: { attributes: [p1Temp] }, start_ns: R0 + 10n * SEC, text: 'first' });
    const near2 = await create(admin, { target: { attributes: [p1Temp] }, start_ns: R0 + 20n * SEC, text: 'second' });
    const far = await create(admin, { target: { attributes: [p1Temp] }, start_ns: R0 + 50n * 60n * SEC, text: 'far' });
    const assetNote = await create(admin, { target: { asset: p1.asset_id }, start_ns: R0 + 30n * SEC, text: 'asset-wide' });
    const resolve = { select: { kind: 'attribute_ids', content: [p1Temp, p1Flow] }, scope: {} };
    const window = { start_ns: R0, end_ns: R0 + HOUR };
    const items = await ok<Array<{ attribute_id: string; annotations: Array<{ annotation_id?: string; text?: string; target?: string; cluster?: { count: number; annotation_ids: string[] }; start_ns: bigint | number; end_ns: bigint | number }>; segments: unknown[] }>>(admin, '/v1/read/raw', { resolve, ...window, include_annotations: true });
    const temp = items.find((i) => i.attribute_id === p1Temp)!;
    t.same(temp.annotations.map((a) => a.annotation_id), [near1.annotation_id, near2.annotation_id, assetNote.annotation_id, far.annotation_id]);
    t.equal(temp.annotations[2].target, 'asset');
    const flow = items.find((i) => i.attribute_id === p1Flow)!;
    t.same(flow.annotations.map((a) => a.annotation_id), [assetNote.annotation_id], 'an asset note shows on each attribute of the asset');
    const plain = await ok<Array<Record<string, unknown>>>(admin, '/v1/read/raw', { resolve, ...window });
    t.notOk('annotations' in plain[0], 'not asked, not attached');
    // render at 60 px over an hour: a pixel is a minute; 10 px merges the three notes within 30 s
    const rendered = await ok<typeof items>(admin, '/v1/read/render', { resolve, ...window, width: 60, include_annotations: true, annotations_cluster_px: 10 });
    const clustered = rendered.find((i) => i.attribute_id === p1Temp)!.annotations;
    t.equal(clustered.length, 2);
    t.same(clustered[0].cluster, { count: 3, annotation_ids: [near1.annotation_id, near2.annotation_id, assetNote.annotation_id] });
    t.same([BigInt(clustered[0].start_ns), BigInt(clustered[0].end_ns)], [R0 + 10n * SEC, R0 + 30n * SEC], 'the range the cluster covers');
    t.equal(clustered[1].annotation_id, far.annotation_id, 'a lone note stays a note');
    // other reads cluster at 1,000 px: 3.6 s a pixel, so 2 px keeps notes 10 s apart apart
    const sampled = await ok<typeof items>(admin, '/v1/read/sampled', { resolve, ...window, interval_ns: 60n * SEC, include_annotations: true, annotations_cluster_px: 2 });
    t.equal(sampled.find((i) => i.attribute_id === p1Temp)!.annotations.length, 4);
    const snap = await ok<typeof items>(admin, '/v1/read/snapshot', { resolve: { ...resolve, as_of_ns: null }, include_annotations: true });
    t.ok(Array.isArray(snap[0].annotations), 'snapshot attaches the notes at its instant');
    // msgpack: the splice keeps the points and adds the member
    const res = await fetch(`${svc.url}/v1/read/raw`, {
      method: 'POST', body: stringifyJson({ resolve, start_ns: T0 - SEC, end_ns: R0 + HOUR, include_annotations: true }),
      headers: { ...(await sessionHeaders()), accept: 'application/x-msgpack', 'content-type': 'application/json' },
    });
    t.equal(res.status, 200);
    const packed = unpack.unpack(new Uint8Array(await res.arrayBuffer())) as Array<{ attribute_id: string; annotations: Array<{ annotation_id: string }>; segments: Array<{ points: Array<{ value: number }> }> }>;
    const pt = packed.find((i) => i.attribute_id === p1Temp)!;
    t.same(pt.segments[0].points.map((p) => p.value), [1, 2]);
    t.ok(pt.annotations.some((a) => a.annotation_id === far.annotation_id));
  });

  let cookie = '';
  async function sessionHeaders(): Promise<Record<string, string>> {
    if (!cookie) {
      const r = await fetch(`${svc.url}/v1/auth/login/local`, { method: 'POST', body: JSON.stringify({ username: 'admin', password: 'correct horse battery staple' }), headers: { 'content-type': 'application/json' } });
      cookie = (r.headers.getSetCookie().find((c) => c.startsWith('service_session=')) as string).split(';')[0];
    }
    return { cookie, 'x-service-csrf': '1' };
  }
  const upload = async (bytes: Uint8Array, type: string, query = '') => {
    const r = await fetch(`${svc.url}/v1/annotations/attachments${query}`, { method: 'POST', body: bytes, headers: { ...(await sessionHeaders()), 'content-type': type } });
    const text = await r.text();
    return { status: r.status, json: text ? JSON.parse(text) as Record<string, unknown> : {} };
  };

  t.test('attachments: upload, limits, hostile types, serving, ranges', async (t) => {
    const png = await upload(PNG, 'image/png', '?filename=trend%20shot.png');
    t.equal(png.status, 201);
    t.equal(png.json.size_bytes, PNG.length);
    t.match(png.json.sha256, /^[0-9a-f]{64}$/);
    t.ok(existsSync(`${svc.dataDir}/attachments/${String(png.json.sha256).slice(0, 2)}/${png.json.sha256}`), 'stored under its SHA-256');
    // exactly the limit, in many chunks (past the stream's 1 MiB high-water mark): stored whole, hashed right
    const full = randomBytes(LIMIT);
    const big = await upload(full, 'application/octet-stream');
    t.equal(big.status, 201);
    t.equal(big.json.sha256, createHash('sha256').update(full).digest('hex'));
    const over = await upload(new Uint8Array(LIMIT + 1), 'application/octet-stream');
    t.equal(over.status, 413);
    t.match(over.json, { code: 'body-too-large', details: { limit_bytes: LIMIT } });
    t.same((await upload(Buffer.from('<html><script>alert(1)</script></html>'), 'text/html')).status, 415, 'html is never accepted');
    const liar = await upload(Buffer.from('<html><script>alert(1)</script></html>'), 'image/png');
    t.equal(liar.status, 400);
    t.match(liar.json, { code: 'attachment-type-mismatch' });
    t.equal((await upload(Buffer.from([0x61, 0xff, 0xfe, 0x62]), 'text/plain')).status, 400, 'text must be UTF-8');
    // a hostile file declared as opaque bytes: accepted, and served so that it cannot run
    const hostile = await upload(Buffer.from('<html><script>alert(document.cookie)</script></html>'), 'application/octet-stream', '?filename=evil.html');
    t.equal(hostile.status, 201);
    const note = await create(admin, { target: { attributes: [p1Temp] }, start_ns: T0 + 40n * DAY, attachment_ids: [png.json.attachment_id, hostile.json.attachment_id] });
    t.equal(note.attachments.length, 2);
    const get = (id: unknown, headers: Record<string, string> = {}) => admin(`/v1/annotations/attachments/${String(id)}`, { headers });
    const served = await get(hostile.json.attachment_id);
    t.equal(served.status, 200);
    t.equal(served.headers.get('content-type'), 'application/octet-stream');
    t.match(served.headers.get('content-disposition'), /^attachment; filename="evil.html"/);
    t.equal(served.headers.get('x-content-type-options'), 'nosniff');
    t.match(served.headers.get('content-security-policy'), /default-src 'none'/);
    t.match(served.headers.get('content-security-policy'), /sandbox/);
    const image = await get(png.json.attachment_id);
    t.match(image.headers.get('content-disposition'), /^inline/);
    t.equal(image.headers.get('content-type'), 'image/png');
    const part = await get(png.json.attachment_id, { range: 'bytes=8-11' });
    t.equal(part.status, 206);
    t.equal(part.headers.get('content-range'), `bytes 8-11/${PNG.length}`);
    t.same([...Buffer.from(part.text, 'latin1')].length, 4);
    const tail = await get(png.json.attachment_id, { range: 'bytes=-4' });
    t.equal(tail.headers.get('content-range'), `bytes ${PNG.length - 4}-${PNG.length - 1}/${PNG.length}`);
    const outside = await get(png.json.attachment_id, { range: 'bytes=1000-' });
    t.equal(outside.status, 416);
    t.equal(outside.headers.get('content-range'), `bytes */${PNG.length}`);
  });

  t.test('redaction removes the content of every version and the attachment bytes', async (t) => {
    const secretFile = Buffer.from('the password is hunter2-attachment');
    const up = await upload(secretFile, 'text/plain');
    const a = await create(admin, { target: { attributes: [p1Temp] }, start_ns: T0 + 50n * DAY, text: 'temporary password hunter2-v1', tags: ['shift-note'], attachment_ids: [up.json.attachment_id] });
    await ok(admin, `/v1/annotations/${a.annotation_id}`, { target: { attributes: [p1Temp] }, start_ns: T0 + 50n * DAY, text: 'temporary password hunter2-v2', expected_version: 1, attachment_ids: [up.json.attachment_id] }, 200, 'PUT');
    const path = `${svc.dataDir}/attachments/${String(up.json.sha256).slice(0, 2)}/${up.json.sha256}`;
    t.ok(existsSync(path));
    const noReason = await admin(`/v1/annotations/${a.annotation_id}/redact`, { method: 'POST', body: {} });
    t.equal(noReason.status, 400);
    const r = await ok<Ann & { redacted: { redacted_by: string; reason: string } }>(admin, `/v1/annotations/${a.annotation_id}/redact`, { reason: 'credential posted by mistake' });
    t.equal(r.text, null);
    t.same(r.tags, []);
    t.match(r.redacted, { redacted_by: 'admin', reason: 'credential posted by mistake' });
    t.equal(BigInt(r.start_ns), T0 + 50n * DAY, 'the time stays');
    t.notOk(existsSync(path), 'the bytes are gone from the attachment store');
    const dump = await db.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM (
         SELECT text AS t FROM annotation UNION ALL SELECT search::text FROM annotation UNION ALL SELECT content::text FROM annotation_version
         UNION ALL SELECT details::text FROM model_event UNION ALL SELECT reason FROM model_tx) x WHERE t LIKE '%hunter2%'`);
    t.equal(Number(dump.rows[0].n), 0, 'no copy of the text is left in the database');
    const versions = await ok<{ items: Array<{ version: number; content: unknown }> }>(admin, `/v1/annotations/${a.annotation_id}/versions`, undefined, 200, 'GET');
    t.same(versions.items.map((v) => [v.version, v.content]), [[1, null], [2, null]], 'versions keep the fact, not the content');
    const file = await admin(`/v1/annotations/attachments/${String(up.json.attachment_id)}`);
    t.equal(file.status, 404);
    t.match(file.json, { details: { redacted: true } });
    const edit = await admin(`/v1/annotations/${a.annotation_id}`, { method: 'PUT', body: { target: { attributes: [p1Temp] }, start_ns: T0, text: 'x', expected_version: 3 } });
    t.equal(edit.status, 409, 'a redacted annotation is not edited');
    t.equal((await admin(`/v1/annotations/${a.annotation_id}/redact`, { method: 'POST', body: { reason: 'again' } })).status, 409);
  });

  t.test('authorization: read scope of the target, annotate and redact capabilities, attachments', async (t) => {
    const roleOf = async (name: string, capabilities: string[]) => ok(admin, '/v1/auth/roles', { name, capabilities }, 201);
    await roleOf('annotator', ['read', 'annotate']);
    await roleOf('reader-only', ['read']);
    const annotatorId = await createPerson(admin, 'anna', 'anna password 1234');
    await grantRole(admin, annotatorId, 'annotator', { kind: 'asset', asset_id: areaA.asset_id });
    const readerId = await createPerson(admin, 'rudi', 'rudi password 1234');
    await grantRole(admin, readerId, 'reader-only', { kind: 'asset', asset_id: areaB.asset_id });
    const anna = await login(svc.url, 'anna', 'anna password 1234');
    const rudi = await login(svc.url, 'rudi', 'rudi password 1234');
    const mine = await create(anna, { target: { attributes: [p1Temp] }, start_ns: T0 + 60n * DAY, text: 'anna was here' });
    t.equal((await anna('/v1/annotations', { method: 'POST', body: { target: { attributes: [p2Temp] }, start_ns: T0, text: 'x' } })).status, 403, 'annotate only where granted');
    t.equal((await rudi('/v1/annotations', { method: 'POST', body: { target: { attributes: [p2Temp] }, start_ns: T0, text: 'x' } })).status, 403, 'read is not annotate');
    t.equal((await rudi(`/v1/annotations/${mine.annotation_id}`)).status, 404, 'outside the reader\'s scope: not found');
    t.equal((await rudi(`/v1/annotations/${mine.annotation_id}/versions`)).status, 404);
    const both = await create(admin, { target: { attributes: [p1Temp, p2Temp] }, start_ns: T0 + 61n * DAY, text: 'on both pumps' });
    const rudiSees = await ok<{ items: Ann[] }>(rudi, '/v1/annotations/query', { asset_subtree: site.asset_id });
    t.notOk(rudiSees.items.some((a) => a.annotation_id === both.annotation_id || a.annotation_id === mine.annotation_id), 'a note spanning an unreadable asset is left out');
    t.ok(rudiSees.items.length > 0, 'notes on B are listed');
    t.equal((await anna(`/v1/annotations/${mine.annotation_id}/redact`, { method: 'POST', body: { reason: 'x' } })).status, 403, 'redact is its own capability');
    // attachments: the uploader, and readers of an annotation using it
    const up = await upload(PNG, 'image/png');
    const annaUp = await anna('/v1/annotations/attachments', { method: 'POST', body: undefined });
    t.equal(annaUp.status, 415, 'no content type');
    t.equal((await anna(`/v1/annotations/attachments/${String(up.json.attachment_id)}`)).status, 404, 'not hers, on no note she reads');
    t.equal((await anna('/v1/annotations', { method: 'POST', body: { target: { attributes: [p1Temp] }, start_ns: T0, text: 'x', attachment_ids: [up.json.attachment_id] } })).status, 400, 'another\'s upload cannot be attached');
    await create(admin, { target: { attributes: [p1Temp] }, start_ns: T0 + 62n * DAY, attachment_ids: [up.json.attachment_id] });
    t.equal((await anna(`/v1/annotations/attachments/${String(up.json.attachment_id)}`)).status, 200, 'readable through a note she may read');
    t.equal((await rudi(`/v1/annotations/attachments/${String(up.json.attachment_id)}`)).status, 404);
  });

  t.test('lifecycle: annotations keep, enforced with an Operation', async (t) => {
    const old = await create(admin, { target: { attributes: [p1Temp] }, start_ns: 1_000n * SEC, end_ns: 2_000n * SEC, text: 'from long ago' });
    const onAsset = await create(admin, { target: { asset: p1.asset_id }, start_ns: 1_000n * SEC, text: 'asset notes have no series policy' });
    await ok(admin, `/v1/series/${series.id}/lifecycle-policy`, { policy: { schema: 'service-lifecycle-policy/v1', raw: { keep: 'forever' }, rollups: { keep: 'forever' }, annotations: { keep: '30d' } } }, 200, 'PUT');
    const jobs = await ok<Array<{ name: string; kind: string }>>(admin, '/v1/jobs', undefined, 200, 'GET');
    t.ok(jobs.some((j) => j.name === 'annotations-lifecycle' && j.kind === 'lifecycle'), 'the hourly job is registered');
    const opId = await parts.annotations.enforceLifecycle(T0);
    t.equal((await admin(`/v1/annotations/${old.annotation_id}`)).status, 404, 'older than 30 days before now: gone');
    t.equal((await admin(`/v1/annotations/${onAsset.annotation_id}`)).status, 200);
    const recent = await ok<{ items: Ann[] }>(admin, '/v1/annotations/query', { attributes: [p1Temp], start_ns: T0, end_ns: T0 + 100n * DAY });
    t.ok(recent.items.length > 0, 'recent notes stay');
    const op = await ok<{ state: string; kind: string; receipt: { value: { annotations_deleted: number } } }>(admin, `/v1/operations/${encodeURIComponent(opId)}`, undefined, 200, 'GET');
    t.equal(op.state, 'completed');
    t.equal(op.kind, 'annotations.lifecycle-enforcement');
    t.ok(op.receipt.value.annotations_deleted >= 1);
  });
});
