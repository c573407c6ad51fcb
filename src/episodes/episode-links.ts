// Genealogy: typed, directed links between episodes (a lot consumed-by a batch, a batch
// produced-from lots), each type a link-types registry entry, and the walk along them
// ("which batches used this lot?"). Links are versioned like the rest of the model.
// The walk is breadth first, one query per hop over the whole frontier, and ends at
// episodes already reached, so a cycle in the links ends it instead of looping.
import { randomUUID } from 'node:crypto';
import { type Db, type Queryable, sqlTextArray } from '../model/db.js';
import { modelTransaction, type Who } from '../model/tx-log.js';
import { SqlArgs, validAt, isUniqueViolation, type ReadTx } from '../model/versions/history.js';
import { ServiceError, invalid } from '../errors.js';
import { registryEntryId } from './episode-templates.js';

export interface EpisodeLink {
  link_id: string;
  from_episode: string;
  to_episode: string;
  link_type: string;
  link_type_id: string;
  tx_id: bigint;
}

interface LinkRow { link_id: string; from_episode: string; to_episode: string; link_type_id: string; link_type: string | null; tx_from: bigint }
const toLink = (r: LinkRow): EpisodeLink => ({
  link_id: r.link_id, from_episode: r.from_episode, to_episode: r.to_episode, link_type: r.link_type ?? r.link_type_id, link_type_id: r.link_type_id, tx_id: r.tx_from,
});
const LINK_SELECT = `SELECT l.link_id, l.from_episode, l.to_episode, l.link_type_id, r.name AS link_type, l.tx_from
  FROM episode_link_version l LEFT JOIN registry_entry_version r ON r.entry_id = l.link_type_id AND r.tx_to IS NULL`;

/**
 * Links episode `from` to episode `to` with a link type (registry name or id). Both ends
 * must exist; a link already there with the same type is a 409.
 */
export async function createEpisodeLink(db: Db, who: Who, from: string, to: string, linkType: string): Promise<EpisodeLink> {
  if (from === to) throw invalid('to_episode', 'a link joins two different episodes');
  const c = await modelTransaction(db, who, async (q, txId, events) => {
    const type = await registryEntryId(q, 'link-types', linkType);
    if (!type) throw invalid('link_type', `no link-types registry entry named or numbered "${linkType}"`);
    const { rows } = await q.query<{ episode_id: string }>('SELECT episode_id FROM episode_version WHERE tx_to IS NULL AND episode_id = ANY($1::uuid[])', [sqlTextArray([from, to])]);
    if (!rows.some((r) => r.episode_id === to)) throw invalid('to_episode', `no episode ${to}`);
    if (!rows.some((r) => r.episode_id === from)) throw new ServiceError('not-found', `episode ${from} not found`);
    const id = randomUUID();
    try {
      await q.query('INSERT INTO episode_link_version (link_id, from_episode, to_episode, link_type_id, tx_from) VALUES ($1, $2, $3, $4, $5)', [id, from, to, type.id, txId]);
    } catch (e) {
      if (isUniqueViolation(e, 'episode_link_unique')) throw new ServiceError('conflict', `episode ${from} is already linked to ${to} with ${type.name}`);
      throw e;
    }
    events.emit('episode-link', id, 'created', { from_episode: from, to_episode: to, link_type_id: type.id });
    return id;
  });
  const { rows } = await db.query<LinkRow>(`${LINK_SELECT} WHERE l.link_id = $1 AND l.tx_to IS NULL`, [c.result]);
  return toLink(rows[0]);
}

/** Links of an episode (outgoing and incoming) at the read transaction. */
export async function linksOfEpisode(q: Queryable, tx: ReadTx, id: string): Promise<EpisodeLink[]> {
  const args = new SqlArgs();
  const valid = validAt('l', tx, args);
  const p = args.add(id);
  const { rows } = await q.query<LinkRow>(`${LINK_SELECT} WHERE ${valid} AND NOT l.retired AND (l.from_episode = ${p} OR l.to_episode = ${p}) ORDER BY l.tx_from, l.link_id`, args.values);
  return rows.map(toLink);
}

export type Direction = 'upstream' | 'downstream' | 'both';

export interface Walk {
  /** Reached episodes with their hop count from the nearest start (starts at 0). */
  reached: Map<string, number>;
  links: EpisodeLink[];
  /** True when the depth bound stopped the walk with links still unexplored. */
  truncated: boolean;
}

/**
 * Walks links from the starts: downstream follows from → to, upstream to → from. Only
 * link types in `types` (ids) when given. `visible` decides which episodes the caller
 * may see: the walk neither reports nor passes through the others, so nothing about them
 * leaks (not even that a path runs through them).
 */
export async function walkEpisodes(q: Queryable, starts: string[], direction: Direction, depth: number, types: string[] | null,
  visible: (ids: string[]) => Promise<Set<string>>): Promise<Walk> {
  const reached = new Map<string, number>(starts.map((s) => [s, 0]));
  const links = new Map<string, EpisodeLink>();
  let frontier = [...starts];
  let truncated = false;
  for (let hop = 1; frontier.length > 0; hop++) {
    const args = new SqlArgs();
    const f = args.add(sqlTextArray(frontier));
    const ends = direction === 'downstream' ? `l.from_episode = ANY(${f}::uuid[])`
      : direction === 'upstream' ? `l.to_episode = ANY(${f}::uuid[])`
        : `(l.from_episode = ANY(${f}::uuid[]) OR l.to_episode = ANY(${f}::uuid[]))`;
    const typeFilter = types === null ? '' : ` AND l.link_type_id = ANY(${args.add(sqlTextArray(types))}::uuid[])`;
    const { rows } = await q.query<LinkRow>(`${LINK_SELECT} WHERE l.tx_to IS NULL AND NOT l.retired AND ${ends}${typeFilter}`, args.values);
    if (hop > depth) { truncated = rows.some((r) => !links.has(r.link_id)); break; }
    const inFrontier = new Set(frontier);
    const candidates: string[] = [];
    for (const r of rows) {
      for (const other of [r.from_episode, r.to_episode]) {
        if (!inFrontier.has(other) && !reached.has(other)) candidates.push(other);
      }
    }
    const seeable = await visible([...new Set(candidates)]);
    const next: string[] = [];
    for (const r of rows) {
      const far = direction === 'downstream' ? [r.to_episode] : direction === 'upstream' ? [r.from_episode] : [r.from_episode, r.to_episode];
      const near = direction === 'downstream' ? r.from_episode : direction === 'upstream' ? r.to_episode : null;
      if (near !== null && !inFrontier.has(near)) continue;
      const ok = far.every((x) => reached.has(x) || seeable.has(x));
      if (!ok) continue;
      links.set(r.link_id, toLink(r));
      for (const x of far) if (!reached.has(x)) { reached.set(x, hop); next.push(x); }
    }
    frontier = next;
  }
  return { reached, links: [...links.values()], truncated };
}
