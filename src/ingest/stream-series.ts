// The series behind each stream a collector declares (main thread, at session open).
// A stream naming a series must name an existing one of its type; a stream without one
// gets (once) a staging series named "<collector_id>/<stream name>" of the declared type,
// through the series catalogue, so a reconnect finds the same series again. An ENUM
// stream names its enum set (a registry entry, by name or UUID): the staging series is
// created with that set's ordinals, and a named series must carry that set.
import type { ServiceContext } from '../service-context.js';
import type { Queryable } from '../model/db.js';
import { ServiceError } from '../errors.js';
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

export async function resolveStreams(context: ServiceContext, arg: OpenSessionArg): Promise<StreamOutcome[]> {
  const catalogue = context.parts.series;
  const out: StreamOutcome[] = [];
  const refuse = (refusal: string, seriesId: string | null = null): StreamOutcome => ({ accepted: false, seriesId, refusal });
  const sets = new Map<string, EnumSet | null>();
  const enumSet = async (ref: string) => {
    if (!sets.has(ref)) sets.set(ref, await enumSetNamed(context.db, ref));
    return sets.get(ref) ?? null;
  };
  for (const s of arg.streams) {
    const set = s.enumSet ? await enumSet(s.enumSet) : null;
    if (s.enumSet && !set) { out.push(refuse(`enum set "${s.enumSet}" is not in the registry`)); continue; }
    if (s.seriesId) {
      const rec = await catalogue.get(s.seriesId);
      if (!rec) out.push(refuse(`series ${s.seriesId} does not exist`));
      else if (rec.valueType !== s.type) out.push(refuse(`series ${rec.id} is ${rec.valueType}, the stream declares ${s.type}`, rec.id));
      else if (set && rec.enumSetId !== set.id) out.push(refuse(`series ${rec.id} uses enum set ${rec.enumSetId}, the stream declares ${set.name} (${set.id})`, rec.id));
      else out.push({ accepted: true, seriesId: rec.id, refusal: null });
      continue;
    }
    if (s.type === 'enum' && !set) {
      out.push(refuse('an enum stream names its enum set (enum_set) or an existing enum series (series_id)'));
      continue;
    }
    try {
      const { record } = await catalogue.ensureForSource(
        { sourceName: stagingSourceName(arg.collectorId, s.name), valueType: s.type, writableClass: 'collector', ...(set ? { enumSet: { id: set.id, ordinals: set.ordinals } } : {}) },
        { principal: arg.identity, reason: `collector ${arg.collectorId} declared stream ${s.name}` },
      );
      if (set && record.enumSetId !== set.id) out.push(refuse(`staging series ${record.id} uses enum set ${record.enumSetId}, the stream declares ${set.name} (${set.id})`, record.id));
      else out.push({ accepted: true, seriesId: record.id, refusal: null });
    } catch (e) {
      if (!(e instanceof ServiceError)) throw e;
      out.push(refuse(e.message));
    }
  }
  return out;
}
