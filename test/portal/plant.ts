// The plant the portal's browser tests and bench draw: template Pump (Flow, Temp, State),
// assets /Plant/P1 and /Plant/P2, each attribute bound to a collector stream, and points
// written through real gRPC ingest from `hours` ago to now at `stepS` seconds.
import type { AuthFixture } from '../helpers/auth.js';
import { createServiceWithToken } from '../helpers/auth.js';
import { connect } from '../helpers/ingest.js';
import type { CollectorClient } from '../../src/collector/collector-client.js';
import { nowNs } from '../../src/clock.js';

const SEC = 1_000_000_000n;
export const ATTRIBUTES = ['Flow', 'Temp', 'State'] as const;
export const LIMITS = { lo: 20, hi: 80 };

export interface Plant {
  assets: Record<string, string>;
  /** attribute ids by `<asset>|<attribute>` (P1|Flow). */
  attributes: Record<string, string>;
  collector: CollectorClient;
  /** Sends one point now (or at ts) to an attribute's stream; resolves once durable. */
  sendNow(key: string, value: number, ts?: bigint): Promise<bigint>;
}

const def = (name: string, limits: unknown) => ({
  name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector',
  enum_set_id: null, limit_traits: limits, lifecycle_policy: null, entry_cadence: null, overridable: [],
});

/** Value of attribute `a` (0..2) of asset `p` at second i: slow waves, State a 0/1/2 step. */
function valueAt(p: number, a: number, i: number): number {
  if (a === 2) return Math.floor(i / 600) % 3;
  return 50 + 35 * Math.sin((i + p * 300) / (a === 0 ? 900 : 2400)) + 3 * Math.sin(i / 37);
}

export async function buildPlant(svc: AuthFixture, opts: { assets?: number; hours?: number; stepS?: number } = {}): Promise<Plant> {
  const { admin } = svc;
  const nAssets = opts.assets ?? 2, hours = opts.hours ?? 2, stepS = opts.stepS ?? 10;
  const ok = async <T>(path: string, body: unknown, status = 201): Promise<T> => {
    const r = await admin(path, { method: 'POST', body });
    if (r.status !== status) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.json as T;
  };
  const tpl = await ok<{ template_id: string }>('/v1/model/templates', { name: 'Pump', attributes: [def('Flow', LIMITS), def('Temp', null), def('State', null)] });
  const plant = await ok<{ asset_id: string }>('/v1/model/assets', { name: 'Plant' }, 200);
  const assets: Record<string, string> = { Plant: plant.asset_id };
  for (let p = 1; p <= nAssets; p++) assets[`P${p}`] = (await ok<{ asset_id: string }>('/v1/model/assets', { name: `P${p}`, parent: plant.asset_id, template_id: tpl.template_id }, 200)).asset_id;
  const resolved = (await ok<{ results: Array<{ attribute_id: string; asset_id: string; name: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } }, 200)).results;
  const attributes: Record<string, string> = {};
  const keys: string[] = [];
  for (let p = 1; p <= nAssets; p++) for (const a of ATTRIBUTES) {
    const key = `P${p}|${a}`;
    attributes[key] = (resolved.find((r) => r.asset_id === assets[`P${p}`] && r.name === a) as { attribute_id: string }).attribute_id;
    keys.push(key);
  }
  const { token } = await createServiceWithToken(admin, 'portal-line', 'collector');
  const collector = await connect(svc, { collectorId: 'portal-line', token, streams: keys.map((k) => ({ name: k.replace('|', '.'), type: 'float64' as const })) });
  const series = collector.welcome.streams.map((s) => s.series_id);
  const now = nowNs();
  const n = Math.floor((hours * 3600) / stepS);
  const first = now - BigInt(n) * BigInt(stepS) * SEC;
  for (let k = 0; k < keys.length; k++) await ok('/v1/model/bindings', { attribute_id: attributes[keys[k]], series_id: series[k], from_ns: first - 3600n * SEC });
  const BATCH = 50_000;
  for (let k = 0; k < keys.length; k++) {
    const p = Math.floor(k / ATTRIBUTES.length), a = k % ATTRIBUTES.length;
    for (let at = 0; at < n; at += BATCH) {
      const m = Math.min(BATCH, n - at);
      const times = new BigInt64Array(m), values = new Float64Array(m);
      for (let i = 0; i < m; i++) { times[i] = first + BigInt(at + i) * BigInt(stepS) * SEC; values[i] = valueAt(p, a, (at + i) * stepS); }
      const r = await collector.send('BACKFILL', k, 'float64', { times, values, quality: null });
      if (!r.ok) throw new Error(`batch refused: ${JSON.stringify(r)}`);
    }
  }
  return {
    assets, attributes, collector,
    async sendNow(key, value, ts = nowNs()) {
      const k = keys.indexOf(key);
      const r = await collector.send('LIVE', k, 'float64', { times: BigInt64Array.of(ts), values: Float64Array.of(value), quality: null });
      if (!r.ok) throw new Error(`live point refused: ${JSON.stringify(r)}`);
      return ts;
    },
  };
}
