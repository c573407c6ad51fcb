// The member names of the enum sets a resolved read's enum series name, for the rows'
// `{enum_set, ordinal, member}` values (read workers have no model database, so the names
// travel with the task). Read from each set's registry entry as it is now (like the series
// routes: the registry says what an ordinal means) and kept per process until the next
// model commit of this process (registry entries change only through model transactions),
// so a read over many enum attributes costs no query once warm.
//
//   memberNamesOf(service, resolution) -> {enumSetId: {ordinal: name}} | undefined (no enum series)
import type { ServiceContext } from '../service-context.js';
import { onModelCommit } from '../model/tx-log.js';
import { enumMemberNames, type EnumMemberNames } from '../series/enum-members.js';
import type { ReadResolution } from './read-resolution.js';

/** Sets kept at most; past it the names are read again (sets are few in practice). */
const SETS_KEPT = 4_096;

const kept = new WeakMap<ServiceContext, { epoch: number; names: Map<string, EnumMemberNames> }>();
/** Moved by every model commit of this process. */
let epoch = 0;
let listening = false;

/** The service's kept names of the current epoch (older ones are dropped here). */
function keptNames(service: ServiceContext): Map<string, EnumMemberNames> {
  if (!listening) {
    listening = true;
    onModelCommit(() => { epoch++; });
  }
  let held = kept.get(service);
  if (held === undefined) { held = { epoch, names: new Map() }; kept.set(service, held); }
  if (held.epoch !== epoch) { held.names.clear(); held.epoch = epoch; }
  return held.names;
}

export async function memberNamesOf(service: ServiceContext, r: ReadResolution): Promise<Record<string, EnumMemberNames> | undefined> {
  let sets: Set<string> | null = null;
  for (const a of r.attributes) {
    for (const s of a.segments) {
      if (s.valueType === 'enum' && s.enumSetId !== null) (sets ??= new Set()).add(s.enumSetId);
    }
  }
  if (sets === null) return undefined;
  const out: Record<string, EnumMemberNames> = {};
  for (const id of sets) {
    let names = keptNames(service).get(id);
    if (names === undefined) {
      const at = epoch;
      names = await enumMemberNames(service.db, id);
      // a commit while reading: the names may be older than it, so they are used once and not kept
      if (at === epoch) {
        const cache = keptNames(service);
        if (cache.size >= SETS_KEPT) cache.clear();
        cache.set(id, names);
      }
    }
    out[id] = names;
  }
  return out;
}
