// POST /v1/read/snapshot answered from the latest-point table (storage/latest-table.ts) over
// real HTTP on a real plant: points through the collector's gRPC ingest, a calculation's
// outputs, main-thread writes. Each answer is checked against the value expected and the
// table's slot is checked to hold it (the answer came without a worker hop): after ingest,
// after a late older point (unchanged), after an edit of the latest point, for a calculation
// output (and its correction), after a rebind, with as_of_ns and a quality filter (the
// stored path), and after a restart (an empty table: the stored path, then the table again).
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPlant, templateRule, sendPoints, SEC, type Plant } from '../calc/calc-fixture.js';
import { request, startTestService } from '../helpers/service.js';
import { until } from '../helpers/ingest.js';
import { nowNs } from '../../src/clock.js';
import { NONE, POINT, UNKNOWN, readSnapshot, type LatestRead } from '../../src/storage/series-store.js';

interface Snap { ts_ns: bigint | number; value: unknown; quality: number }
interface Item { attribute_id: string; snapshot: Snap | null; provenance: Record<string, unknown> }
const LOADED_MS = 30_000;
const WHO = { principal: 'tester' };

const snapshots = async (p: Plant, ids: string[], resolve: Record<string, unknown> = {}, body: Record<string, unknown> = {}): Promise<Map<string, Snap | null>> => {
  const items = await p.api<Item[]>('POST', '/v1/read/snapshot', { resolve: { select: { kind: 'attribute_ids', content: ids }, scope: {}, ...resolve }, ...body });
  return new Map(items.map((i) => [i.attribute_id, i.snapshot === null ? null : { ...i.snapshot, ts_ns: BigInt(i.snapshot.ts_ns) }]));
};
const slot = (p: Plant, series: string): LatestRead => p.svc.service.context.parts.storage.latest!.read(series, { state: UNKNOWN, seq: 0, ts: 0n, value: 0, quality: 0 });
const stored = (p: Plant, series: string) => p.svc.service.context.parts.storage.read((v) => readSnapshot(v, series));

