// The overlay's columns layout samples each attribute from typed columns (overlay-grid.ts);
// the row layout reads the same instants through POST /v1/read/at's task. fast-check: on
// random points (some bad or uncertain, in the open head or sealed into chunks, under one or
// two bindings, seconds or days apart) and random episodes (overlapping, shorter or longer
// than the grid, before, across and after the data, some spanning years: read through the
// exact bigint path), both layouts answer the same values, qualities, flags, reasons and series.
// Run by episodes.test.ts on its server (a server of its own cost the suite ~10 s to start);
// last, as it seals every open head.
import type { Test } from 'tap';
import fc from 'fast-check';
import type { AuthFixture } from '../helpers/auth.js';

const T0 = 1_700_000_000_000_000_000n;
const SEC = 1_000_000_000n, DAY = 86_400n * SEC;
const WHO = { principal: 'test' };

type Json = Record<string, unknown>;
type Row = { u: number; ts_ns: number; value?: number; quality?: number; interpolated?: boolean; no_value?: string; series?: string };
type Rows = { episodes: Array<{ episode: { id: string }; series: Array<{ attribute_id: string; points: Row[] }> }> };
type Columns = { episodes: Array<{ episode: { id: string }; ts_ns: number[]; series: Array<{ attribute_id: string; points: { value: Array<number | null>; quality: number[]; interpolated: number[] }; no_value: Array<{ from: number; to: number; reason: string }>; segments: Array<{ from: number; to: number; series: string }> }> }> };

export async function overlayColumnsAgreeWithReadAt(t: Test, svc: AuthFixture): Promise<void> {
  const parts = svc.service.context.parts;
  const ok = async <T = Json>(path: string, body: unknown, status = 200): Promise<T> => {
    const r = await svc.admin(path, { method: 'POST', body });
    if (r.status !== status) throw new Error(`POST ${path}: expected ${status}, got ${r.status}: ${r.text}`);
    return r.json as T;
  };
  const kinds = ['continuous', 'stepped', 'event'] as const;
  const attrs = kinds.map((c) => ({ name: c, quantity_kind_id: null, default_unit_id: null, continuity_class: c, writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] }));
  const model = await ok<{ template_id: string }>('/v1/model/templates', { name: 'Vessel', attributes: attrs }, 201);
  await ok('/v1/model/registries/episode-roles/entries', { name: 'vessel' }, 201);
  const batch = await ok<{ id: string }>('/v1/episodes/templates', { name: 'Run', family: 'batch', overlap: 'allowed', retro_edit_approval: 'none', roles: [{ role: 'vessel', cardinality: 'one', required: true }] }, 201);

  const point = fc.record({ k: fc.integer({ min: 0, max: 300 }), v: fc.double({ min: -1e6, max: 1e6, noNaN: true }), q: fc.constantFrom(192, 192, 192, 100, 0) });
  const episode = fc.record({ s: fc.integer({ min: -30, max: 330 }), len: fc.integer({ min: 1, max: 200 }), ns: fc.bigInt({ min: 0n, max: SEC }) });
  const run = fc.record({
    scale: fc.constantFrom(SEC, SEC, DAY),
    points: fc.array(fc.array(point, { maxLength: 60 }), { minLength: 3, maxLength: 3 }),
    swapAt: fc.option(fc.integer({ min: 0, max: 300 })),
    seal: fc.boolean(),
    episodes: fc.array(episode, { minLength: 1, maxLength: 4 }),
    grid: fc.integer({ min: 2, max: 40 }),
  });
  let n = 0;
  await fc.assert(fc.asyncProperty(run, async (r) => {
    n++;
    const asset = (await ok<{ asset_id: string }>('/v1/model/assets', { name: `V${n}`, template_id: model.template_id })).asset_id;
    const list = (await ok<{ results: Array<{ attribute_id: string; name: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: asset } } })).results;
    for (const [a, kind] of kinds.entries()) {
      const attributeId = list.find((x) => x.name === kind)!.attribute_id;
      const first = (await parts.series.create({ sourceName: `v${n}-${kind}`, valueType: 'float64' }, WHO)).id;
      await ok('/v1/model/bindings', { attribute_id: attributeId, series_id: first, from_ns: T0 - 100n * r.scale }, 201);
      const second = r.swapAt === null ? null : (await parts.series.create({ sourceName: `v${n}-${kind}-new`, valueType: 'float64' }, WHO)).id;
      if (second !== null) await ok('/v1/model/bindings', { attribute_id: attributeId, series_id: second, from_ns: T0 + BigInt(r.swapAt!) * r.scale }, 201);
      const byTime = new Map(r.points[a].map((p) => [p.k, p]));
      const pts = [...byTime.values()].sort((x, y) => x.k - y.k);
      for (const id of second === null ? [first] : [first, second]) {
        if (pts.length === 0) continue;
        const w = await parts.storage.write([{ series: id, times: BigInt64Array.from(pts, (p) => T0 + BigInt(p.k) * r.scale), values: Float64Array.from(pts, (p) => (id === first ? p.v : -p.v)), quality: Uint32Array.from(pts, (p) => p.q) }], WHO);
        if (w.refused !== 0) throw new Error('refused points');
      }
    }
    if (r.seal) await parts.storage.sealHeads(0);
    const ids: string[] = [];
    for (const e of r.episodes) {
      const start = T0 + BigInt(e.s) * r.scale + e.ns;
      ids.push((await ok<{ id: string }>('/v1/episodes', { template_id: batch.id, assets: [{ role: 'vessel', asset_id: asset }], start_ns: start, end_ns: start + BigInt(e.len) * r.scale }, 201)).id);
    }
    const body = { resolve: { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: asset } } }, mode: 'u-grid', points: r.grid, episodes: { kind: 'ids', ids } };
    const rows = await ok<Rows>('/v1/read/episode-overlay', body);
    const cols = await ok<Columns>('/v1/read/episode-overlay', { ...body, layout: 'columns' });
    const runAt = (runs: Array<{ from: number; to: number } & Json>, i: number, label: string) => runs.find((x) => i >= x.from && i < x.to)?.[label];
    for (const e of rows.episodes) {
      const c = cols.episodes.find((x) => x.episode.id === e.episode.id)!;
      for (const s of e.series) {
        const cs = c.series.find((x) => x.attribute_id === s.attribute_id)!;
        const got = s.points.map((_, i) => [cs.points.value[i], cs.points.value[i] === null ? 0 : cs.points.quality[i], cs.points.interpolated[i], runAt(cs.no_value, i, 'reason') ?? null, runAt(cs.segments, i, 'series') ?? null]);
        const want = s.points.map((p) => [p.value ?? null, p.value === undefined ? 0 : p.quality, p.interpolated ? 1 : 0, p.no_value ?? null, p.series ?? null]);
        if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`episode ${e.episode.id} ${s.attribute_id}: columns ${JSON.stringify(got)} rows ${JSON.stringify(want)}`);
      }
    }
  }), { numRuns: 15, seed: 0x28 });
  t.equal(n >= 15, true, '15 random runs agree (fast-check throws on the first that does not)');
}
