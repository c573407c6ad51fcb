// Export on one site, import on a fresh one: two real services (the only file of the area
// that needs two) with the same plant built separately, so every attribute id differs.
// Attribute ids come back as the new site's, registry entries by name, what the new site
// lacks as unresolved selectors with reasons; the rest of the document (x bags included)
// is carried exactly.
import t from 'tap';
import { stringifyJson } from '../../src/json/json.js';
import { startAuthService, type Client } from '../helpers/auth.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';
import { displayDoc, trace } from './fixtures.js';

const FLOW = systemEntryId('quantity-kinds', 'Volume flow rate');
const M3H = systemEntryId('units', 'cubic metre per hour');

const def = (name: string) => ({
  name, quantity_kind_id: FLOW, default_unit_id: M3H, continuity_class: 'continuous', writer_class: 'collector',
  enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [],
});

async function plant(admin: Client, extra: boolean): Promise<(path: string) => string> {
  const ok = async <T>(path: string, body: unknown, status = 200): Promise<T> => {
    const r = await admin(path, { method: 'POST', body });
    if (r.status !== status) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json as T;
  };
  const tpl = await ok<{ template_id: string }>('/v1/model/templates', { name: 'Pump', attributes: [def('Flow')] }, 201);
  const site = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'Site' });
  await ok('/v1/model/assets', { name: 'P1', parent: site.asset_id, template_id: tpl.template_id });
  if (extra) await ok('/v1/model/assets', { name: 'P9', parent: site.asset_id, template_id: tpl.template_id });
  const attrs = (await ok<{ results: Array<{ attribute_id: string; path: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Site' } } })).results;
  return (path) => attrs.find((a) => a.path === path)!.attribute_id;
}

interface ExportFile { display: { folder_path: string[]; name: string }; document: { widgets: Array<{ bindings: { traces: Array<{ attribute: unknown }> } }> }; references: Array<{ pointer: string; kind: string; path?: string; name: string }> }

t.test('a display exported on one site imports on a fresh one', async (t) => {
  const [a, b] = await Promise.all([startAuthService(t), startAuthService(t)]);
  const [idA, idB] = await Promise.all([plant(a.admin, true), plant(b.admin, false)]);
  t.not(idA('/Site/P1|Flow'), idB('/Site/P1|Flow'), 'the two sites have different ids for the same attribute');

  const fa = await a.admin('/v1/display-folders', { method: 'POST', body: { name: 'Ops' } });
  const fb = await a.admin('/v1/display-folders', { method: 'POST', body: { name: 'Pumps', parent_id: (fa.json as { folder_id: string }).folder_id } });
  const doc = displayDoc({
    traces: [
      trace({ kind: 'attribute-id', attribute_id: idA('/Site/P1|Flow') }, 'P1', { unit_id: M3H, quantity_kind_id: FLOW }),
      trace({ kind: 'attribute-id', attribute_id: idA('/Site/P9|Flow') }, 'P9'),
      trace({ kind: 'template-relative', name: 'Flow' }, 'Context flow'),
    ],
    x: { site: { serial: 98765432109876543210n } },
  });
  const created = await a.admin('/v1/displays', { method: 'POST', body: { folder_id: (fb.json as { folder_id: string }).folder_id, document: doc } });
  t.equal(created.status, 201);
  const displayId = (created.json as { id: string }).id;

  const exported = await a.admin(`/v1/displays/${displayId}/export`);
  t.equal(exported.status, 200);
  t.match(exported.headers.get('content-disposition') ?? '', /attachment/);
  const file = exported.json as ExportFile;
  t.same(file.display.folder_path, ['Ops', 'Pumps']);
  t.same(file.references.map((r) => [r.pointer, r.kind, r.path ?? r.name]), [
    ['/widgets/0/bindings/traces/0/attribute', 'attribute', '/Site/P1|Flow'],
    ['/widgets/0/bindings/traces/0/unit_id', 'unit', 'cubic metre per hour'],
    ['/widgets/0/bindings/traces/0/quantity_kind_id', 'quantity-kind', 'Volume flow rate'],
    ['/widgets/0/bindings/traces/1/attribute', 'attribute', '/Site/P9|Flow'],
  ], 'attributes by path, registry entries by name');
  t.equal(stringifyJson(file.document), stringifyJson(doc), 'the document is carried as stored');

  const imported = await b.admin('/v1/displays/import', { method: 'POST', body: { file } });
  t.equal(imported.status, 201, 'imported on the fresh site');
  const result = imported.json as { display: { id: string; folder_id: string; document: ExportFile['document']; lint: Array<{ code: string }> }; references: Array<{ pointer: string; id: string | null; reason: string | null }> };
  const traces = result.display.document.widgets[0].bindings.traces;
  t.same(traces[0].attribute, { kind: 'attribute-id', attribute_id: idB('/Site/P1|Flow') }, 'the attribute id is the new site\'s');
  t.same(traces[1].attribute, { kind: 'unresolved', name: '/Site/P9|Flow', reason: 'no attribute at /Site/P9|Flow on this site' }, 'what the site lacks is unresolved, with the reason');
  t.same(traces[2].attribute, { kind: 'template-relative', name: 'Flow' }, 'template-relative selectors need nothing');
  t.same(result.references.map((r) => r.id === null), [false, false, false, true]);
  t.ok(result.display.lint.some((l) => l.code === 'selector-unresolved'), 'and lint says so');
  const text = (await b.admin(`/v1/displays/${result.display.id}`)).text;
  t.ok(text.includes('"x":{"site":{"serial":98765432109876543210}}'), 'x bags survive export and import exactly');
  const folders = (await b.admin('/v1/display-folders')).json as Array<{ folder_id: string; name: string; parent_id: string | null }>;
  const pumps = folders.find((f) => f.name === 'Pumps');
  t.equal(result.display.folder_id, pumps?.folder_id, 'the folder path was created on the new site');
  t.equal(folders.find((f) => f.folder_id === pumps?.parent_id)?.name, 'Ops');

  const again = await b.admin('/v1/displays/import', { method: 'POST', body: { file } });
  t.equal((again.json as { display: { folder_id: string } }).display.folder_id, pumps?.folder_id, 'a second import finds the folders instead of duplicating them');

  const roundTrip = (await b.admin(`/v1/displays/${result.display.id}/export`)).json as ExportFile;
  t.same(roundTrip.references.map((r) => r.path ?? r.name), ['/Site/P1|Flow', 'cubic metre per hour', 'Volume flow rate'], 'exported again from the new site: the same names');

  const renamed = structuredClone(file);
  renamed.references[1].name = 'furlongs per fortnight';
  const partial = await b.admin('/v1/displays/import', { method: 'POST', body: { file: renamed } });
  const unit = (partial.json as { references: Array<{ pointer: string; id: string | null; reason: string | null }> }).references[1];
  t.same(unit, { pointer: '/widgets/0/bindings/traces/0/unit_id', kind: 'unit', id: null, reason: 'no unit named "furlongs per fortnight" in this site\'s registry' });

  const hostile = structuredClone(file);
  hostile.references[0].pointer = '/x/__proto__/polluted';
  const refused = await b.admin('/v1/displays/import', { method: 'POST', body: { file: hostile } });
  t.equal(refused.status, 400, 'a pointer outside the selectors is refused');
  t.match(refused.json, { details: { errors: [{ field: 'body.file.references.0.pointer' }] } });
  const wrongPlace = structuredClone(file);
  wrongPlace.references[0].pointer = '/widgets/0/bindings/traces/2/attribute';
  t.equal((await b.admin('/v1/displays/import', { method: 'POST', body: { file: wrongPlace } })).status, 400, 'a pointer at a selector that is not an attribute id is refused');
  t.equal((await b.admin('/v1/displays/import', { method: 'POST', body: { file: { ...file, format: 'something-else' } } })).status, 400);
});