t.test('the snapshot from the latest-point table', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'snapshot-latest-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const p = await startPlant(t, 1, {}, dir);
  const pump = p.pumps[0];
  const base = (nowNs() / SEC - 600n) * SEC;
  const suction = pump.attrs.Suction, seriesS = pump.series.Suction;
  /** The series bound to Suction by the rebind. */
  let swapped = '';

  t.test('after ingest: the first read fills the slot, later points come from the table', async (t) => {
    await sendPoints(p, p.stream(0, 'Suction'), [base, base + SEC, base + 2n * SEC], [1, 2, 3]);
    t.same((await snapshots(p, [suction])).get(suction), { ts_ns: base + 2n * SEC, value: 3, quality: 192 });
    await sendPoints(p, p.stream(0, 'Suction'), [base + 3n * SEC], [4]);
    t.match(slot(p, seriesS), { state: POINT, ts: base + 3n * SEC, value: 4 }, 'the ingest worker updated the slot before its ack');
    t.same((await snapshots(p, [suction])).get(suction), { ts_ns: base + 3n * SEC, value: 4, quality: 192 });
  });

  t.test('a late point older than the latest leaves the snapshot as it was', async (t) => {
    await sendPoints(p, p.stream(0, 'Suction'), [base + SEC], [99]);
    t.match(slot(p, seriesS), { state: POINT, ts: base + 3n * SEC, value: 4 });
    t.same((await snapshots(p, [suction])).get(suction), { ts_ns: base + 3n * SEC, value: 4, quality: 192 });
  });

  t.test('an edit of the latest point: the new value', async (t) => {
    await sendPoints(p, p.stream(0, 'Suction'), [base + 3n * SEC], [42]);
    t.same((await snapshots(p, [suction])).get(suction), { ts_ns: base + 3n * SEC, value: 42, quality: 192 });
    t.match(slot(p, seriesS), { state: POINT, value: 42 }, 'the slot was read again from storage and holds the edit');
  });

  t.test('a calculation output, and its correction after a late input', async (t) => {
    const rule = await p.api<{ rule_id: string }>('POST', '/v1/model/calc/rules', templateRule(p, 'head', 'Head', 'Discharge - Suction'), 201);
    const head = pump.attrs.Head;
    let out: string | null = null;
    await until(async () => {
      const s = await p.api<{ assets: Array<{ output_series: string | null }> }>('GET', `/v1/calc/rules/${rule.rule_id}/status`);
      out = s.assets[0]?.output_series ?? null;
      return out !== null;
    }, LOADED_MS);
    const t10 = base + 10n * SEC;
    await sendPoints(p, p.stream(0, 'Suction'), [t10], [2]);
    await sendPoints(p, p.stream(0, 'Discharge'), [t10], [12]);
    await until(async () => (await snapshots(p, [head])).get(head)?.value === 10, LOADED_MS);
    t.same((await snapshots(p, [head])).get(head), { ts_ns: t10, value: 10, quality: 192 });
    t.match(slot(p, out!), { state: POINT, ts: t10, value: 10 }, 'the engine\'s write updated the slot');
    await sendPoints(p, p.stream(0, 'Suction'), [t10], [7]);
    await until(async () => (await snapshots(p, [head])).get(head)?.value === 5, LOADED_MS);
    const s = stored(p, out!);
    t.same((await snapshots(p, [head])).get(head), { ts_ns: s!.ts, value: s!.value, quality: s!.quality }, 'the corrected output, as stored');
  });

  t.test('as_of_ns before the latest and a quality filter dropping it take the stored path', async (t) => {
    const t10 = base + 10n * SEC;
    const asOf = nowNs();
    const future = (nowNs() / SEC + 3_600n) * SEC;
    // the calculation test edited Suction's latest point (the slot went UNKNOWN): this read fills it
    t.same((await snapshots(p, [suction])).get(suction), { ts_ns: t10, value: 7, quality: 192 });
    await p.svc.service.context.parts.storage.write([{ series: seriesS, times: [future], values: [5], quality: [0] }], WHO);
    t.match(slot(p, seriesS), { state: POINT, ts: future, quality: 0 }, 'a main-thread write updates the slot');
    t.same((await snapshots(p, [suction])).get(suction), { ts_ns: future, value: 5, quality: 0 });
    t.same((await snapshots(p, [suction], { as_of_ns: asOf })).get(suction), { ts_ns: t10, value: 7, quality: 192 }, 'the latest at or before as_of_ns');
    t.same((await snapshots(p, [suction], {}, { exclude_quality: 'bad' })).get(suction), { ts_ns: t10, value: 7, quality: 192 }, 'the latest kept point');
  });

  t.test('a rebind: the new series from its start, null while it holds nothing', async (t) => {
    const fresh = (await p.svc.service.context.parts.series.create({ sourceName: 'p1/suction-new', valueType: 'float64' }, WHO)).id;
    swapped = fresh;
    const beforeRebind = nowNs();
    await p.api('POST', '/v1/model/bindings', { attribute_id: suction, series_id: fresh, from_ns: base + 20n * SEC }, 201);
    t.equal((await snapshots(p, [suction])).get(suction), null, 'the new sensor has no point yet');
    t.equal(slot(p, fresh).state, NONE);
    await p.svc.service.context.parts.storage.write([{ series: fresh, times: BigInt64Array.of(base + 21n * SEC), values: Float64Array.of(6.5), quality: Uint32Array.of(192) }], WHO);
    t.same((await snapshots(p, [suction])).get(suction), { ts_ns: base + 21n * SEC, value: 6.5, quality: 192 });
    t.same((await snapshots(p, [suction], { as_of_ns: beforeRebind })).get(suction), { ts_ns: base + 10n * SEC, value: 7, quality: 192 }, 'as of before the swap: the old sensor');
    // a point of the old sensor after its binding ended does not count for the attribute
    await sendPoints(p, p.stream(0, 'Suction'), [base + 30n * SEC], [1000]);
    t.same((await snapshots(p, [suction])).get(suction), { ts_ns: base + 21n * SEC, value: 6.5, quality: 192 });
  });

  t.test('after a restart: the stored path answers, then the table again', async (t) => {
    // (not Head: the engine may still be writing outputs for the last Suction point)
    const ids = [suction, pump.attrs.Discharge, pump.attrs.Flow];
    const before = await snapshots(p, ids);
    await p.collector.close();
    await p.svc.stop();
    const svc = await startTestService(t, { env: { SERVICE_DATA_DIR: dir, ...(p.svc.databaseUrl ? { DATABASE_URL: p.svc.databaseUrl } : {}) } });
    const q: Plant = { ...p, svc, api: async <T>(method: string, path: string, body?: unknown, status = 200) => {
      const r = await request(svc.url + path, { method, body });
      if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
      return r.json as T;
    } };
    t.equal(slot(q, pump.series.Suction).state, UNKNOWN, 'nothing known after the restart');
    // whole items of both paths, provenance included (but the read's own instants)
    const whole = async () => (await q.api<Item[]>('POST', '/v1/read/snapshot', { resolve: { select: { kind: 'attribute_ids', content: ids }, scope: {} } }))
      .map((i) => ({ ...i, provenance: { ...i.provenance, window_resolved: undefined, model_as_of_ns: undefined } }));
    const fromStorage = await whole();
    t.equal(slot(q, swapped).state, POINT, 'the first read filled the slots');
    const fromTable = await whole();
    t.same(fromTable, fromStorage, 'the table answers the items storage answered, provenance and all');
    t.same(await snapshots(q, ids), before, 'the answers of before the restart');
    await svc.service.context.parts.storage.write([{ series: swapped, times: BigInt64Array.of(base + 40n * SEC), values: Float64Array.of(8), quality: Uint32Array.of(192) }], WHO);
    t.same((await snapshots(q, [suction])).get(suction), { ts_ns: base + 40n * SEC, value: 8, quality: 192 }, 'a write after the restart');
  });
});

