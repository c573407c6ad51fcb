// The plant calculation tests run on: a Pump template (Suction and Discharge pressures in
// bar, Flow in m³/h, and outputs Head and Ratio written by calculations), pumps under
// /Plant, and a real gRPC collector whose streams are bound to the pumps' inputs.
import type { Test } from 'tap';
import { startTestService, request, type TestService } from '../helpers/service.js';
import { connect } from '../helpers/ingest.js';
import type { CollectorClient } from '../../src/collector/collector-client.js';
import { systemEntryId } from '../../src/model/registries/system-seed.js';

export const SEC = 1_000_000_000n;
export const PRESSURE = systemEntryId('quantity-kinds', 'Pressure');
export const FLOW = systemEntryId('quantity-kinds', 'Volume flow rate');
export const BAR = systemEntryId('units', 'bar');
export const M3H = systemEntryId('units', 'cubic metre per hour');

const def = (name: string, kind: string | null, unit: string | null, writer = 'collector') => ({
  name, quantity_kind_id: kind, default_unit_id: unit, continuity_class: 'stepped', writer_class: writer, enum_set_id: null,
  limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [],
});

export interface Plant {
  svc: TestService;
  api: <T = Record<string, unknown>>(method: string, path: string, body?: unknown, status?: number) => Promise<T>;
  call: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: unknown; text: string }>;
  templateId: string;
  defs: Record<string, string>;
  pumps: Array<{ assetId: string; attrs: Record<string, string>; series: Record<string, string> }>;
  collector: CollectorClient;
  /** Stream index of (pump, input) in the collector. */
  stream(pump: number, input: 'Suction' | 'Discharge' | 'Flow'): number;
}

export const INPUTS = ['Suction', 'Discharge', 'Flow'] as const;

export async function startPlant(t: Test, pumps = 2, env: Record<string, string> = {}, dataDir?: string): Promise<Plant> {
  const svc = await startTestService(t, { env: { ...env, ...(dataDir ? { SERVICE_DATA_DIR: dataDir } : {}) } });
  return plantOn(t, svc, pumps);
}

export async function plantOn(t: Test, svc: TestService, pumps: number): Promise<Plant> {
  const call = (method: string, path: string, body?: unknown) => request(svc.url + path, { method, body });
  const api = async <T>(method: string, path: string, body?: unknown, status = 200): Promise<T> => {
    const r = await call(method, path, body);
    if (r.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${r.status}: ${r.text}`);
    return r.json as T;
  };
  const tpl = await api<{ template_id: string; attributes: Array<[string, { name: string }]> }>('POST', '/v1/model/templates', {
    name: 'Pump', attributes: [def('Suction', PRESSURE, BAR), def('Discharge', PRESSURE, BAR), def('Flow', FLOW, M3H),
      def('Head', PRESSURE, BAR, 'calculation'), def('Ratio', null, null, 'calculation'), def('Running', null, null, 'calculation'),
      def('Mean', PRESSURE, BAR, 'calculation'), def('Alarm', null, null, 'calculation')],
  }, 201);
  const defs = Object.fromEntries(tpl.attributes.map(([id, d]) => [d.name, id]));
  const plant = await api<{ asset_id: string }>('POST', '/v1/model/assets', { name: 'Plant' });
  const out: Plant['pumps'] = [];
  for (let i = 0; i < pumps; i++) {
    const a = await api<{ asset_id: string }>('POST', '/v1/model/assets', { name: `P${i + 1}`, parent: plant.asset_id, template_id: tpl.template_id });
    out.push({ assetId: a.asset_id, attrs: {}, series: {} });
  }
  const attrs = (await api<{ results: Array<{ attribute_id: string; asset_id: string; name: string }> }>('POST', '/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } })).results;
  for (const a of attrs) { const p = out.find((x) => x.assetId === a.asset_id); if (p) p.attrs[a.name] = a.attribute_id; }
  const streams = out.flatMap((_, i) => INPUTS.map((n) => ({ name: `p${i + 1}.${n}`, type: 'float64' as const })));
  const collector = await connect(svc, { collectorId: 'calc-line', streams });
  t.teardown(() => collector.close());
  const ids = collector.welcome.streams.map((s) => s.series_id);
  for (const [i, p] of out.entries()) {
    for (const [k, n] of INPUTS.entries()) {
      p.series[n] = ids[i * INPUTS.length + k];
      await api('POST', '/v1/model/bindings', { attribute_id: p.attrs[n], series_id: p.series[n], from_ns: 0 }, 201);
    }
  }
  return {
    svc, api, call, templateId: tpl.template_id, defs, pumps: out, collector,
    stream: (pump, input) => pump * INPUTS.length + INPUTS.indexOf(input),
  };
}

/** A rule body on the Pump template writing `output`. */
export function templateRule(p: Plant, name: string, output: string, expression: string, extra: Record<string, unknown> = {}) {
  return {
    name, scope: { template_id: p.templateId, output_attr_def_id: p.defs[output] }, tier: 'expression',
    trigger: { kind: 'event', debounce_ms: 0 }, unit_check: 'strict', provisional: 'emit', expression, ...extra,
  };
}

/** Sends points (exact times, values) to one stream and waits for the ack. */
export async function sendPoints(p: Plant, stream: number, times: bigint[], values: number[]): Promise<void> {
  const r = await p.collector.send('LIVE', stream, 'float64', { times: BigInt64Array.from(times), values: Float64Array.from(values), quality: null });
  if (!r.ok) throw new Error(`batch refused: ${JSON.stringify(r)}`);
}
