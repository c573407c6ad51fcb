// Captures at close: each template attribute with a capture rule gets its value from the
// resolved attribute of the asset in the rule's role, over the episode [start, end). The
// point work runs in the read pool like any resolved read (readAt for the values at open
// and close, readSummary for min, max, avg and twa), so a capture reads exactly what
// POST /v1/read/at and /v1/read/summary would answer for the same window, across sensor
// swaps and in the template attribute's unit. A capture that finds no data is stored with
// a null value and the reason (no_value), never left out silently. Captures are the
// service's own computation: they do not depend on who closes the episode.
import type { ServiceContext } from '../service-context.js';
import { resolveRead, type ReadResolution } from '../reads/read-resolution.js';
import { unitPlans } from '../reads/read-units.js';
import { readTaskBase } from '../reads/read-plan.js';
import { parseJson } from '../json/json.js';
import { isServiceError } from '../errors.js';
import type { EpisodeTemplate } from './episode-templates.js';
import type { EpisodeAsset, EpisodeValue } from './episode-rules.js';
import { parseCapture } from './capture-rules.js';

interface AtItem { points: Array<{ value?: unknown; no_value?: string }> }
interface SummaryItem { intervals: Array<Record<string, unknown>> }

const STAT_OF = { min: 'min', max: 'max', avg: 'mean', twa: 'twa' } as const;

/** The attribute named `name` on exactly this asset (not one below it), over the window. */
async function attributeOn(service: ServiceContext, assetId: string, name: string, startNs: bigint, endNs: bigint): Promise<ReadResolution | null> {
  const r = await resolveRead(service, async () => true,
    { select: { kind: 'attributes_named', content: { name } }, scope: { under: { kind: 'asset_id', content: assetId } } },
    { startNs, endNs });
  const own = r.attributes.filter((a) => a.assetId === assetId);
  return own.length === 0 ? null : { ...r, attributes: own.slice(0, 1) };
}

/** Computes every captured attribute of the template for the episode's assets and window. */
export async function computeCaptures(service: ServiceContext, t: EpisodeTemplate, assets: EpisodeAsset[], startNs: bigint, endNs: bigint): Promise<Record<string, EpisodeValue>> {
  const out: Record<string, EpisodeValue> = {};
  for (const a of t.attributes) {
    if (a.capture === null) continue;
    const rule = parseCapture(a.name, a.capture);
    const asset = assets.find((x) => x.role === rule.role);
    if (!asset) { out[a.name] = { value: null, source: 'captured', no_value: `no asset in role ${rule.role}` }; continue; }
    if (endNs <= startNs) { out[a.name] = { value: null, source: 'captured', no_value: 'the episode has no duration' }; continue; }
    try {
      out[a.name] = await captureOne(service, a.unit_id, asset.asset_id, rule.attribute, rule.statistic, startNs, endNs);
    } catch (e) {
      // a unit that does not convert, or a read refused: the capture says why instead of failing the close
      if (!isServiceError(e) || e.status >= 500) throw e;
      out[a.name] = { value: null, source: 'captured', no_value: e.message };
    }
  }
  return out;
}

async function captureOne(service: ServiceContext, unitId: string | null, assetId: string, attribute: string, statistic: string, startNs: bigint, endNs: bigint): Promise<EpisodeValue> {
  const atEnds = statistic === 'at-open' || statistic === 'at-close';
  const r = await attributeOn(service, assetId, attribute, startNs, atEnds ? endNs + 1n : endNs);
  if (!r) return { value: null, source: 'captured', no_value: `asset ${assetId} has no attribute "${attribute}"` };
  const units = unitId === null || r.attributes[0].unitId === null ? undefined : { attributes: { [r.attributes[0].attributeId]: unitId } };
  const base = readTaskBase(r, await unitPlans(service, r.attributes, units), { format: 'json' });
  const pool = service.parts.readPool;
  if (atEnds) {
    const at = statistic === 'at-open' ? startNs : endNs;
    const body = await pool.run('readAt', { ...base, instants: [String(at)], grid: null });
    let item: AtItem;
    try { item = (parseJson(body.bytes) as AtItem[])[0]; } finally { body.release(); }
    const p = item?.points[0];
    if (!p || p.value === undefined) return { value: null, source: 'captured', no_value: p?.no_value ?? 'no value at this instant' };
    return { value: p.value, source: 'captured' };
  }
  const stat = STAT_OF[statistic as keyof typeof STAT_OF];
  const body = await pool.run('readSummary', { ...base, boundaries: [String(startNs), String(endNs)], stats: [stat], totals: [null], fragment: false });
  let item: SummaryItem;
  try { item = (parseJson(body.bytes) as SummaryItem[])[0]; } finally { body.release(); }
  const v = item?.intervals[0]?.[stat];
  if (v === null || v === undefined) return { value: null, source: 'captured', no_value: 'no stored point in the episode' };
  return { value: v, source: 'captured' };
}
