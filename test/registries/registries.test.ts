import t from 'tap';
import { startTestService, request } from '../helpers/service.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';

type Entry = Record<string, unknown> & { id: string; name: string };
type Envelope = { code: string; error: string; details: Record<string, unknown> & { entry: Entry; variant: string } };

t.test('governed registries over HTTP', async (t) => {
  const svc = await startTestService(t);
  const base = `${svc.url}/v1/model/registries`;
  const post = (kind: string, body: unknown) => request(`${base}/${kind}/entries`, { method: 'POST', body });
  const list = async (kind: string) => {
    const items: Entry[] = [];
    let cursor: string | null = null;
    do {
      const r = await request(`${base}/${kind}?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      t.equal(r.status, 200);
      const page = r.json as { items: Entry[]; next_cursor: string | null };
      items.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
    return items;
  };

  t.test('system units and quantity kinds are seeded with exact factors and stable ids', async (t) => {
    const units = await list('units');
    const celsius = units.find((u) => u.symbol === '°C');
    t.ok(celsius, 'degree Celsius is seeded');
    t.equal(celsius?.id, systemEntryId('units', 'degree Celsius'), 'a system id is derived from the name');
    t.equal(celsius?.system, true);
    t.equal(celsius?.to_canonical_factor, 1);
    t.equal(celsius?.to_canonical_offset, 273.15);
    const fahrenheit = units.find((u) => u.symbol === '°F');
    t.equal(fahrenheit?.to_canonical_factor, 5 / 9);
    t.equal(fahrenheit?.to_canonical_offset, 255.37222222222223, '459.67·5/9 rounded once');
    const bar = units.find((u) => u.symbol === 'bar');
    t.equal(bar?.to_canonical_factor, 100000);
    const kinds = await list('quantity-kinds');
    const temperature = kinds.find((k) => k.name === 'Temperature');
    t.equal(temperature?.canonical_unit_id, systemEntryId('units', 'kelvin'));
    t.equal(celsius?.kind_id, temperature?.id);
    const flow = kinds.find((k) => k.name === 'Volume flow rate');
    t.equal(flow?.integrates_to, kinds.find((k) => k.name === 'Volume')?.id, 'volume flow integrates to volume');
    const names = units.map((u) => u.name);
    t.same(names, [...names].sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1)), 'pages come in name order, without repeats');
    t.equal(new Set(units.map((u) => u.id)).size, units.length);
    const one = await request(`${base}/units/entries/${celsius?.id}`);
    t.equal(one.status, 200);
    t.same(one.json, celsius);
    t.equal(typeof (one.json as Entry).tx_id, 'number');
  });

  t.test('a new quantity kind brings its canonical unit, and units convert to it', async (t) => {
    const r = await post('quantity-kinds', { name: 'Torque', canonical_unit_name: 'newton metre', canonical_unit_symbol: 'N·m' });
    t.equal(r.status, 201);
    const qk = r.json as Entry;
    t.equal(qk.system, false);
    const canonical = await request(`${base}/units/entries/${qk.canonical_unit_id}`);
    t.equal(canonical.status, 200);
    t.match(canonical.json, { name: 'newton metre', symbol: 'N·m', kind_id: qk.id, to_canonical_factor: 1, to_canonical_offset: 0 });
    const u = await post('units', { name: 'kilonewton metre', symbol: 'kN·m', kind_id: qk.id, to_canonical_factor: 1000 });
    t.equal(u.status, 201);
    t.match(u.json, { to_canonical_factor: 1000, to_canonical_offset: 0, kind_id: qk.id });
    const variant = await post('units', { name: 'newton-metre alt', symbol: 'N*m', kind_id: qk.id, to_canonical_factor: 1 });
    t.equal(variant.status, 409, 'N*m is a symbol variant of N·m');
    t.equal((variant.json as Envelope).code, 'duplicate-entry');
    t.equal((variant.json as Envelope).details.variant, 'symbol');
  });

  t.test('the dedupe gate refuses case, spacing and punctuation variants with the clashing entry', async (t) => {
    const first = await post('annotation-tags', { name: 'Maintenance Window' });
    t.equal(first.status, 201);
    const original = first.json as Entry;
    for (const [name, variant] of [['maintenance window', 'case'], ['MaintenanceWindow', 'spacing'], ['maintenance-window', 'punctuation'], ['Maintenance_Window!', 'punctuation']]) {
      const r = await post('annotation-tags', { name });
      t.equal(r.status, 409, `"${name}" is refused`);
      const e = r.json as Envelope;
      t.equal(e.code, 'duplicate-entry');
      t.equal(e.details.variant, variant, `"${name}" is a ${variant} variant`);
      t.same(e.details.entry, original, 'details carry the clashing entry');
    }
    const same = await post('annotation-tags', { name: 'Maintenance Window', override: { rationale: 'really' } });
    t.equal(same.status, 409, 'a byte-identical name is never allowed');
    t.equal((same.json as Envelope).code, 'name-conflict');
    const distinct = await post('annotation-tags', { name: 'Maintenance Done' });
    t.equal(distinct.status, 201, 'a different name passes');
  });

  t.test('opposite polarity is a duplicate where the kind is two-sided, and only there', async (t) => {
    const open = await post('enum-concepts', { name: 'Valve Open' });
    t.equal(open.status, 201);
    for (const name of ['Valve Closed', 'Valve not open', 'open valve']) {
      const r = await post('enum-concepts', { name });
      t.equal(r.status, 409, `"${name}" is refused`);
      t.equal((r.json as Envelope).details.variant, 'polarity');
      t.equal((r.json as Envelope).details.entry.id, open.json && (open.json as Entry).id);
    }
    t.equal((await post('link-types', { name: 'feeds' })).status, 201);
    const fed = await post('link-types', { name: 'fed by' });
    t.equal(fed.status, 409, '"fed by" is the inverse of "feeds"');
    t.equal((await post('link-types', { name: 'upstream of' })).status, 201);
    t.equal((await post('link-types', { name: 'downstream of' })).status, 409);
    t.equal((await post('annotation-tags', { name: 'High alarm' })).status, 201);
    t.equal((await post('annotation-tags', { name: 'Low alarm' })).status, 201, 'tags are not two-sided: high and low alarms are both tags');
  });

  t.test('an override claim with a rationale lets a variant in and is recorded', async (t) => {
    const closed = await post('enum-concepts', { name: 'Valve Closed', override: { rationale: 'legacy DCS tags report closed=1' } });
    t.equal(closed.status, 201);
    const e = closed.json as Entry;
    t.equal(e.rationale, 'legacy DCS tags report closed=1');
    const events = await svc.service.context.db.query<{ details: Record<string, unknown> }>(
      `SELECT details FROM model_event WHERE entity_id = $1`, [e.id]);
    t.match(events.rows[0].details, { kind: 'enum-concepts', override: { rationale: 'legacy DCS tags report closed=1', principal: 'local-administrator', overrides: [{ name: 'Valve Open', variant: 'polarity' }] } });
    const flag = await post('link-types', { name: 'fed by', override: true, rationale: 'kept for the old importer' });
    t.equal(flag.status, 201, 'override true with a top-level rationale');
  });

  t.test('an override claim without a rationale, or naming the wrong entry, is rejected with 400', async (t) => {
    const bare = await post('enum-concepts', { name: 'Pump Stopped', override: true });
    t.equal(bare.status, 400);
    t.match((bare.json as Envelope).error, /rationale/);
    const blank = await post('enum-concepts', { name: 'Pump Stopped', override: { rationale: '  ' } });
    t.equal(blank.status, 400);
    const unknown = await post('enum-concepts', { name: 'Pump Stopped', override: { rationale: 'x', because: 1 } });
    t.equal(unknown.status, 400);
    t.equal((await post('enum-concepts', { name: 'Pump Running' })).status, 201);
    const wrong = await post('enum-concepts', { name: 'Pump Stopped', override: { rationale: 'x', entry_id: systemEntryId('units', 'kelvin') } });
    t.equal(wrong.status, 400, 'the claim names an entry this one does not clash with');
  });

  t.test('enum sets validate their members', async (t) => {
    const concept = (await post('enum-concepts', { name: 'Motor Running State' })).json as Entry;
    const ok = await post('enum-sets', { name: 'Motor state', members: [{ ordinal: 0, name: 'stopped' }, { ordinal: 1, name: 'running', concept_id: concept.id }] });
    t.equal(ok.status, 201);
    t.same((ok.json as Entry).members, [{ ordinal: 0, name: 'stopped' }, { ordinal: 1, name: 'running', concept_id: concept.id }]);
    const twice = await post('enum-sets', { name: 'Other set', members: [{ ordinal: 0, name: 'a' }, { ordinal: 0, name: 'b' }] });
    t.equal(twice.status, 400);
    t.match((twice.json as { details: { errors: Array<{ field: string }> } }).details.errors[0].field, 'members[1].ordinal');
    t.equal((await post('enum-sets', { name: 'Empty set', members: [] })).status, 201, 'an empty set is allowed (the lints flag it)');
  });

  t.test('malformed entries are 400 naming the field', async (t) => {
    const cases: Array<[string, unknown, string]> = [
      ['units', { name: 'furlong', symbol: 'fur', to_canonical_factor: 201.168 }, 'kind_id'],
      ['units', { name: 'furlong', symbol: 'fur', kind_id: systemEntryId('units', 'kelvin'), to_canonical_factor: 201.168 }, 'kind_id'],
      ['units', { name: 'furlong', symbol: 'fur', kind_id: systemEntryId('quantity-kinds', 'Length'), to_canonical_factor: 0 }, 'to_canonical_factor'],
      ['link-types', { name: 'feeds into', symbol: 'x' }, 'symbol'],
      ['annotation-tags', { name: ' padded' }, 'name'],
      ['quantity-kinds', { name: 'Luminance' }, 'canonical_unit_name'],
      ['quantity-kinds', { name: 'Luminance', canonical_unit_name: 'nit', canonical_unit_symbol: 'nt', integrates_to: systemEntryId('units', 'kelvin') }, 'integrates_to'],
    ];
    for (const [kind, body, field] of cases) {
      const r = await post(kind, body);
      t.equal(r.status, 400, `${kind} ${JSON.stringify(body)}`);
      t.match(JSON.stringify((r.json as { details: unknown }).details), field);
    }
    const furlong = await post('units', { name: 'furlong', symbol: 'fur', kind_id: systemEntryId('quantity-kinds', 'Length'), to_canonical_factor: 201.168 });
    t.equal(furlong.status, 201);
    t.equal((furlong.json as Entry).to_canonical_factor, 201.168);
    const badKind = await request(`${base}/colours`);
    t.equal(badKind.status, 400);
    const missing = await request(`${base}/units/entries/${systemEntryId('quantity-kinds', 'Length')}`);
    t.equal(missing.status, 404, 'an id of another kind is not found in this one');
  });

  t.test('entries are versioned: a read as of before the entry does not see it', async (t) => {
    const before = BigInt(Date.now() - 60_000) * 1_000_000n;
    const r = await post('episode-roles', { name: 'Feed tank' });
    const id = (r.json as Entry).id;
    t.equal((await request(`${base}/episode-roles/entries/${id}?as_of_ns=${before}`)).status, 404);
    t.equal((await request(`${base}/episode-roles/entries/${id}`)).status, 200);
    const asOf = await request(`${base}/units?as_of_ns=${before}`);
    t.same((asOf.json as { items: Entry[] }).items, [], 'no units existed a minute before the service started');
  });
});
