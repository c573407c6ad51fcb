// Display documents for the displays tests: a valid document with every part the spec
// names (layers, scale groups, time, every range variant, trend bindings, an x bag holding
// integers past 2^53), built fresh for each use.
export interface DocOptions {
  name?: string;
  template?: string | null;
  traces?: unknown[];
  widgets?: unknown[];
  x?: Record<string, unknown>;
  time?: { start: string; end: string };
}

export function trace(attribute: unknown, label: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { attribute, continuity: 'continuous', label, pen: { glyph: 'circle', token: 'blue-1' }, scale_group: 'g1', ...extra };
}

export function displayDoc(o: DocOptions = {}): Record<string, unknown> {
  return {
    kind: 'display',
    meta: { layout: 'structured', name: o.name ?? 'Pump overview', description: null, form_factors: ['desktop'], template: o.template ?? null },
    service_display: '1.0',
    layers: [{ id: 'base', name: 'Base', visible: true }, { id: 'alarms', name: 'Alarms', visible: { kind: 'binding', expr: 'alarm > 0' } }],
    priority_order: ['t1'],
    scale_groups: [{ id: 'g1', min: null, max: null, mode: 'autofit' }, { id: 'g2', min: 0, max: 100, mode: 'explicit' }],
    time: { start: o.time?.start ?? '*-8h', end: o.time?.end ?? '*', navigator: { visible: true }, timezone: { mode: 'automatic' } },
    widgets: o.widgets ?? [
      { type: 'trend', id: 't1', layer: 'base', bindings: { kind: 'trend', traces: o.traces ?? [trace({ kind: 'template-relative', name: 'Flow' }, 'Flow')] }, range: { type: 'relative', last: '8h' }, x: { big: 9007199254740993n } },
      { type: 'value-tile', id: 'v1', bindings: { attribute: { kind: 'template-relative', name: 'Flow' } }, range: { type: 'absolute', start: 't', end: 't+6h' } },
    ],
    x: o.x ?? { vendor: { id: 12345678901234567890n, nested: [1, 'two', { three: 3 }] }, a: 1 },
  };
}
