// The engine over real ingest: points sent by a gRPC collector trigger event rules, a
// periodic rule writes on its aligned grid, an edge rule where its condition rises, a late
// point corrects outputs (the old value in the audit), `provisional: block` waits for the
// inputs' watermark; status, trace and lineage (after a new version) explain it.
import t from 'tap';
import { startPlant, templateRule, sendPoints, SEC, type Plant } from './calc-fixture.js';
import { readAll, until } from '../helpers/ingest.js';
import { readRawAudit } from '../../src/storage/series-store.js';
import { nowNs } from '../../src/clock.js';

interface Status { assets: Array<{ asset_id: string; output_series: string | null; last_evaluated_ns: bigint | null; evaluations: bigint | number; errors: bigint | number; backlog: number }> }

async function outputSeries(p: Plant, ruleId: string, pump: number): Promise<string> {
  let series: string | null = null;
  await until(async () => {
    const s = await p.api<Status>('GET', `/v1/calc/rules/${ruleId}/status`);
    series = s.assets.find((a) => a.asset_id === p.pumps[pump].assetId)?.output_series ?? null;
    return series !== null;
  }, LOADED_MS);
  return series as unknown as string;
}

/**
 * How long a condition may take on a loaded 2-core box (CI runs suites side by side); the
 * waits end as soon as it holds, so this bounds a hang, not the engine's speed (bench:calc's).
 */
const LOADED_MS = 30_000;

const valuesOf = (p: Plant, series: string) => readAll(p.svc, series).map((x) => [x.ts, x.value, x.quality]);

