// Display folders and display documents over the real service (enforced auth, one server
// for the file): folders (idempotent create, sibling names, cycles, visibility), documents
// (every part of the schema kept, x bags exact with integers past 2^53, unknown widget kinds
// kept), versions and the stale check, paging, and publishing as readers see it.
import t from 'tap';
import { stringifyJson } from '../../src/json/json.js';
import { startAuthService, createPerson, login, type Client } from '../helpers/auth.js';
import { displayDoc } from './fixtures.js';

interface Folder { folder_id: string; parent_id: string | null; name: string; tx_id: number | bigint }
interface Record_ { id: string; folder_id: string; name: string; kind: string; schema_version: string; tx_id: number | bigint; document: Record<string, unknown>; lint: Array<{ code: string; widget_id: string | null; severity: string }> }

t.test('displays: folders, documents, versions, paging, publishing', async (t) => {
  const svc = await startAuthService(t);
  const admin = svc.admin;
  await createPerson(admin, 'dina-author', 'dina author password', 'engineer');
  await createPerson(admin, 'rory-reader', 'rory reader password', 'viewer');
  const author: Client = await login(svc.url, 'dina-author', 'dina author password');
  const reader: Client = await login(svc.url, 'rory-reader', 'rory reader password');

  const folder = async (name: string, parent_id?: string) => {
    const r = await author('/v1/display-folders', { method: 'POST', body: { name, ...(parent_id ? { parent_id } : {}) } });
    t.equal(r.status, 201, `folder ${name}`);
    return r.json as Folder;
  };

  await t.test('folders: idempotent create, unique sibling names, no cycles, rename and move', async (t) => {
    const key = { 'idempotency-key': 'folder-plant-1' };
    const a = await author('/v1/display-folders', { method: 'POST', body: { name: 'Plant' }, headers: key });
    const again = await author('/v1/display-folders', { method: 'POST', body: { name: 'Plant' }, headers: key });
    t.equal(a.status, 201);
    t.equal(again.status, 201);
    t.equal(again.headers.get('x-service-idempotent-replay'), 'true', 'the same key replays the first answer');
    t.same(again.json, a.json);
    const plant = a.json as Folder;
    t.same(Object.keys(plant).sort(), ['folder_id', 'name', 'parent_id', 'tx_id']);
    t.equal(plant.parent_id, null);

    const clash = await author('/v1/display-folders', { method: 'POST', body: { name: 'Plant' } });
    t.equal(clash.status, 409);
    t.equal((clash.json as { code: string }).code, 'name-conflict');

    const area = await folder('Area 1', plant.folder_id);
    const cell = await folder('Cell', area.folder_id);
    const cycle = await author(`/v1/display-folders/${plant.folder_id}`, { method: 'PUT', body: { name: 'Plant', parent_id: cell.folder_id } });
    t.equal(cycle.status, 400, 'moving a folder under its own descendant is refused');
    t.match(cycle.json, { code: 'invalid-request', details: { errors: [{ field: 'parent_id' }] } });
    const self = await author(`/v1/display-folders/${plant.folder_id}`, { method: 'PUT', body: { name: 'Plant', parent_id: plant.folder_id } });
    t.equal(self.status, 400, 'and under itself');

    const moved = await author(`/v1/display-folders/${cell.folder_id}`, { method: 'PUT', body: { name: 'Cell 7', parent_id: plant.folder_id, expected_tx: cell.tx_id } });
    t.equal(moved.status, 200, moved.text);
    t.match(moved.json, { folder_id: cell.folder_id, parent_id: plant.folder_id, name: 'Cell 7' });
    const stale = await author(`/v1/display-folders/${cell.folder_id}`, { method: 'PUT', body: { name: 'Cell 8', parent_id: plant.folder_id, expected_tx: cell.tx_id } });
    t.equal(stale.status, 409, 'a stale expected_tx is a conflict');
    const sibling = await author(`/v1/display-folders/${cell.folder_id}`, { method: 'PUT', body: { name: 'Area 1', parent_id: plant.folder_id } });
    t.equal(sibling.status, 409, 'a rename onto a sibling\'s name is a conflict');

    const got = await author(`/v1/display-folders/${cell.folder_id}`);
    t.same(got.json, moved.json);
    const under = await author(`/v1/display-folders?parent_id=${plant.folder_id}`);
    t.same((under.json as Folder[]).map((f) => f.name), ['Area 1', 'Cell 7']);
    const unknownParent = await author('/v1/display-folders', { method: 'POST', body: { name: 'X', parent_id: '00000000-0000-4000-8000-000000000000' } });
    t.equal(unknownParent.status, 400);
    t.match(unknownParent.json, { details: { errors: [{ field: 'parent_id' }] } });
    t.equal((await author('/v1/display-folders/00000000-0000-4000-8000-000000000000')).status, 404);
  });

  await t.test('documents: stored exactly, x bags byte-exact past 2^53, unknown kinds kept, stale PUT refused', async (t) => {
    const f = await folder('Documents');
    const doc = displayDoc({ x: { vendor: { id: 12345678901234567890n, n: -9223372036854775808n, f: 1.5, s: 'é"\\' }, z: 1, a: 2 } });
    (doc.widgets as unknown[]).push({ type: 'hologram-3d', id: 'h1', bindings: { anything: [1, 2] }, x: { v: 2n ** 60n } });
    (doc.widgets as unknown[]).push({ type: 'episode-gantt', id: 'g1', range: { type: 'anchored', anchor: { kind: 'episode', episode_id: '00000000-0000-4000-8000-000000000001', before: '1h' } } });
    const created = await author('/v1/displays', { method: 'POST', body: { folder_id: f.folder_id, document: doc } });
    t.equal(created.status, 201, created.text);
    const rec = created.json as Record_;
    t.same(Object.keys(rec).sort(), ['document', 'folder_id', 'id', 'kind', 'lint', 'name', 'schema_version', 'tx_id']);
    t.match(rec, { folder_id: f.folder_id, name: 'Pump overview', kind: 'display', schema_version: '1.0' });
    t.equal(stringifyJson(rec.document), stringifyJson(doc), 'the document comes back exactly as sent');
    const got = await author(`/v1/displays/${rec.id}`);
    const text = got.text;
    t.ok(text.includes('"x":{"vendor":{"id":12345678901234567890,"n":-9223372036854775808,"f":1.5,"s":"é\\"\\\\"},"z":1,"a":2}'), 'the x bag is byte-exact in the response, member order and big integers kept');
    t.ok(text.includes('"x":{"v":1152921504606846976}'), 'a widget x bag too');
    t.ok(text.includes('{"type":"hologram-3d","id":"h1","bindings":{"anything":[1,2]}'), 'an unknown widget kind is kept as written');
    t.ok(rec.lint.some((l) => l.code === 'widget-kind-unknown' && l.widget_id === 'h1'), 'and linted as unknown');
    t.ok(text.includes('"anchor":{"kind":"episode","episode_id":"00000000-0000-4000-8000-000000000001","before":"1h"}'), 'the authored anchor is kept');

    const doc2 = displayDoc({ name: 'Pump overview v2' });
    const put = await author(`/v1/displays/${rec.id}`, { method: 'PUT', body: { expected_tx: rec.tx_id, document: doc2 } });
    t.equal(put.status, 200, put.text);
    const rec2 = put.json as Record_;
    t.equal(rec2.name, 'Pump overview v2');
    t.ok(BigInt(rec2.tx_id) > BigInt(rec.tx_id));
    const stale = await author(`/v1/displays/${rec.id}`, { method: 'PUT', body: { expected_tx: rec.tx_id, document: displayDoc({ name: 'lost update' }) } });
    t.equal(stale.status, 409, 'a PUT from an older version is refused');
    t.match(stale.json, { code: 'conflict', details: { current_tx: String(rec2.tx_id) } });

    const versions = await author(`/v1/displays/${rec.id}/versions`);
    t.same((versions.json as Array<{ version: number; name: string }>).map((v) => [v.version, v.name]), [[1, 'Pump overview'], [2, 'Pump overview v2']]);
    const v1 = await author(`/v1/displays/${rec.id}?version=1`);
    t.equal(stringifyJson((v1.json as Record_).document), stringifyJson(doc), 'version 1 is readable as it was');
    t.equal((await author(`/v1/displays/${rec.id}?version=3`)).status, 404);
    // found by the fuzz: a version past the column's range reached the store and answered 500
    const huge = await author(`/v1/displays/${rec.id}?version=2147483648`);
    t.equal(huge.status, 400, 'a version past 2^31-1 is refused');
    t.match(huge.json, { code: 'invalid-request', details: { errors: [{ field: 'query.version' }] } });

    const bad = await author('/v1/displays', { method: 'POST', body: { folder_id: f.folder_id, document: { ...displayDoc(), widgets: [{ type: 'trend', id: 't', bindings: { kind: 'trend', traces: [{ attribute: { kind: 'nope' } }] } }] } } });
    t.equal(bad.status, 400);
    t.match((bad.json as { error: string }).error, /^body\.document\.widgets\.0\.bindings/, 'bad trend bindings name the field');
    const badTz = await author('/v1/displays', { method: 'POST', body: { folder_id: f.folder_id, document: { ...displayDoc(), time: { start: '*', end: '*', navigator: { visible: true }, timezone: { mode: 'explicit', timezone: 'UTC', extra: 1 } } } } });
    t.equal(badTz.status, 400, 'unknown members of the time zone are refused');
    const noFolder = await author('/v1/displays', { method: 'POST', body: { folder_id: '00000000-0000-4000-8000-000000000009', document: displayDoc() } });
    t.equal(noFolder.status, 400);
    t.match(noFolder.json, { details: { errors: [{ field: 'folder_id' }] } });
    const nothing = await author(`/v1/displays/${rec.id}`, { method: 'PUT', body: { expected_tx: rec2.tx_id } });
    t.equal(nothing.status, 400, 'a PUT that changes nothing is refused');
  });

  await t.test('listing: bare array, paging envelope with limit 0..1000, after, folder and kind filters', async (t) => {
    const f = await folder('Paging');
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const doc = displayDoc({ name: `P${i}` });
      if (i === 6) doc.kind = 'playlist';
      const r = await author('/v1/displays', { method: 'POST', body: { folder_id: f.folder_id, document: doc } });
      ids.push((r.json as Record_).id);
    }
    ids.sort();
    const bare = await author(`/v1/displays?folder=${f.folder_id}`);
    t.ok(Array.isArray(bare.json), 'no cursor and no limit: a bare array');
    t.same((bare.json as Record_[]).map((r) => r.id), ids, 'in id order');
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await author(`/v1/displays?folder=${f.folder_id}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      t.equal(r.status, 200);
      const page = r.json as { items: Record_[]; next_cursor: string | null };
      t.ok(page.items.length <= 3);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    t.same(seen, ids, 'pages of 3 walk every display once');
    t.equal(pages, 3);
    const zero = await author(`/v1/displays?folder=${f.folder_id}&limit=0`);
    t.same((zero.json as { items: unknown[] }).items, [], 'limit 0 answers no items');
    t.type((zero.json as { next_cursor: unknown }).next_cursor, 'string', 'and a cursor to start from');
    t.equal((await author('/v1/displays?limit=1001')).status, 400, 'limit above 1000 is refused');
    t.equal((await author('/v1/displays?cursor=garbage')).status, 400, 'a forged cursor is refused');
    const after = await author(`/v1/displays?folder=${f.folder_id}&after=${ids[4]}`);
    t.same((after.json as Record_[]).map((r) => r.id), ids.slice(5));
    const playlists = await author(`/v1/displays?folder=${f.folder_id}&kind=playlist`);
    t.equal((playlists.json as Record_[]).length, 1);
  });

  await t.test('publishing: readers see the published version only, and only folders leading to one', async (t) => {
    const top = await folder('Published');
    const inner = await folder('Inner', top.folder_id);
    const draftsOnly = await folder('Drafts');
    const r = await author('/v1/displays', { method: 'POST', body: { folder_id: inner.folder_id, document: displayDoc({ name: 'Shift board' }) } });
    const rec = r.json as Record_;
    await author('/v1/displays', { method: 'POST', body: { folder_id: draftsOnly.folder_id, document: displayDoc({ name: 'Draft' }) } });

    t.equal((await reader(`/v1/displays/${rec.id}`)).status, 404, 'an unpublished display is invisible to readers');
    t.equal((await reader(`/v1/display-folders/${inner.folder_id}`)).status, 404, 'so is its folder');
    t.equal((await reader('/v1/displays', { method: 'POST', body: { folder_id: inner.folder_id, document: displayDoc() } })).status, 403, 'readers cannot write');

    const pub = await author(`/v1/displays/${rec.id}/publish`, { method: 'POST', body: { version: 1 } });
    t.equal(pub.status, 200);
    t.match(pub.json, { display_id: rec.id, published_version: 1 });
    const seen = await reader(`/v1/displays/${rec.id}`);
    t.equal(seen.status, 200);
    t.equal((seen.json as Record_).name, 'Shift board');

    const v2 = await author(`/v1/displays/${rec.id}`, { method: 'PUT', body: { expected_tx: rec.tx_id, document: displayDoc({ name: 'Shift board (draft 2)' }) } });
    t.equal(v2.status, 200, 'publishing does not move the stale-check tx');
    t.equal(((await reader(`/v1/displays/${rec.id}`)).json as Record_).name, 'Shift board', 'readers keep the published version while authors edit');
    t.equal(((await author(`/v1/displays/${rec.id}`)).json as Record_).name, 'Shift board (draft 2)', 'authors see the newest');
    t.equal((await reader(`/v1/displays/${rec.id}?version=2`)).status, 404, 'readers cannot read unpublished versions');
    t.same(((await reader(`/v1/displays/${rec.id}/versions`)).json as Array<{ version: number }>).map((v) => v.version), [1]);
    const marks = ((await author(`/v1/displays/${rec.id}/versions`)).json as Array<{ version: number; published: boolean }>).map((v) => [v.version, v.published]);
    t.same(marks, [[1, true], [2, false]], 'authors see every version, the published one marked');
    const missing = await author(`/v1/displays/${rec.id}/publish`, { method: 'POST', body: { version: 9 } });
    t.equal(missing.status, 400);
    t.match(missing.json, { details: { errors: [{ field: 'version' }] } });

    const folders = (await reader('/v1/display-folders')).json as Folder[];
    const names = folders.map((x) => x.name);
    t.ok(names.includes('Published') && names.includes('Inner'), 'the folders leading to a published display are listed');
    t.notOk(names.includes('Drafts'), 'a folder with drafts only is silently absent');
    const listed = (await reader('/v1/displays')).json as Record_[];
    t.same(listed.map((x) => x.id), [rec.id], 'readers list published displays only');
    t.equal(listed[0].name, 'Shift board');

    const withdraw = await author(`/v1/displays/${rec.id}/publish`, { method: 'POST', body: { version: null } });
    t.equal(withdraw.status, 200);
    t.match(withdraw.json, { published_version: null });
    t.equal((await reader(`/v1/displays/${rec.id}`)).status, 404, 'a withdrawn display is invisible again');
  });
});
