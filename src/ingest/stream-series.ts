// The series behind each stream a collector declares (main thread, at session open).
// A stream naming a series must name an existing one of its type; a stream without one
// gets (once) a staging series named "<collector_id>/<stream name>" of the declared type,
// through the series catalogue, so a reconnect finds the same series again. An ENUM
// stream names its enum set (a registry entry, by name or UUID): the staging series is
// created with that set's ordinals, and a named series must carry that set.
import type { ServiceContext } from '../service-context.js';
import type { Queryable } from '../model/db.js';
import type { OpenSessionArg, StreamOutcome } from './thread-messages.js';
import { UUID_RE } from '../uuid.js';


export function stagingSourceName(collectorId: string, stream: string): string {
  return `${collectorId}/${stream}`;
}

interface EnumSet {
  id: string;
  name: string;
  ordinals: number[];
}

/** The current registry enum set with this UUID or exact name, or null. */
async function enumSetNamed(q: Queryable, ref: string): Promise<EnumSet | null> {
  const byId = UUID_RE.test(ref);
  const { rows } = await q.query<{ entry_id: string; name: string; members: unknown }>(
    `SELECT entry_id, name, members FROM registry_entry_version
      WHERE kind = 'enum-sets' AND tx_to IS NULL AND ${byId ? 'entry_id = $1::uuid' : 'name = $1'}`, [ref]);
  const row = rows[0];
  if (!row) return null;
  const members = row.members; // jsonb arrives parsed (db.ts)
  const ordinals = Array.isArray(members) ? members.map((m) => Number((m as { ordinal: unknown }).ordinal)).filter((o) => Number.isInteger(o)) : [];
  return { id: row.entry_id, name: row.name, ordinals };
}

/**
 * The outcome of every declared stream, in order. Streams naming a series are checked
 * against the records looked up together; the others are found or created through
 * SeriesCatalogue.ensureManyForSource, in batches of one model transaction each, so a
 * session declaring thousands of new streams costs a few transactions, and a reconnect
 * with known streams a few lookups and no transaction. A refusal is per stream.
 */
export async function resolveStreams(context: ServiceContext, arg: OpenSessionArg): Promise<StreamOutcome[]> {
  const catalogue = context.parts.series;
  const out: StreamOutcome[] = new Array(arg.streams.length);
  const refuse = (refusal: string, seriesId: string | null = null): StreamOutcome => ({ accepted: false, seriesId, refusal });
  const sets = new Map<string, EnumSet | null>();
  for (const s of arg.streams) {
    if (s.enumSet && !sets.has(s.enumSet)) sets.set(s.enumSet, await enumSetNamed(context.db, s.enumSet));
  }
  const named: number[] = [], staging: number[] = [];
  arg.streams.forEach((s, i) => {
    const set = s.enumSet ? sets.get(s.enumSet) ?? null : null;
    if (s.enumSet && !set) out[i] = refuse(`enum set "${s.enumSet}" is not in the registry`);
    else if (s.seriesId) named.push(i);
    else if (s.type === 'enum' && !set) out[i] = refuse('an enum stream names its enum set (enum_set) or an existing enum series (series_id)');
    else staging.push(i);
  });
  const setOf = (i: number) => { const ref = arg.streams[i].enumSet; return ref ? sets.get(ref) ?? null : null; };

  const records = await catalogue.getMany(named.map((i) => arg.streams[i].seriesId as string));
  for (const i of named) {
    const s = arg.streams[i], set = setOf(i);
    const rec = records.get((s.seriesId as string).toLowerCase());
    if (!rec) out[i] = refuse(`series ${s.seriesId} does not exist`);
    else if (rec.valueType !== s.type) out[i] = refuse(`series ${rec.id} is ${rec.valueType}, the stream declares ${s.type}`, rec.id);
    else if (set && rec.enumSetId !== set.id) out[i] = refuse(`series ${rec.id} uses enum set ${rec.enumSetId}, the stream declares ${set.name} (${set.id})`, rec.id);
    else out[i] = { accepted: true, seriesId: rec.id, refusal: null };
  }

  const ensured = await catalogue.ensureManyForSource(staging.map((i) => {
    const s = arg.streams[i], set = setOf(i);
    return { sourceName: stagingSourceName(arg.collectorId, s.name), valueType: s.type, writableClass: 'collector', ...(set ? { enumSet: { id: set.id, ordinals: set.ordinals } } : {}) };
  }), { principal: arg.identity, reason: `collector ${arg.collectorId} declared ${staging.length === 1 ? `stream ${arg.streams[staging[0]].name}` : `${arg.streams.length} streams`}` });
  staging.forEach((i, j) => {
    const e = ensured[j], set = setOf(i);
    if (e.error) out[i] = refuse(e.error.message);
    else if (set && e.record.enumSetId !== set.id) out[i] = refuse(`staging series ${e.record.id} uses enum set ${e.record.enumSetId}, the stream declares ${set.name} (${set.id})`, e.record.id);
    else out[i] = { accepted: true, seriesId: e.record.id, refusal: null, created: e.created };
  });
  return out;
}
