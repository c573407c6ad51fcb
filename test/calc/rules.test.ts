// Calculation rules through the real HTTP routes: create, read, list with filters, new
// versions by PUT (recompute required), retire, the version history and as-of reads; and
// the 400s a rule is refused with: parse, unit, reference, type, cycle, field errors.
import t from 'tap';
import { startPlant, templateRule, PRESSURE, BAR, type Plant } from './calc-fixture.js';
import { until } from '../helpers/ingest.js';
import { nowNs } from '../../src/clock.js';

interface Stored { rule_id: string; version: bigint | number; retired: boolean; tx_id: bigint | number; valid_from_ns: bigint; name: string; expression: string }
interface Envelope { code: string; error: string; details?: Record<string, unknown> }

t.test('calculation rules', async (t) => {
  const p: Plant = await startPlant(t, 2);
  const head = templateRule(p, 'pump head', 'Head', "Discharge - Suction");

  t.test('create, read, list, versions, retire and as-of', async (t) => {
    const created = await p.api<{ rule_id: string; version: number }>('POST', '/v1/model/calc/rules', head, 201);
    t.equal(Number(created.version), 1);
    const got = await p.api<Stored>('GET', `/v1/model/calc/rules/${created.rule_id}`);
    t.match(got, { rule_id: created.rule_id, name: 'pump head', retired: false, expression: 'Discharge - Suction', tier: 'expression', unit_check: 'strict' });
    t.equal(Number(got.version), 1);
    const byTemplate = await p.api<Stored[]>('GET', `/v1/model/calc/rules?template_id=${p.templateId}`);
    t.same(byTemplate.map((r) => r.rule_id), [created.rule_id], 'listed under its template');
    t.same(await p.api('GET', `/v1/model/calc/rules?asset_id=${p.pumps[0].assetId}`), [], 'not an asset rule');
    const beforeV2 = nowNs();
    await new Promise((r) => setTimeout(r, 5));

    const missing = await p.call('PUT', `/v1/model/calc/rules/${created.rule_id}`, head);
    t.equal(missing.status, 400, 'PUT without recompute is refused');
    t.match(JSON.stringify((missing.json as Envelope).details), /recompute/);
    const v2 = await p.api<{ version: number }>('PUT', `/v1/model/calc/rules/${created.rule_id}?recompute=from-now`, { ...head, expression: 'Discharge - Suction + 0 bar' });
    t.equal(Number(v2.version), 2);
    const current = await p.api<Stored>('GET', `/v1/model/calc/rules/${created.rule_id}`);
    t.equal(current.expression, 'Discharge - Suction + 0 bar');
    const old = await p.api<Stored>('GET', `/v1/model/calc/rules/${created.rule_id}?as_of_ns=${beforeV2}`);
    t.equal(old.expression, 'Discharge - Suction', 'as_of_ns reads the version then current');
    t.equal(Number(old.version), 1);

    const retired = await p.api<Stored>('POST', `/v1/model/calc/rules/${created.rule_id}/retire`, { reason: 'replaced' });
    t.equal(retired.retired, true);
    t.equal(Number(retired.version), 3);
    const again = await p.call('POST', `/v1/model/calc/rules/${created.rule_id}/retire`, {});
    t.equal(again.status, 409, 'retiring twice is a conflict');
    const versions = await p.api<Stored[]>('GET', `/v1/model/calc/rules/${created.rule_id}/versions`);
    t.same(versions.map((v) => [Number(v.version), v.retired]), [[1, false], [2, false], [3, true]]);
    const events = await p.api<Array<{ events: Array<{ entity_kind: string; entity_id: string; action: string }> }>>('GET', '/v1/model/events?since_tx=0&limit=1000');
    t.same(events.flatMap((tx) => tx.events).filter((e) => e.entity_id === created.rule_id).map((e) => e.action), ['created', 'updated', 'retired'], 'each change is a model transaction');
    t.equal((await p.call('GET', '/v1/model/calc/rules/00000000-0000-4000-8000-000000000000')).status, 404);
    t.equal((await p.call('PUT', '/v1/model/calc/rules/00000000-0000-4000-8000-000000000000?recompute=history', head)).status, 404);
  });

  t.test('an asset rule', async (t) => {
    const pump = p.pumps[1];
    const body = { ...head, name: 'ratio on P2', scope: { asset_id: pump.assetId, output_attribute_id: pump.attrs.Ratio }, unit_check: 'off', expression: 'Discharge / Suction' };
    const r = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', body, 201);
    t.same((await p.api<Stored[]>('GET', `/v1/model/calc/rules?asset_id=${pump.assetId}`)).map((x) => x.rule_id), [r.rule_id]);
    await p.api('POST', `/v1/model/calc/rules/${r.rule_id}/retire`, {});
  });

  t.test('refusals name the field and the problem', async (t) => {
    const refuse = async (body: unknown, code: string, what: string): Promise<Envelope> => {
      const r = await p.call('POST', '/v1/model/calc/rules', body);
      t.equal(r.status, 400, `${what}: 400`);
      const env = r.json as Envelope;
      t.equal(env.code, code, `${what}: ${code}`);
      return env;
    };
    const parse = await refuse({ ...head, expression: 'Discharge - * Suction' }, 'invalid-expression', 'a parse error');
    t.match(parse.details, { field: 'expression', position: { offset: Number } }, 'a parse error says where');
    t.ok(Array.isArray(parse.details?.expected), 'and what was expected');
    const unit = await refuse({ ...head, expression: 'Discharge + Flow' }, 'unit-mismatch', 'a pressure plus a flow');
    t.match(JSON.stringify(unit.details), /Pressure/);
    t.match(JSON.stringify(unit.details), /Volume flow rate/);
    const ref = await refuse({ ...head, expression: "Discharge - 'Inlet Pressure'" }, 'unknown-reference', 'an unknown attribute');
    t.match(ref.details, { reference: 'Inlet Pressure' });
    await refuse({ ...head, expression: 'Flow * 2' }, 'unit-mismatch', 'a flow written to a pressure output');
    const when = await refuse({ ...head, when: 'Flow + 1' }, 'type-mismatch', 'a when that is not a condition');
    t.match(when.details, { field: 'when' });
    const f = await refuse({ ...head, tier: 'summary' }, 'invalid-request', 'an unknown tier');
    t.match(JSON.stringify(f.details), /tier/);
    await refuse({ ...head, unit_check: 'lenient' }, 'invalid-request', 'an unknown unit_check');
    await refuse({ ...head, provisional: 'maybe' }, 'invalid-request', 'an unknown provisional');
    await refuse({ ...head, trigger: { kind: 'periodic', interval_ns: 1000, align: null } }, 'invalid-request', 'a periodic interval under 100 ms');
    await refuse({ ...head, trigger: { kind: 'hourly' } }, 'invalid-request', 'an unknown trigger kind');
    await refuse({ ...head, colour: 'red' }, 'invalid-request', 'an unknown field');
    await refuse({ ...head, scope: { template_id: p.templateId, output_attr_def_id: p.pumps[0].attrs.Head } }, 'invalid-request', 'an output that is not a definition of the template');
    await refuse({ ...head, expression: null }, 'invalid-request', 'an expression rule without an expression');
  });

  t.test('a cycle across rules is refused and spelled out', async (t) => {
    const a = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'mean', 'Mean', 'Head', { unit_check: 'strict' }), 201);
    const b = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'head from mean', 'Head', 'Mean + 1 bar'), 201).catch(async () => null);
    t.ok(b === null, 'the second rule closes a cycle');
    const r = await p.call('POST', '/v1/model/calc/rules', templateRule(p, 'head from mean', 'Head', 'Mean + 1 bar'));
    t.equal(r.status, 400);
    const env = r.json as Envelope;
    t.equal(env.code, 'calc-cycle');
    const steps = (env.details?.cycle as Array<{ rule_id: string; input: string; output: string }>);
    t.ok(steps.length >= 2, 'each step of the cycle is listed');
    t.ok(steps.some((s) => s.rule_id === a.rule_id), 'naming the existing rule');
    t.match(env.error, /Mean/, 'and the attributes it goes through');
    const self = await p.call('POST', '/v1/model/calc/rules', templateRule(p, 'self', 'Alarm', 'Alarm + 1', { unit_check: 'off' }));
    t.equal((self.json as Envelope).code, 'calc-cycle', 'an output read by its own rule');
    const dup = await p.call('POST', '/v1/model/calc/rules', templateRule(p, 'second mean', 'Mean', 'Suction'));
    t.equal(dup.status, 400, 'a second rule writing the same output');
    await p.api('POST', `/v1/model/calc/rules/${a.rule_id}/retire`, {});
  });

  t.test('two concurrent saves cannot together make a cycle', async (t) => {
    // Each rule alone is fine; together Mean reads Head and Head reads Mean. The graph check
    // runs in the writing transaction under one lock, so the second to commit sees the first.
    for (let round = 0; round < 3; round++) {
      const [x, y] = await Promise.all([
        p.call('POST', '/v1/model/calc/rules', templateRule(p, `mean ${round}`, 'Mean', 'Head')),
        p.call('POST', '/v1/model/calc/rules', templateRule(p, `head ${round}`, 'Head', 'Mean + 1 bar')),
      ]);
      t.same([x.status, y.status].sort(), [201, 400], `round ${round}: one is saved, the other refused`);
      const refused = x.status === 400 ? x : y;
      t.equal((refused.json as Envelope).code, 'calc-cycle', 'as a cycle');
      const saved = (x.status === 201 ? x : y).json as { rule_id: string };
      await p.api('POST', `/v1/model/calc/rules/${saved.rule_id}/retire`, {});
    }
  });

  t.test('path references of a template with no assets: accepted, then checked per asset', async (t) => {
    const def = (name: string, writer: string) => ({ name, quantity_kind_id: PRESSURE, default_unit_id: BAR, continuity_class: 'stepped', writer_class: writer, enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] });
    const tpl = await p.api<{ template_id: string; attributes: Array<[string, { name: string }]> }>('POST', '/v1/model/templates', { name: 'Seal', attributes: [def('Film', 'calculation'), def('Spare', 'calculation')] }, 201);
    const defs = Object.fromEntries(tpl.attributes.map(([id, d]) => [d.name, id]));
    const body = (name: string, output: string, expression: string) => ({ name, scope: { template_id: tpl.template_id, output_attr_def_id: defs[output] }, tier: 'expression', trigger: { kind: 'event', debounce_ms: 0 }, unit_check: 'strict', provisional: 'emit', expression });
    const rule = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', body('film', 'Film', "'..|Discharge' - 1 bar"), 201);
    t.ok(rule.rule_id, 'saved while the template has no assets (the parent is unknown)');
    // One seal under a pump (the path resolves), one at the top level (it has no parent).
    const under = await p.api<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'S1', parent: p.pumps[0].assetId, template_id: tpl.template_id });
    const stray = await p.api<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'S0', parent: null, template_id: tpl.template_id });
    interface St { assets: Array<{ asset_id: string; output_series: string | null; last_error: string | null }> }
    let st: St = { assets: [] };
    await until(async () => {
      st = await p.api<St>('GET', `/v1/calc/rules/${rule.rule_id}/status`);
      return st.assets.some((a) => a.asset_id === under.asset_id && a.output_series !== null) && st.assets.some((a) => a.asset_id === stray.asset_id);
    });
    t.match(st.assets.find((a) => a.asset_id === stray.asset_id), { output_series: null, last_error: /"\.\.\|Discharge" does not resolve/ }, 'the asset the path does not resolve from has a status error');
    t.equal(st.assets.find((a) => a.asset_id === under.asset_id)?.last_error, null, 'the other runs');
    // With assets, a path that no asset resolves is refused as before.
    const none = await p.call('POST', '/v1/model/calc/rules', body('spare', 'Spare', "'..|Nowhere' * 2"));
    t.equal(none.status, 400);
    t.equal((none.json as Envelope).code, 'unknown-reference');
    await p.api('POST', `/v1/model/calc/rules/${rule.rule_id}/retire`, {});
  });
});
