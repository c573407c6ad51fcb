// Lint, resolve, time and the navigator over the real service (one server for the file):
// a plant of two pumps from one template, a display written for the template, resolved in
// one pump then swapped to the other; lint codes against the model; time expressions in the
// asset's zone and shift starts; anchored windows with their reasons; the navigator's
// min/max overview drawn from points written through the storage engine.
import t from 'tap';
import { startAuthService, createPerson, login, type Client } from '../helpers/auth.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';
import { displayDoc, trace } from './fixtures.js';

const FLOW = systemEntryId('quantity-kinds', 'Volume flow rate');
const M3H = systemEntryId('units', 'cubic metre per hour');
const TEMPERATURE = systemEntryId('quantity-kinds', 'Temperature');
const CELSIUS = systemEntryId('units', 'degree Celsius');
const MS = 1_000_000n;
const SEC = 1_000_000_000n;
const at = (iso: string) => BigInt(Date.parse(iso)) * MS;
const WHO = { principal: 'tester' };

const def = (name: string, kind: string | null, unit: string | null) => ({
  name, quantity_kind_id: kind, default_unit_id: unit, continuity_class: 'continuous', writer_class: 'collector',
  enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [],
});

interface Selector { widget_id: string; pointer: string; resolved: { kind: string; attribute_id?: string; reason?: string }; path: string | null }

