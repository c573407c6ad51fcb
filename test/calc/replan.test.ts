// The engine plans again only the rules a model commit can change (replan-scope.ts): a
// binding on one pump re-plans the template rule running there, not a rule scoped on the
// other pump; a rule's new version re-plans that rule alone. The re-planned rule reads the
// new binding: the output at its start comes from the new series.
import t from 'tap';
import { startPlant, templateRule, sendPoints, SEC } from './calc-fixture.js';
import { readAll, until, connect } from '../helpers/ingest.js';
import { nowNs } from '../../src/clock.js';

/** Conditions on a loaded 2-core box; each wait ends as soon as it holds. */
const LOADED_MS = 30_000;

t.test('re-planning follows what a model commit touched', async (t) => {
  const p = await startPlant(t, 2);
  const engine = p.svc.service.context.parts.calc;
  const [p1, p2] = p.pumps;
  const own = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules',
    { ...templateRule(p, 'p1 ratio', 'Ratio', 'Discharge', { unit_check: 'off' }), scope: { asset_id: p1.assetId, output_attribute_id: p1.attrs.Ratio } }, 201);
  const head = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'head', 'Head', 'Discharge - Suction'), 201);
  await until(() => engine.planOf(own.rule_id) !== undefined && engine.planOf(head.rule_id) !== undefined && engine.statesOf(head.rule_id).length === 2, LOADED_MS);
  await engine.idle(LOADED_MS); // both creations planned (the first reload may plan both, the second again)
  const ownPlan = engine.planOf(own.rule_id);
  const headPlan = engine.planOf(head.rule_id);

  // P2 runs on its first series; then its Discharge moves to a new series from t1 on.
  const base = (nowNs() / SEC - 60n) * SEC;
  const t1 = base + 10n * SEC;
  const out = headPlan?.targets.find((x) => x.assetId === p2.assetId)?.outputSeries as string;
  await sendPoints(p, p.stream(1, 'Discharge'), [base], [100]);
  await sendPoints(p, p.stream(1, 'Suction'), [base], [1]);
  await until(() => readAll(p.svc, out).some((x) => x.ts === base && x.value === 99), LOADED_MS);
  const other = await connect(p.svc, { collectorId: 'replacement', streams: [{ name: 'p2.Discharge.new', type: 'float64' }] });
  t.teardown(() => other.close());
  await p.api('POST', '/v1/model/bindings', { attribute_id: p2.attrs.Discharge, series_id: other.welcome.streams[0].series_id, from_ns: t1 }, 201);
  await until(() => engine.planOf(head.rule_id) !== headPlan, LOADED_MS);
  t.equal(engine.planOf(own.rule_id), ownPlan, 'the rule scoped on P1 is not planned again for a binding on P2');
  const p2Head = engine.planOf(head.rule_id)?.targets.find((x) => x.assetId === p2.assetId);
  t.equal(p2Head?.seriesByRef.get('Discharge'), other.welcome.streams[0].series_id, 'the template rule reads P2\'s new series');

  // At t1 the output comes from the new series (the old one's 100 would give 98).
  const r = await other.send('LIVE', 0, 'float64', { times: BigInt64Array.of(t1), values: Float64Array.of(50), quality: null });
  t.ok(r.ok);
  await sendPoints(p, p.stream(1, 'Suction'), [t1], [2]);
  await until(() => readAll(p.svc, out).some((x) => x.ts === t1 && x.value === 48), LOADED_MS);
  t.same(readAll(p.svc, out).filter((x) => x.ts >= base).map((x) => [x.ts, x.value]), [[base, 99], [t1, 48]], 'the old series before the binding moved, the new one from t1');

  // A new version of one rule re-plans that rule alone.
  const headNow = engine.planOf(head.rule_id);
  await p.api('PUT', `/v1/model/calc/rules/${own.rule_id}?recompute=from-now`, { ...templateRule(p, 'p1 ratio', 'Ratio', 'Discharge * 2', { unit_check: 'off' }), scope: { asset_id: p1.assetId, output_attribute_id: p1.attrs.Ratio } });
  await until(() => engine.planOf(own.rule_id)?.rule.version === 2, LOADED_MS);
  t.equal(engine.planOf(head.rule_id), headNow, 'the template rule is not planned again for another rule\'s version');
});
