// The series behind each stream a collector declares (main thread, at session open).
// A stream naming a series must name an existing one of its type; a stream without one
// gets (once) a staging series named "<collector_id>/<stream name>" of the declared type,
// through the series catalogue, so a reconnect finds the same series again.
import type { ServiceContext } from '../service-context.js';
import { ServiceError } from '../http/errors.js';
import type { OpenSessionArg, StreamOutcome } from './thread-messages.js';

export function stagingSourceName(collectorId: string, stream: string): string {
  return `${collectorId}/${stream}`;
}

export async function resolveStreams(context: ServiceContext, arg: OpenSessionArg): Promise<StreamOutcome[]> {
  const catalogue = context.parts.series;
  const out: StreamOutcome[] = [];
  const refuse = (refusal: string): StreamOutcome => ({ accepted: false, seriesId: null, refusal });
  for (const s of arg.streams) {
    if (s.seriesId) {
      const rec = await catalogue.get(s.seriesId);
      if (!rec) out.push(refuse(`series ${s.seriesId} does not exist`));
      else if (rec.valueType !== s.type) out.push({ accepted: false, seriesId: rec.id, refusal: `series ${rec.id} is ${rec.valueType}, the stream declares ${s.type}` });
      else out.push({ accepted: true, seriesId: rec.id, refusal: null });
      continue;
    }
    if (s.type === 'enum') {
      // An enum series needs its enum set (ordinals), which a stream declaration does not carry.
      out.push(refuse('an enum stream must name an existing enum series (series_id)'));
      continue;
    }
    try {
      const { record } = await catalogue.ensureForSource(
        { sourceName: stagingSourceName(arg.collectorId, s.name), valueType: s.type, writableClass: 'collector' },
        { principal: arg.identity, reason: `collector ${arg.collectorId} declared stream ${s.name}` },
      );
      out.push({ accepted: true, seriesId: record.id, refusal: null });
    } catch (e) {
      if (!(e instanceof ServiceError)) throw e;
      out.push(refuse(e.message));
    }
  }
  return out;
}