t.test('displays: lint, resolve with a context swap, time, navigator', async (t) => {
  const svc = await startAuthService(t);
  const admin = svc.admin;
  const parts = svc.service.context.parts;
  const ok = async <T>(path: string, body: unknown, status = 200, method = 'POST', client: Client = admin): Promise<T> => {
    const r = await client(path, { method, body });
    if (r.status !== status) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json as T;
  };
  const tpl = await ok<{ template_id: string }>('/v1/model/templates', { name: 'Pump', attributes: [def('Flow', FLOW, M3H), def('Temp', TEMPERATURE, CELSIUS)] }, 201);
  const plant = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'Plant', timezone: 'Europe/Berlin' });
  const p1 = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'P1', parent: plant.asset_id, template_id: tpl.template_id });
  const p2 = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'P2', parent: plant.asset_id, template_id: tpl.template_id });
  await ok('/v1/model/assets', { name: 'Motor', parent: p1.asset_id, template_id: tpl.template_id });
  await ok(`/v1/model/assets/${plant.asset_id}/properties/shift_starts`, { value: ['06:00', '14:00', '22:00'] }, 200, 'PUT');
  const attrs = (await ok<{ results: Array<{ attribute_id: string; path: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } })).results;
  const id = (path: string) => attrs.find((a) => a.path === path)!.attribute_id;

  await createPerson(admin, 'nina-author', 'nina author password', 'engineer');
  const author = await login(svc.url, 'nina-author', 'nina author password');
  const folder = await ok<{ folder_id: string }>('/v1/display-folders', { name: 'Pumps' }, 201, 'POST', author);
  const doc = displayDoc({
    template: 'Pump',
    traces: [
      trace({ kind: 'template-relative', name: 'Flow' }, 'Flow'),
      trace({ kind: 'template-relative', name: 'Temp' }, 'Temp'),
      trace({ kind: 'template-relative', name: 'Motor|Temp' }, 'Motor temp', { scale_group: 'g2' }),
      trace({ kind: 'template-relative', name: 'Nope' }, 'Nope', { scale_group: 'g2' }),
      trace({ kind: 'attribute-id', attribute_id: id('/Plant/P2|Flow') }, 'P2 flow', { scale_group: 'g3', unit_id: '00000000-0000-4000-8000-00000000dead' }),
      trace({ kind: 'unresolved', name: 'Old tag', reason: 'renamed at the site' }, 'Old', { scale_group: 'g2' }),
    ],
  });
  (doc.widgets as unknown[]).push(
    { type: 'trend', id: 't1', bindings: { kind: 'trend', traces: [] }, time_override: { start: '*', end: '*-1h' } },
    { type: 'treemap', id: 'tm', layer: 'nowhere', bindings: { attribute: { kind: 'template-relative', name: '..|Flow' } } },
    { type: 'table', id: 'tb' },
    { type: 'episode-gantt', id: 'eg', range: { type: 'anchored', anchor: { kind: 'episode', episode_id: '00000000-0000-4000-8000-000000000001' } } },
    { type: 'sparkline', id: 'sp', bindings: { attributes: [{ kind: 'template-relative', name: 'Flow' }] }, range: { type: 'absolute', start: 't+', end: '*' } },
  );
  (doc.priority_order as string[]).push('ghost');
  const created = await ok<{ id: string; lint: Array<{ code: string; widget_id: string | null; severity: string; message: string }> }>('/v1/displays', { folder_id: folder.folder_id, document: doc }, 201, 'POST', author);

  await t.test('lint: stable codes with severity and widget id, on the record and its own route', async (t) => {
    const lint = (await author(`/v1/displays/${created.id}/lint`)).json as typeof created.lint;
    t.same(lint, created.lint, 'the route answers the record\'s lint');
    const has = (code: string, widget: string | null, severity: string) => t.ok(lint.some((l) => l.code === code && l.widget_id === widget && l.severity === severity), `${code} on ${widget} (${severity})`);
    has('scale-group-incompatible-units', 't1', 'error');
    has('attribute-unresolved', 't1', 'error');
    has('selector-unresolved', 't1', 'warning');
    has('scale-group-unknown', 't1', 'warning');
    has('unit-unknown', 't1', 'warning');
    has('widget-id-duplicate', 't1', 'error');
    has('time-window-inverted', 't1', 'error');
    has('widget-kind-no-renderer', 'tm', 'info');
    has('layer-unknown', 'tm', 'warning');
    has('widget-unbound', 'tb', 'warning');
    has('anchor-unresolvable', 'eg', 'error');
    has('time-invalid', 'sp', 'error');
    has('priority-order-unknown-widget', null, 'warning');
    t.notOk(lint.some((l) => l.code === 'attribute-unresolved' && /Motor\|Temp|"Flow"/.test(l.message)), 'names the template defines (and child paths) are not flagged');
    const clean = await ok<{ lint: unknown[] }>('/v1/displays', { folder_id: folder.folder_id, document: displayDoc({ name: 'Clean', template: 'Pump' }) }, 201, 'POST', author);
    t.same(clean.lint, [], 'a clean display has no findings');
    const unknownTemplate = await ok<{ lint: Array<{ code: string }> }>('/v1/displays', { folder_id: folder.folder_id, document: displayDoc({ name: 'T', template: 'Compressor' }) }, 201, 'POST', author);
    t.same(unknownTemplate.lint.map((l) => l.code), ['template-unknown']);
  });

  await t.test('resolve: template-relative selectors follow the context asset (swap asset)', async (t) => {
    const inP1 = (await author(`/v1/displays/resolve?display_id=${created.id}&asset_id=${p1.asset_id}`)).json as { asset_path: string; selectors: Selector[] };
    t.equal(inP1.asset_path, '/Plant/P1');
    const byPointer = (r: { selectors: Selector[] }, p: string) => r.selectors.find((s) => s.pointer === p)!;
    const flow = '/widgets/0/bindings/traces/0/attribute';
    t.same(byPointer(inP1, flow).resolved, { kind: 'attribute-id', attribute_id: id('/Plant/P1|Flow') });
    t.equal(byPointer(inP1, flow).path, '/Plant/P1|Flow');
    t.same(byPointer(inP1, '/widgets/0/bindings/traces/2/attribute').resolved, { kind: 'attribute-id', attribute_id: id('/Plant/P1/Motor|Temp') }, 'a child path resolves under the context');
    t.match(byPointer(inP1, '/widgets/0/bindings/traces/3/attribute').resolved, { kind: 'unresolved', name: 'Nope', reason: /has no attribute "Nope"/ });
    t.same(byPointer(inP1, '/widgets/0/bindings/traces/4/attribute').resolved, { kind: 'attribute-id', attribute_id: id('/Plant/P2|Flow') }, 'an attribute id stays itself');
    t.match(byPointer(inP1, '/widgets/0/bindings/traces/5/attribute').resolved, { kind: 'unresolved', reason: 'renamed at the site' });
    t.match(byPointer(inP1, '/widgets/3/bindings/attribute').resolved, { kind: 'unresolved', reason: /no attribute "Flow"/ }, '"..|Flow" climbs to the plant, which has none');

    const inP2 = (await author(`/v1/displays/resolve?display_id=${created.id}&asset_id=${p2.asset_id}`)).json as { selectors: Selector[] };
    t.same(byPointer(inP2, flow).resolved, { kind: 'attribute-id', attribute_id: id('/Plant/P2|Flow') }, 'swapped to P2, Flow is P2\'s');
    t.match(byPointer(inP2, '/widgets/0/bindings/traces/2/attribute').resolved, { kind: 'unresolved', reason: /no asset "Motor" under \/Plant\/P2/ });

    const none = (await author(`/v1/displays/resolve?display_id=${created.id}`)).json as { selectors: Selector[] };
    t.match(byPointer(none, flow).resolved, { kind: 'unresolved', reason: 'no context asset was given' });
    t.equal((await author(`/v1/displays/resolve?display_id=${created.id}&asset_id=00000000-0000-4000-8000-000000000000`)).status, 404);
    t.equal((await author('/v1/displays/resolve')).status, 400, 'display_id is required');
  });

  await t.test('time: expressions in the asset\'s zone, explicit zones, shifts, anchored windows', async (t) => {
    const now = at('2026-03-29T10:00:00Z');
    const res = async (body: Record<string, unknown>) => author('/v1/displays/time/resolve', { method: 'POST', body: { now_ns: now, ...body } });
    const w = (await res({ start: 'y+6h', end: 't', asset_id: p1.asset_id })).json as Record<string, unknown>;
    t.match(w, { state: 'resolved', start_ns: at('2026-03-28T05:00:00Z'), end_ns: at('2026-03-28T23:00:00Z'), timezone: 'Europe/Berlin', timezone_source: 'asset', reason: null });
    t.match((await res({ start: 't', end: '*', timezone: 'America/New_York', asset_id: p1.asset_id })).json, { start_ns: at('2026-03-29T04:00:00Z'), timezone_source: 'explicit' });
    t.match((await res({ start: '*-8h', end: '*' })).json, { start_ns: at('2026-03-29T02:00:00Z'), end_ns: now, timezone: 'UTC', timezone_source: 'default' });
    t.match((await res({ start: 'shift', end: '*', asset_id: p2.asset_id })).json, { start_ns: at('2026-03-29T04:00:00Z') }, 'the shift starts come from the plant\'s property');
    const noShift = await res({ start: 'shift', end: '*' });
    t.equal(noShift.status, 400);
    t.match(noShift.json, { details: { errors: [{ field: 'start', problem: /no shift definition/ }] } });
    const bad = await res({ start: '*-8q', end: '*' });
    t.equal(bad.status, 400);
    t.match(bad.json, { details: { errors: [{ field: 'start' }] } });
    const inverted = await res({ start: '*', end: '*-1h' });
    t.equal(inverted.status, 400);
    t.match(inverted.json, { details: { errors: [{ field: 'end' }] } });
    t.equal((await res({ start: '*' })).status, 400, 'start without end');
    t.equal((await res({ start: '*', end: '*', range: { type: 'last', last: '1h' } })).status, 400, 'both a pair and a range');
    t.equal((await res({ start: 't', end: '*', timezone: 'Mars/Olympus' })).status, 400);
    t.match((await res({ range: { type: 'last', last: '8h' } })).json, { state: 'resolved', start_ns: at('2026-03-29T02:00:00Z'), end_ns: now });

    const anchor = { kind: 'episode', episode_id: '00000000-0000-4000-8000-000000000001', before: '1h' };
    const anchored = (await res({ range: { type: 'anchored', anchor } })).json as { state: string; reason: string; start_ns: unknown; range: { anchor: unknown; resolved: { state: string; reason: string } } };
    t.equal(anchored.state, 'unresolved', 'an anchor that cannot resolve is unresolved, with no substituted window');
    t.equal(anchored.start_ns, null);
    t.match(anchored.reason, /episodes not available|episode 00000000-0000-4000-8000-000000000001 not found/);
    t.same(anchored.range.anchor, anchor, 'the authored anchor is kept');
    t.same(anchored.range.resolved, { state: 'unresolved', reason: anchored.reason });
    const instant = (await res({ range: { type: 'anchored', anchor: { kind: 'instant', at: 't+6h', before: '30m', after: '1h' } }, asset_id: p1.asset_id })).json as { state: string; start_ns: bigint; end_ns: bigint; range: { resolved: unknown } };
    t.match(instant, { state: 'resolved', start_ns: at('2026-03-29T04:30:00Z'), end_ns: at('2026-03-29T06:00:00Z') });
    t.same(instant.range.resolved, { state: 'resolved', start: at('2026-03-29T04:30:00Z'), end: at('2026-03-29T06:00:00Z') });
    t.match((await res({ range: { type: 'anchored', anchor: { kind: 'bookmark' } } })).json, { state: 'unresolved', reason: /unknown anchor kind/ });
  });

  await t.test('navigator: a coarse min/max overview of the trend traces around the window', async (t) => {
    const base = at('2026-01-10T00:00:00Z');
    const s = (await parts.series.create({ sourceName: 'p1/flow', valueType: 'float64' }, WHO)).id;
    await ok('/v1/model/bindings', { attribute_id: id('/Plant/P1|Flow'), series_id: s, from_ns: base - 100_000n * SEC }, 201);
    const secs = Array.from({ length: 6 * 3600 / 10 }, (_, i) => i * 10);
    const r = await parts.storage.write([{ series: s, times: BigInt64Array.from(secs, (x) => base + BigInt(x) * SEC), values: Float64Array.from(secs, (x) => x % 100), quality: Uint32Array.from(secs, () => 192) }], WHO);
    t.equal(r.refused, 0);
    const nav = await author('/v1/displays/time/navigator-context', {
      method: 'POST',
      body: { display_id: created.id, asset_id: p1.asset_id, start: '2026-01-10T02:00:00Z', end: '2026-01-10T03:00:00Z', width: 50, now_ns: at('2026-01-10T12:00:00Z') },
    });
    t.equal(nav.status, 200, 'the navigator answers');
    const body = nav.json as { window: { start_ns: bigint }; overview: { start_ns: bigint; end_ns: bigint }; traces: Array<{ attribute_id: string | null; reason: string | null }>; render: Array<{ attribute_id: string; render: { v_min: number[]; v_max: number[] } | null }> };
    t.same(body.overview, { start_ns: at('2026-01-10T00:00:00Z'), end_ns: at('2026-01-10T05:00:00Z') }, 'two window lengths either side');
    t.ok(body.traces.some((x) => x.attribute_id === id('/Plant/P1|Flow')));
    t.ok(body.traces.some((x) => x.attribute_id === null && /Nope/.test(x.reason ?? '')), 'unresolved traces say why');
    const flow = body.render.find((x) => x.attribute_id === id('/Plant/P1|Flow'));
    t.ok(flow?.render, 'the flow trace is drawn');
    t.equal(flow!.render!.v_max.length, 50, 'one column per pixel of the overview');
    t.equal(Math.max(...flow!.render!.v_max), 90);
    t.equal(Math.min(...flow!.render!.v_min), 0);
    const edge = await author('/v1/displays/time/navigator-context', {
      method: 'POST', body: { display_id: created.id, asset_id: p1.asset_id, start: '-9223372036854775807', end: '9223372036854775807', span: 100, width: 4000 },
    });
    t.equal(edge.status, 400, 'a window the expressions cannot read is a 400, never a 500');
    const wide = await author('/v1/displays/time/navigator-context', {
      method: 'POST', body: { display_id: created.id, asset_id: p1.asset_id, start: 0, end: 9_000_000_000_000_000_000n, span: 100, width: 4000 },
    });
    t.equal(wide.status, 200, 'the widest window answers');
    t.same((wide.json as { overview: unknown }).overview, { start_ns: -9_223_372_036_854_775_807n, end_ns: 9_000_000_000_000_000_000n }, 'its overview clamped to int64');
    const hidden = await admin('/v1/displays/time/navigator-context', { method: 'POST', body: { display_id: '00000000-0000-4000-8000-000000000000' } });
    t.equal(hidden.status, 404);
  });
});
