// Backfills through the real routes: a preview (added, changed, unchanged, a sample of old
// and new values), a commit that writes it (its Operation completed with a receipt), a
// recalculation previewed and cancelled, and a commit interrupted by a restart that
// resumes on the next start from its saved position without losing or doubling a point.
import t from 'tap';
import { pino } from 'pino';
import { startPlant, templateRule, SEC, type Plant } from './calc-fixture.js';
import { readAll, until, connect } from '../helpers/ingest.js';
import { request } from '../helpers/service.js';
import { loadConfig } from '../../src/config/config.js';
import { startService } from '../../src/service.js';
import { nowNs } from '../../src/clock.js';
import { openDb } from '../../src/model/db.js';
import { moveJob, saveProgress } from '../../src/calc/backfill/backfill-store.js';
import { operationResumed } from '../../src/calc/backfill/backfill-operation.js';
import { join } from 'node:path';

const MIN = 60n * SEC;
const DAY = 86_400n * SEC;

interface View {
  job_id: string; state: string; operation_id: string;
  progress: { windows_total: bigint | number; windows_done: bigint | number; points_written: bigint | number; rate_limited_ms: bigint | number };
  preview: null | { points_added: bigint | number; points_changed: bigint | number; points_unchanged: bigint | number; sample: Array<{ asset_id: string; ts_ns: bigint; old: unknown; new: unknown }> };
}

/** Sends `days` of 1-minute history to P1's Suction and Discharge over the backfill lane. */
async function history(p: Plant, start: bigint, days: number): Promise<bigint[]> {
  const n = days * 1440;
  const times = new BigInt64Array(n);
  for (let i = 0; i < n; i++) times[i] = start + BigInt(i) * MIN;
  for (const input of ['Suction', 'Discharge'] as const) {
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) values[i] = input === 'Suction' ? 1 + (i % 7) : 20 + (i % 11);
    for (let k = 0; k < n; k += 5_000) {
      const r = await p.collector.send('BACKFILL', p.stream(0, input), 'float64', { times: times.subarray(k, k + 5_000), values: values.subarray(k, k + 5_000), quality: null });
      if (!r.ok) throw new Error(JSON.stringify(r));
    }
  }
  return [...times];
}

async function settled(p: Plant, url: string, jobId: string, state: string): Promise<View> {
  let v: View | null = null;
  await until(async () => {
    v = (await request(`${url}/v1/calc/backfill/${jobId}`)).json as View;
    return v.state === state || v.state === 'failed';
  }, 30_000);
  const got = v as unknown as View;
  if (got.state !== state) throw new Error(`backfill ${jobId} is ${got.state}: ${JSON.stringify(got)}`);
  return got;
}

