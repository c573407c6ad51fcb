// include_episodes on the resolved reads: each attribute's result gets `episodes`, the
// episodes over its asset that overlap the read's window (at the instant, for snapshot),
// in start order. `include_episodes` is `true`, or `{template_ids?, states?}` to narrow
// them (states default open and closed, as the query's). Episodes the caller may not read
// are left out, as everywhere else. With `resolve.as_of_ns` they are the episodes as the
// model knew them then, like the attributes the read resolved.
import type { ReadAttacher, AttachWindow } from '../reads/read-attachments.js';
import { invalid } from '../../../errors.js';
import { isUuid } from '../../../uuid.js';
import { queryEpisodes } from '../../../episodes/episode-query.js';
import { readTxFor } from '../../../model/versions/history.js';
import type { EpisodeState } from '../../../episodes/episode-store.js';
import { episodesOf } from './episode-access.js';
import { readable } from './query-route.js';

/** Most episodes one read attaches in all; past it the read is refused (narrow the window or the templates). */
const MAX_ATTACHED = 10_000;
const STATES = new Set<EpisodeState>(['open', 'closed', 'void']);

interface Wanted { templateIds: string[] | null; states: EpisodeState[] }

function wantedOf(v: unknown): Wanted {
  if (v === true) return { templateIds: null, states: ['open', 'closed'] };
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid('include_episodes', 'true, or an object {template_ids?, states?}');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'template_ids' && k !== 'states') throw invalid(`include_episodes/${k}`, 'unknown member (template_ids and states are known)');
  let templateIds: string[] | null = null;
  if (o.template_ids !== undefined) {
    if (!Array.isArray(o.template_ids) || o.template_ids.length === 0 || !o.template_ids.every(isUuid)) throw invalid('include_episodes/template_ids', 'a non-empty array of template ids');
    templateIds = o.template_ids as string[];
  }
  let states: EpisodeState[] = ['open', 'closed'];
  if (o.states !== undefined) {
    if (!Array.isArray(o.states) || o.states.length === 0 || !o.states.every((s) => STATES.has(s as EpisodeState))) throw invalid('include_episodes/states', 'a non-empty array of open, closed, void');
    states = o.states as EpisodeState[];
  }
  return { templateIds, states };
}

function rangeOf(w: AttachWindow): { startNs: bigint; endNs: bigint } {
  return 'atNs' in w ? { startNs: w.atNs, endNs: w.atNs + 1n } : w;
}

export const episodesAttacher: ReadAttacher = {
  member: 'episodes',
  wanted: (body) => body.include_episodes !== undefined && body.include_episodes !== false && body.include_episodes !== null,
  async collect(ctx, attributes, window, body) {
    const want = wantedOf(body.include_episodes);
    const out = new Map<string, unknown>();
    if (attributes.length === 0) return out;
    const { db } = episodesOf(ctx);
    const assetIds = [...new Set(attributes.map((a) => a.assetId))];
    const asOfNs = (body.resolve as { as_of_ns?: number | bigint } | undefined)?.as_of_ns;
    const tx = await readTxFor(db, asOfNs);
    const page = await queryEpisodes(db, { templateIds: want.templateIds, assetIds, overlaps: rangeOf(window), states: want.states, attributes: [], after: null, limit: MAX_ATTACHED, tx });
    if (page.more) throw invalid('include_episodes', `more than ${MAX_ATTACHED} episodes overlap the window on these assets; narrow the window, the selection or include_episodes.template_ids`);
    const byAsset = new Map<string, unknown[]>();
    for (const e of await readable(ctx, page.items)) {
      for (const assetId of new Set(e.assets.map((a) => a.asset_id))) {
        const list = byAsset.get(assetId) ?? [];
        list.push({
          id: e.id, name: e.name, template_id: e.template_id, template: e.template, state: e.state, start_ns: e.start_ns, end_ns: e.end_ns,
          roles: e.assets.filter((a) => a.asset_id === assetId).map((a) => a.role),
        });
        byAsset.set(assetId, list);
      }
    }
    for (const a of attributes) out.set(a.attributeId, byAsset.get(a.assetId) ?? []);
    return out;
  },
};