t.test('the calculation engine', async (t) => {
  const p = await startPlant(t, 2);
  const base = (nowNs() / SEC - 600n) * SEC; // whole seconds, ten minutes ago

  t.test('event trigger: outputs follow input commits, and a late point corrects them', async (t) => {
    const rule = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'head', 'Head', 'Discharge - Suction'), 201);
    const out = await outputSeries(p, rule.rule_id, 0);
    const times = [base, base + SEC, base + 2n * SEC];
    await sendPoints(p, p.stream(0, 'Suction'), times, [1, 2, 3]);
    await sendPoints(p, p.stream(0, 'Discharge'), times, [10, 20, 30]);
    await until(() => readAll(p.svc, out).length === 3 && readAll(p.svc, out)[2].value === 27, LOADED_MS);
    t.same(valuesOf(p, out), [[times[0], 9, 192], [times[1], 18, 192], [times[2], 27, 192]], 'one output per input instant, the worst input quality');

    // A late edit of the middle suction value: the output there is recomputed (how fast is bench:calc's figure).
    await sendPoints(p, p.stream(0, 'Suction'), [times[1]], [5]);
    await until(() => readAll(p.svc, out)[1]?.value === 15, LOADED_MS);
    const audit = p.svc.service.context.parts.storage.read((v) => readRawAudit(v, out, { startNs: times[0], endNs: times[2] + 1n, limit: 10 }));
    t.same(audit.map((a) => [a.ts, a.value]), [[times[1], 18]], 'the superseded output is in the audit');

    // Progress is recorded just after the outputs are durable.
    let status = await p.api<Status>('GET', `/v1/calc/rules/${rule.rule_id}/status`);
    await until(async () => {
      status = await p.api<Status>('GET', `/v1/calc/rules/${rule.rule_id}/status`);
      return Number(status.assets.find((a) => a.asset_id === p.pumps[0].assetId)?.evaluations) >= 5;
    }, LOADED_MS);
    const s0 = status.assets.find((a) => a.asset_id === p.pumps[0].assetId);
    t.ok(s0 && BigInt(s0.last_evaluated_ns as bigint) >= times[2], 'status: evaluated through the last input');
    t.ok(s0 && Number(s0.evaluations) >= 5, 'status counts evaluations (three, then two recomputed)');
    t.equal(status.assets.length, 2, 'one row per asset of the template');

    const trace = await p.api<{ evaluations: Array<{ eval_instant_ns: bigint; value: number; rule_version: number; inputs: Array<{ reference: string; value: number }> }> }>(
      'GET', `/v1/calc/rules/${rule.rule_id}/trace?asset_id=${p.pumps[0].assetId}&start_ns=${times[1]}&end_ns=${times[1] + 1n}`); // status above waited past the write
    const last = trace.evaluations[trace.evaluations.length - 1];
    t.equal(last.value, 15, 'trace: the latest evaluation of the instant');
    t.same(last.inputs.map((i) => [i.reference, i.value]).sort(), [['Discharge', 20], ['Suction', 5]], 'with the inputs it used');

    // A new version from now on: lineage shows which version produced which window.
    await p.api('PUT', `/v1/model/calc/rules/${rule.rule_id}?recompute=from-now`, templateRule(p, 'head', 'Head', 'Discharge - Suction + 1 bar'));
    // The engine re-plans shortly after the model commit: wait for it (a fixed sleep was too short on a loaded box).
    await until(() => p.svc.service.context.parts.calc.planOf(rule.rule_id)?.rule.version === 2, LOADED_MS);
    const t3 = base + 3n * SEC;
    await sendPoints(p, p.stream(0, 'Suction'), [t3], [4]);
    await sendPoints(p, p.stream(0, 'Discharge'), [t3], [40]);
    await until(() => readAll(p.svc, out).length === 4 && readAll(p.svc, out)[3].value === 37, LOADED_MS);
    const lineage = await p.api<Array<{ rule_id: string; rule_version_range: [number, number]; windows: Array<{ rule_version: number; start_ns: bigint; end_ns: bigint }> }>>('GET', `/v1/calc/lineage?series=${out}`);
    t.equal(lineage.length, 1);
    t.same(lineage[0].rule_version_range.map(Number), [1, 2], 'both versions wrote the output');
    const v2 = lineage[0].windows.filter((w) => Number(w.rule_version) === 2);
    t.ok(v2.some((w) => BigInt(w.start_ns) <= t3 && BigInt(w.end_ns) > t3), 'the new instant is version 2\'s');
    const v1 = lineage[0].windows.filter((w) => Number(w.rule_version) === 1);
    t.ok(v1.some((w) => BigInt(w.start_ns) <= times[0]), 'the earlier ones version 1\'s');
    const byAttr = await p.api<typeof lineage>('GET', `/v1/calc/lineage?attribute_id=${p.pumps[0].attrs.Head}`);
    t.same(byAttr.map((l) => [l.rule_id, l.rule_version_range.map(Number)]), [[rule.rule_id, [1, 2]]], 'lineage by output attribute');
    t.equal((await p.call('GET', '/v1/calc/lineage')).status, 400, 'lineage needs a series or an attribute');
    const read = await p.api<Array<{ attribute_id: string; lineage?: { rule_id: string }; provenance: { lineage?: { rule_id: string } } }>>('POST', '/v1/read/raw', {
      resolve: { select: { kind: 'attribute_ids', content: [p.pumps[0].attrs.Head, p.pumps[0].attrs.Suction] }, scope: {} }, start_ns: times[0], end_ns: t3 + 1n, include_lineage: true,
    });
    const headRead = read.find((r) => r.attribute_id === p.pumps[0].attrs.Head);
    t.equal(headRead?.lineage?.rule_id, rule.rule_id, 'include_lineage: the calculated attribute carries its lineage');
    t.equal(headRead?.provenance.lineage?.rule_id, rule.rule_id, 'also in provenance.lineage');
    t.equal(read.find((r) => r.attribute_id === p.pumps[0].attrs.Suction)?.lineage, undefined, 'a collected attribute has none');
    await p.api('POST', `/v1/model/calc/rules/${rule.rule_id}/retire`, {});
  });

  t.test('periodic trigger: outputs on the aligned grid', async (t) => {
    const rule = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'mean', 'Mean', 'avg(Suction, 10s)', {
      trigger: { kind: 'periodic', interval_ns: 500_000_000, align: 0 },
    }), 201);
    const out = await outputSeries(p, rule.rule_id, 1);
    const now = nowNs();
    await sendPoints(p, p.stream(1, 'Suction'), [now - 5n * SEC, now - SEC], [2, 4]);
    await until(() => readAll(p.svc, out).length >= 2, LOADED_MS);
    const pts = readAll(p.svc, out);
    t.ok(pts.every((x) => x.ts % 500_000_000n === 0n), 'every output instant is on the 500 ms grid');
    t.ok(pts.every((x) => typeof x.value === 'number' && x.value >= 2 && x.value <= 4), 'the trailing average of the inputs');
    await p.api('POST', `/v1/model/calc/rules/${rule.rule_id}/retire`, {});
  });

  t.test('edge trigger: evaluated where the condition becomes true', async (t) => {
    const rule = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'alarm', 'Alarm', 'Flow', {
      unit_check: 'off', trigger: { kind: 'edge', edge: 'rising', expr: 'Flow > 10' },
    }), 201);
    const out = await outputSeries(p, rule.rule_id, 1);
    const t0 = base + 100n * SEC;
    const times = [0n, 1n, 2n, 3n, 4n].map((k) => t0 + k * SEC);
    await sendPoints(p, p.stream(1, 'Flow'), times, [5, 12, 15, 8, 11]);
    await until(() => readAll(p.svc, out).length === 2, LOADED_MS);
    t.same(valuesOf(p, out), [[times[1], 12, 192], [times[4], 11, 192]], 'only the rising edges');
    await p.api('POST', `/v1/model/calc/rules/${rule.rule_id}/retire`, {});
  });

  t.test('provisional block: outputs wait for the inputs\' finalised watermark', async (t) => {
    const rule = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'ratio', 'Ratio', 'Discharge / Suction', {
      unit_check: 'off', provisional: 'block',
    }), 201);
    const out = await outputSeries(p, rule.rule_id, 1);
    const t0 = base + 200n * SEC;
    const times = [t0, t0 + SEC, t0 + 2n * SEC];
    await sendPoints(p, p.stream(1, 'Suction'), times, [1, 2, 0]);
    await sendPoints(p, p.stream(1, 'Discharge'), times, [3, 8, 5]);
    await new Promise((r) => setTimeout(r, 300));
    t.same(readAll(p.svc, out).filter((x) => x.ts >= t0), [], 'nothing while the inputs are open to late data');
    await p.collector.watermark(p.stream(1, 'Suction'), t0 + 2n * SEC);
    await p.collector.watermark(p.stream(1, 'Discharge'), t0 + SEC);
    await until(() => readAll(p.svc, out).filter((x) => x.ts >= t0).length === 2, LOADED_MS);
    t.same(valuesOf(p, out).filter((x) => (x[0] as bigint) >= t0), [[times[0], 3, 192], [times[1], 4, 192]], 'written up to the earliest watermark');
    await p.collector.watermark(p.stream(1, 'Discharge'), t0 + 2n * SEC);
    await until(() => readAll(p.svc, out).filter((x) => x.ts >= t0).length === 3, LOADED_MS);
    t.same(valuesOf(p, out)[2], [times[2], 0, 0], 'division by zero: a bad-quality point, never NaN');
    // The trace is kept just after the write is durable: poll it.
    let trace = { evaluations: [] as Array<{ reason: string | null; outcome: string }> };
    await until(async () => {
      trace = await p.api<typeof trace>('GET', `/v1/calc/rules/${rule.rule_id}/trace?asset_id=${p.pumps[1].assetId}&start_ns=${times[2]}&end_ns=${times[2] + 1n}`);
      return trace.evaluations.length > 0;
    }, LOADED_MS);
    t.match(trace.evaluations[0], { reason: 'division-by-zero', outcome: 'bad' }, 'the trace says why');
    await p.api('POST', `/v1/model/calc/rules/${rule.rule_id}/retire`, {});
  });
});