t.test('backfills', async (t) => {
  const p = await startPlant(t, 2);
  const start = (nowNs() / DAY - 5n) * DAY; // midnight five days ago
  const times = await history(p, start, 2);
  const rule = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'head', 'Head', 'Discharge - Suction'), 201);
  const range = { start_ns: start, end_ns: start + 2n * DAY };

  t.test('fill-gaps: previewed, then committed, with its operation and receipt', async (t) => {
    const created = await p.api<View>('POST', '/v1/calc/backfill', { rule_id: rule.rule_id, assets: 'all', ...range, mode: 'fill-gaps' }, 202);
    t.equal(created.state, 'previewing');
    const v = await settled(p, p.svc.url, created.job_id, 'preview');
    t.equal(Number(v.preview?.points_added), times.length, 'every instant of P1 is new');
    t.equal(Number(v.preview?.points_changed), 0);
    t.equal(Number(v.preview?.points_unchanged), 0);
    t.equal(Number(v.progress.windows_total), 4, 'two days for each of two pumps');
    t.same(v.preview?.sample[0], { asset_id: p.pumps[0].assetId, ts_ns: times[0], old: null, new: 19 }, 'a sample of old and new values');
    // the operation record follows the job's state a moment later (its own statement)
    let op = { state: 'running', kind: '' };
    await until(async () => {
      op = await p.api<{ state: string; kind: string }>('GET', `/v1/operations/${encodeURIComponent(v.operation_id)}`);
      return op.state !== 'running';
    }, 30_000);
    t.match(op, { state: 'awaiting-commit', kind: 'calc.backfill' }, 'the operation waits for the commit');
    t.same(readAll(p.svc, (await outputOf(p, rule.rule_id))), [], 'a preview writes nothing');

    const committing = await p.api<View>('POST', `/v1/calc/backfill/${v.job_id}/commit`, undefined, 202);
    t.ok(['committing', 'committed'].includes(committing.state));
    const done = await settled(p, p.svc.url, v.job_id, 'committed');
    t.equal(Number(done.progress.points_written), times.length);
    t.equal(Number(done.progress.windows_done), 4);
    const out = readAll(p.svc, await outputOf(p, rule.rule_id));
    t.equal(out.length, times.length, 'every instant written once');
    t.same(out.slice(0, 2).map((x) => [x.ts, x.value]), [[times[0], 19], [times[1], 19]]);
    type Finished = { state: string; receipt: { adapter: string; value: { points_written: unknown } } };
    let finished = { state: 'running' } as Finished;
    await until(async () => {
      finished = await p.api<Finished>('GET', `/v1/operations/${encodeURIComponent(v.operation_id)}`);
      return finished.state !== 'running';
    }, 30_000);
    t.equal(finished.state, 'completed');
    t.equal(Number(finished.receipt.value.points_written), times.length, 'the receipt says what was written');
    t.equal((await p.call('POST', `/v1/calc/backfill/${v.job_id}/commit`)).status, 409, 'a job commits once');

    const again = await p.api<View>('POST', '/v1/calc/backfill', { rule_id: rule.rule_id, assets: [p.pumps[0].assetId], ...range, mode: 'fill-gaps' }, 202);
    const second = await settled(p, p.svc.url, again.job_id, 'preview');
    t.same([second.preview?.points_added, second.preview?.points_unchanged].map(Number), [0, times.length], 'nothing left to fill');
    await p.api('POST', `/v1/calc/backfill/${again.job_id}/cancel`);
  });

  t.test('recalculate: previewed with old and new values, then cancelled', async (t) => {
    await p.api('PUT', `/v1/model/calc/rules/${rule.rule_id}?recompute=from-now`, templateRule(p, 'head', 'Head', 'Discharge - Suction + 1 bar'));
    const created = await p.api<View>('POST', '/v1/calc/backfill', { rule_id: rule.rule_id, assets: [p.pumps[0].assetId], ...range, mode: 'recalculate' }, 202);
    const v = await settled(p, p.svc.url, created.job_id, 'preview');
    t.equal(Number(v.preview?.points_changed), times.length, 'every output changes');
    t.same(v.preview?.sample[0], { asset_id: p.pumps[0].assetId, ts_ns: times[0], old: 19, new: 20 });
    const cancelled = await p.api<View>('POST', `/v1/calc/backfill/${v.job_id}/cancel`);
    t.equal(cancelled.state, 'cancelled');
    t.equal((await p.api<{ state: string }>('GET', `/v1/operations/${encodeURIComponent(v.operation_id)}`)).state, 'cancelled');
    t.equal((await p.call('POST', `/v1/calc/backfill/${v.job_id}/commit`)).status, 409, 'a cancelled job cannot be committed');
    t.equal(readAll(p.svc, await outputOf(p, rule.rule_id))[0].value, 19, 'nothing was written');
    t.equal((await p.call('POST', '/v1/calc/backfill', { rule_id: rule.rule_id, assets: 'all', start_ns: range.end_ns, end_ns: range.start_ns, mode: 'recalculate' })).status, 400, 'an empty range');
    t.equal((await p.call('GET', '/v1/calc/backfill/00000000-0000-4000-8000-000000000000')).status, 404);
    t.equal((await p.call('POST', '/v1/calc/backfill', { rule_id: rule.rule_id, assets: 'all', start_ns: 0, end_ns: 2n ** 62n, mode: 'fill-gaps' })).status, 400, 'a range over 10 years');
  });

  t.test('a rollup rule: the time-weighted average of each 10-minute interval', async (t) => {
    const rollup = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'suction 10 min', 'Mean', 'Suction', {
      tier: 'rollup', rollup: 'avg', trigger: { kind: 'periodic', interval_ns: 10n * MIN, align: null },
    }), 201);
    const out = await outputOf(p, rollup.rule_id);
    const v = await p.api<View>('POST', '/v1/calc/backfill', { rule_id: rollup.rule_id, assets: [p.pumps[0].assetId], start_ns: start + 10n * MIN, end_ns: start + 61n * MIN, mode: 'recalculate' }, 202);
    await settled(p, p.svc.url, v.job_id, 'preview');
    await p.api('POST', `/v1/calc/backfill/${v.job_id}/commit`, undefined, 202);
    await settled(p, p.svc.url, v.job_id, 'committed');
    const pts = readAll(p.svc, out).filter((x) => x.ts >= start + 10n * MIN && x.ts <= start + 60n * MIN);
    // Suction is 1 + (i % 7) at minute i, each held one minute: the interval ending at minute m averages minutes m-10 .. m-1.
    const expected = [10, 20, 30, 40, 50, 60].map((m) => { let sum = 0; for (let i = m - 10; i < m; i++) sum += 1 + (i % 7); return [start + BigInt(m) * MIN, sum / 10]; });
    t.same(pts.map((x) => [x.ts, Math.round((x.value as number) * 1e9) / 1e9]), expected, 'one output per interval, on the grid');
    const refused = await p.call('POST', '/v1/model/calc/rules', templateRule(p, 'no interval', 'Ratio', 'Suction', { unit_check: 'off', tier: 'rollup', rollup: 'avg' }));
    t.equal(refused.status, 400, 'a rollup needs a periodic trigger');
    t.match(JSON.stringify(refused.json), /trigger\.kind/);
    const noAgg = await p.call('POST', '/v1/model/calc/rules', templateRule(p, 'no aggregate', 'Ratio', 'Suction', { unit_check: 'off', tier: 'rollup', trigger: { kind: 'periodic', interval_ns: 10n * MIN, align: null } }));
    t.match(JSON.stringify(noAgg.json), /rollup/, 'and an aggregate');
    await p.api('POST', `/v1/model/calc/rules/${rollup.rule_id}/retire`, {});
  });

  t.test('a backfill reads each window through the binding that covered it', async (t) => {
    // P2's Discharge: the plant's series until t1, then a replacement series bound from t1 on.
    const pump = p.pumps[1];
    const t0 = start + 3n * DAY, t1 = t0 + 5n * MIN; // outside the other subtests' range (the cut would add a window there)
    const old = [0n, 1n, 2n, 3n, 4n].map((k) => t0 + k * MIN);
    const r = await p.collector.send('BACKFILL', p.stream(1, 'Discharge'), 'float64', { times: BigInt64Array.from(old), values: Float64Array.from([100, 101, 102, 103, 104]), quality: null });
    t.ok(r.ok);
    const other = await connect(p.svc, { collectorId: 'replacement', streams: [{ name: 'p2.Discharge.new', type: 'float64' }] });
    t.teardown(() => other.close());
    await p.api('POST', '/v1/model/bindings', { attribute_id: pump.attrs.Discharge, series_id: other.welcome.streams[0].series_id, from_ns: t1 }, 201);
    const fresh = [0n, 1n, 2n].map((k) => t1 + k * MIN);
    t.ok((await other.send('BACKFILL', 0, 'float64', { times: BigInt64Array.from(fresh), values: Float64Array.from([200, 201, 202]), quality: null })).ok);
    const rule = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', { ...templateRule(p, 'p2 discharge', 'Ratio', 'Discharge', { unit_check: 'off' }), scope: { asset_id: pump.assetId, output_attribute_id: pump.attrs.Ratio } }, 201);
    let out: string | undefined;
    await until(async () => {
      const st = await p.api<{ assets: Array<{ asset_id: string; output_series: string | null }> }>('GET', `/v1/calc/rules/${rule.rule_id}/status`);
      out = st.assets.find((a) => a.asset_id === pump.assetId)?.output_series ?? undefined;
      return out !== undefined;
    }, 30_000);
    const v = await p.api<View>('POST', '/v1/calc/backfill', { rule_id: rule.rule_id, assets: 'all', start_ns: t0, end_ns: t0 + 10n * MIN, mode: 'recalculate' }, 202);
    await settled(p, p.svc.url, v.job_id, 'preview');
    await p.api('POST', `/v1/calc/backfill/${v.job_id}/commit`, undefined, 202);
    await settled(p, p.svc.url, v.job_id, 'committed');
    const pts = readAll(p.svc, out as string).filter((x) => x.ts >= t0 && x.ts < t0 + 10n * MIN);
    t.same(pts.map((x) => [x.ts, x.value]), [...old.map((ts, k) => [ts, 100 + k]), ...fresh.map((ts, k) => [ts, 200 + k])], 'the old series before t1, the new one after');
    await p.api('POST', `/v1/model/calc/rules/${rule.rule_id}/retire`, {});
  });

  t.test('a commit interrupted by a restart resumes without losing or doubling a point', async (t) => {
    const created = await p.api<View>('POST', '/v1/calc/backfill', { rule_id: rule.rule_id, assets: 'all', ...range, mode: 'recalculate' }, 202);
    const v = await settled(p, p.svc.url, created.job_id, 'preview');
    await p.svc.stop();
    // The interruption, made deterministic: with the service stopped, the job is put where a
    // commit stopped after its first durable group leaves it (committing, position saved after
    // P1's first day) through the store's own functions. A real commit of these 4 small windows
    // may finish before a stop lands. That first day is deliberately left with the old
    // version's values, so the outcome shows where the resume began: it must redo nothing
    // before the saved position and every instant after it, once.
    const db = await openDb({ url: p.svc.databaseUrl, pgliteDir: join(p.svc.dataDir, 'model') });
    try {
      t.ok(await moveJob(db, v.job_id, ['preview'], 'committing'), 'the previewed job is committing');
      await operationResumed(db, v.operation_id, 'commit');
      await saveProgress(db, v.job_id, { windowsDone: 1n, pointsWritten: 1440n, rateLimitedMs: 0n, assetsDone: 0, resumeAfterNs: start + DAY });
    } finally {
      await db.close();
    }
    const config = loadConfig({
      SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: '0', SERVICE_GRPC_PORT: '0', SERVICE_DATA_DIR: p.svc.dataDir,
      SERVICE_AUTH_MODE: 'disabled', SERVICE_WORKERS: '2', ...(p.svc.databaseUrl ? { DATABASE_URL: p.svc.databaseUrl } : {}),
    });
    const lines: string[] = [];
    const again = await startService(config, pino({ level: 'info' }, { write: (l: string) => { lines.push(l); } }), { printBootstrapSecret: () => undefined });
    try {
      const url = `http://127.0.0.1:${again.http.port}`;
      t.ok(lines.some((l) => l.includes('resuming an interrupted backfill commit') && l.includes(v.job_id)), 'the commit was interrupted and resumed');
      const done = await settled(p, url, v.job_id, 'committed');
      t.equal(Number(done.progress.windows_done), 4, 'every window done once');
      t.equal(Number(done.progress.points_written), times.length, 'the saved day and the resumed one, each counted once');
      const series = (await request(`${url}/v1/calc/rules/${rule.rule_id}/status`)).json as { assets: Array<{ asset_id: string; output_series: string }> };
      const out = series.assets.find((a) => a.asset_id === p.pumps[0].assetId)?.output_series as string;
      const pts = readAll({ ...p.svc, service: again } as typeof p.svc, out);
      t.equal(pts.length, times.length, 'no instant lost, none doubled');
      t.ok(pts.every((x, i) => x.ts === times[i]), 'at the input instants');
      // Version 1 is Discharge - Suction, version 2 adds 1 bar; minute i has 20 + i % 11 and 1 + i % 7.
      const expected = times.map((ts, i) => (20 + (i % 11)) - (1 + (i % 7)) + (ts >= start + DAY ? 1 : 0));
      const wrong = pts.findIndex((x, i) => x.value !== expected[i]);
      t.equal(wrong, -1, 'the day before the saved position untouched (old version), every instant after it with the new version\'s value');
      t.same([pts[1439].value, pts[1440].value], [24, 25], 'the resume began at the saved position (old version on its last minute before, new on its first)');
    } finally {
      await again.stop(2_000);
    }
  });
});

/** P1's output series, once the engine has planned the rule (it re-plans shortly after each model commit). */
async function outputOf(p: Plant, ruleId: string): Promise<string> {
  let out: string | undefined;
  await until(async () => {
    const s = await p.api<{ assets: Array<{ asset_id: string; output_series: string | null }> }>('GET', `/v1/calc/rules/${ruleId}/status`);
    out = s.assets.find((a) => a.asset_id === p.pumps[0].assetId)?.output_series ?? undefined;
    return out !== undefined;
  }, 30_000);
  return out as string;
}
