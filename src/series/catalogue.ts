// The internal API for series records: create (routes, ingest for streams that arrive
// without a series: they land in staging), look up, change the writable class, and say
// which scope a series belongs to. Model and LMDB meta are kept in agreement by creating
// the LMDB meta inside the model transaction, before it commits: if the model commit
// then fails, the orphan meta is invisible (every route looks the series up in the model
// first) and a retry with the same uuid is a no-op in the engine.
import { randomUUID } from 'node:crypto';
import type { Db } from '../model/db.js';
import { modelTransaction, type Who } from '../model/tx-log.js';
import { nowNs } from '../clock.js';
import { ServiceError, invalid } from '../errors.js';
import type { AccessTarget } from '../auth/access-types.js';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { EnumSetRef, SeriesStore } from '../storage/series-store.js';
import {
  insertSeriesRow, listSeriesRows, seriesById, seriesBySourceName, updateWritableClassRow,
  SOURCE_NAME_MAX, VALUE_TYPES, type SeriesRecord, type SeriesRowFilter,
} from './records.js';
import { SeriesLookups } from './series-lookups.js';
import { UUID_RE } from '../uuid.js';
import { checkWriterClass } from '../model/vocabularies.js';

export interface CreateSeriesInput {
  /** A caller-chosen uuid (idempotent re-creation); a fresh one when absent. */
  id?: string;
  sourceName: string;
  valueType: ValueType;
  /** Required for enum series: the enum set and the ordinals its points may carry. */
  enumSet?: EnumSetRef;
  /** Default 'collector': points come from a collector stream. */
  writableClass?: string;
}


function checkInput(s: CreateSeriesInput): void {
  if (s.id !== undefined && !UUID_RE.test(s.id)) throw invalid('id', 'must be a UUID');
  if (typeof s.sourceName !== 'string' || s.sourceName.length === 0 || s.sourceName.length > SOURCE_NAME_MAX) throw invalid('source_name', `must be 1..${SOURCE_NAME_MAX} characters`);
  if (!VALUE_TYPES.includes(s.valueType)) throw invalid('value_type', `must be one of ${VALUE_TYPES.join(', ')}`);
  if ((s.valueType === 'enum') !== (s.enumSet !== undefined)) throw invalid('enum_set', 'is required for enum series and only for them');
  if (s.enumSet && !UUID_RE.test(s.enumSet.id)) throw invalid('enum_set.id', 'must be a UUID');
  if (s.writableClass !== undefined) checkWriterClass('writable_class', s.writableClass);
}

export class SeriesCatalogue {
  /** Records and scopes cached in process, invalidated by every model commit (series-lookups.ts). */
  private readonly lookups: SeriesLookups;

  constructor(private readonly db: Db, private readonly store: SeriesStore) {
    this.lookups = new SeriesLookups(db);
  }

  close(): void {
    this.lookups.close();
  }

  /** Creates a series in staging; a taken source name is 409 name-conflict. */
  async create(input: CreateSeriesInput, who: Who): Promise<SeriesRecord> {
    const r = await this.createOrFind(input, who, false);
    return r.record;
  }

  /**
   * Find-or-create by source name, for ingest: a stream that arrives without a series
   * gets one of its declared type. An existing series of another type is a conflict.
   */
  async ensureForSource(input: CreateSeriesInput, who: Who): Promise<{ record: SeriesRecord; created: boolean }> {
    return this.createOrFind(input, who, true);
  }

  private async createOrFind(input: CreateSeriesInput, who: Who, reuse: boolean): Promise<{ record: SeriesRecord; created: boolean }> {
    checkInput(input);
    if (reuse) {
      const found = await seriesBySourceName(this.db, input.sourceName);
      if (found) return { record: this.sameType(found, input), created: false };
    }
    const id = (input.id ?? randomUUID()).toLowerCase();
    const writableClass = input.writableClass ?? 'collector';
    let raced: SeriesRecord | null = null;
    const committed = await modelTransaction(this.db, { principal: who.principal, reason: who.reason ?? `create series ${input.sourceName}` }, async (tx, txId, events) => {
      const row = await insertSeriesRow(tx, txId, { id, sourceName: input.sourceName, valueType: input.valueType, enumSetId: input.enumSet?.id ?? null, writableClass, createdNs: nowNs() });
      if (!row) {
        raced = await seriesBySourceName(tx, input.sourceName);
        if (!reuse || !raced) throw new ServiceError('name-conflict', `source_name: a series named ${input.sourceName} already exists`, { field: 'source_name', series: raced?.id ?? null });
        return null;
      }
      await this.store.createSeries({ id, type: input.valueType, enumSet: input.enumSet, writableClass });
      events.emit('series', id, 'created', { source_name: input.sourceName, value_type: input.valueType, enum_set_id: input.enumSet?.id ?? null, writable_class: writableClass });
      return row;
    });
    if (committed.result) return { record: committed.result, created: true };
    return { record: this.sameType(raced as unknown as SeriesRecord, input), created: false };
  }

  private sameType(found: SeriesRecord, input: CreateSeriesInput): SeriesRecord {
    if (found.valueType !== input.valueType) {
      throw new ServiceError('conflict', `series ${found.sourceName} exists with value type ${found.valueType}, not ${input.valueType}`, { series: found.id, value_type: found.valueType });
    }
    return found;
  }

  /** The record (cached; frozen, shared by every caller), or null. */
  get(id: string): Promise<SeriesRecord | null> {
    return this.lookups.record(id.toLowerCase());
  }

  /** The record, or 404 not-found naming the series. */
  async require(id: string): Promise<SeriesRecord> {
    const r = await this.get(id);
    if (!r) throw new ServiceError('not-found', `series ${id} not found`, { series: id });
    return r;
  }

  list(filter: SeriesRowFilter): Promise<SeriesRecord[]> {
    return listSeriesRows(this.db, filter);
  }

  /** Owning asset through the current binding, else the staging root. */
  scopeOf(id: string): Promise<AccessTarget> {
    return this.lookups.scope(id.toLowerCase());
  }

  async setWritableClass(id: string, writableClass: string, who: Who): Promise<SeriesRecord> {
    checkWriterClass('writable_class', writableClass);
    const committed = await modelTransaction(this.db, { principal: who.principal, reason: who.reason ?? `set writable class of series ${id}` }, async (tx, txId, events) => {
      const before = await seriesById(tx, id);
      if (!before) throw new ServiceError('not-found', `series ${id} not found`, { series: id });
      const row = await updateWritableClassRow(tx, txId, id, writableClass);
      await this.store.setWritableClass(id, writableClass);
      events.emit('series', id, 'writable-class-changed', { from: before.writableClass, to: writableClass });
      return row as SeriesRecord;
    });
    return committed.result;
  }
}
